// seed.go: seeds the simulator's content libraries through its own SOAP and REST endpoints (loopback).
//
// Owns: library "vmop-images" (OVF item "vmop-tiny-ovf" + VM-template item "vmop-tiny-tmpl") and library
// "vmop-cluster-images" (OVF item "vmop-cluster-ovf"), and with -extra-libraries N libraries "vmop-extra-NN"
// (OVF item "vmop-extra-NN-ovf" each). The template item is made the way vCenter makes one:
// deploy the OVF item to a scratch VM, create the vm-template item from it (the simulator clones it into a
// template VM named like the item), then destroy the scratch VM. Sessions are logged out at the end.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/library"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/vcenter"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const maxOVFSize = 1 << 20

// uploadOVF creates an OVF library item holding desc as "<name>.ovf".
func uploadOVF(ctx context.Context, rc *rest.Client, lm *library.Manager, libID, name string, desc []byte) (string, error) {
	itemID, err := lm.CreateLibraryItem(ctx, library.Item{Name: name, Type: library.ItemTypeOVF, LibraryID: libID})
	if err != nil {
		return "", fmt.Errorf("create item %s: %w", name, err)
	}
	sid, err := lm.CreateLibraryItemUpdateSession(ctx, library.Session{LibraryItemID: itemID})
	if err != nil {
		return "", fmt.Errorf("update session for %s: %w", name, err)
	}
	f, err := lm.AddLibraryItemFile(ctx, sid, library.UpdateFile{Name: name + ".ovf", SourceType: "PUSH", Size: int64(len(desc))})
	if err != nil {
		return "", fmt.Errorf("add file to %s: %w", name, err)
	}
	if f.UploadEndpoint == nil {
		return "", fmt.Errorf("no upload endpoint for %s", name)
	}
	u, err := url.Parse(f.UploadEndpoint.URI)
	if err != nil {
		return "", err
	}
	p := soap.DefaultUpload
	p.ContentLength = int64(len(desc))
	if err := rc.Upload(ctx, bytes.NewReader(desc), u, &p); err != nil {
		return "", fmt.Errorf("upload %s: %w", name, err)
	}
	if err := lm.CompleteLibraryItemUpdateSession(ctx, sid); err != nil {
		return "", fmt.Errorf("complete %s: %w", name, err)
	}
	return itemID, nil
}

func seedLibraries(sdk *url.URL, r *readyLine, ovfPath string, extra int) ([]libraryInfo, *types.ManagedObjectReference, error) {
	if ovfPath == "" {
		return nil, nil, fmt.Errorf("no OVF descriptor: pass -ovf")
	}
	desc, err := os.ReadFile(ovfPath)
	if err != nil {
		return nil, nil, err
	}
	if len(desc) > maxOVFSize {
		return nil, nil, fmt.Errorf("%s is over %d bytes", ovfPath, maxOVFSize)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	u := *sdk // carries the user and password
	c, err := govmomi.NewClient(ctx, &u, true)
	if err != nil {
		return nil, nil, fmt.Errorf("SOAP login: %w", err)
	}
	defer func() { _ = c.Logout(context.Background()) }()
	rc := rest.NewClient(c.Client)
	if err := rc.Login(ctx, u.User); err != nil {
		return nil, nil, fmt.Errorf("REST login: %w", err)
	}
	defer func() { _ = rc.Logout(context.Background()) }()
	lm := library.NewManager(rc)
	vm := vcenter.NewManager(rc)

	ds := r.Morefs["datastore"]
	mkLib := func(name, desc string) (string, error) {
		return lm.CreateLibrary(ctx, library.Library{
			Name:        name,
			Description: &desc,
			Type:        "LOCAL",
			Storage:     []library.StorageBacking{{DatastoreID: ds, Type: "DATASTORE"}},
		})
	}

	var libs []libraryInfo

	// Library 1: VM images.
	libID, err := mkLib("vmop-images", "vmop test images")
	if err != nil {
		return nil, nil, fmt.Errorf("create library: %w", err)
	}
	lib := libraryInfo{ID: libID, Name: "vmop-images"}
	ovfID, err := uploadOVF(ctx, rc, lm, libID, "vmop-tiny-ovf", desc)
	if err != nil {
		return nil, nil, err
	}
	lib.Items = append(lib.Items, itemInfo{ID: ovfID, Name: "vmop-tiny-ovf", Type: library.ItemTypeOVF})

	deploy := vcenter.Deploy{
		DeploymentSpec: vcenter.DeploymentSpec{Name: "vmop-tiny-src", AcceptAllEULA: true},
		Target:         vcenter.Target{ResourcePoolID: r.Morefs["resource_pool"], FolderID: r.Morefs["folder"]},
	}
	if len(r.PortgroupKeys) > 0 {
		deploy.NetworkMappings = []vcenter.NetworkMapping{{Key: "nic0", Value: r.PortgroupKeys[0]}}
	}
	src, err := vm.DeployLibraryItem(ctx, ovfID, deploy)
	if err != nil {
		return nil, nil, fmt.Errorf("deploy the OVF item: %w", err)
	}
	tmplID, err := vm.CreateTemplate(ctx, vcenter.Template{
		Name:      "vmop-tiny-tmpl",
		Library:   libID,
		SourceVM:  src.Value,
		Placement: &vcenter.Placement{Folder: r.Morefs["folder"], ResourcePool: r.Morefs["resource_pool"]},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("create the vm-template item: %w", err)
	}
	lib.Items = append(lib.Items, itemInfo{ID: tmplID, Name: "vmop-tiny-tmpl", Type: library.ItemTypeVMTX})

	// Drop the scratch VM; the template VM the item refers to stays.
	task, err := object.NewVirtualMachine(c.Client, *src).Destroy(ctx)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("destroy the scratch VM: %w", err)
	}
	libs = append(libs, lib)

	// Library 2: "cluster" images.
	lib2ID, err := mkLib("vmop-cluster-images", "vmop test cluster node images")
	if err != nil {
		return nil, nil, fmt.Errorf("create library: %w", err)
	}
	lib2 := libraryInfo{ID: lib2ID, Name: "vmop-cluster-images"}
	cID, err := uploadOVF(ctx, rc, lm, lib2ID, "vmop-cluster-ovf", desc)
	if err != nil {
		return nil, nil, err
	}
	lib2.Items = append(lib2.Items, itemInfo{ID: cID, Name: "vmop-cluster-ovf", Type: library.ItemTypeOVF})
	libs = append(libs, lib2)

	// Libraries 3..: "vmop-extra-NN", one OVF item each (-extra-libraries: tests of many
	// endpoints, each with a library of its own).
	for k := 1; k <= extra; k++ {
		name := fmt.Sprintf("vmop-extra-%02d", k)
		id, err := mkLib(name, "vmop test extra library")
		if err != nil {
			return nil, nil, fmt.Errorf("create library: %w", err)
		}
		l := libraryInfo{ID: id, Name: name}
		iid, err := uploadOVF(ctx, rc, lm, id, name+"-ovf", desc)
		if err != nil {
			return nil, nil, err
		}
		l.Items = append(l.Items, itemInfo{ID: iid, Name: name + "-ovf", Type: library.ItemTypeOVF})
		libs = append(libs, l)
	}

	// The template VM: found by name in the VM folder.
	finder := object.NewSearchIndex(c.Client)
	ref, err := finder.FindByInventoryPath(ctx, r.Folder+"/vmop-tiny-tmpl")
	if err != nil || ref == nil {
		return nil, nil, fmt.Errorf("template VM not found after creating the item")
	}
	tref := ref.Reference()
	return libs, &tref, nil
}

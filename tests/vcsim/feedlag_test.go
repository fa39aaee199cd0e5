// feedlag_test.go: measures whether the simulator's change feed (WaitForUpdatesEx) keeps up while
// hundreds of VMs are created, the way vmop's vcfeed watches it (a ContainerView over the VM folder,
// vcfeed's default properties). A measurement, not a unit test: it runs only when asked,
//
//	cd tests/vcsim && VMOP_VCSIM_FEEDLAG=100 GOFLAGS=-mod=mod GOTOOLCHAIN=local go test -count=1 -v \
//	    -timeout 30m -modfile ../../build-vcsim/tests/vcsim/vcsim.mod \
//	    -run TestFeedLag main.go seed.go guest.go metadata.go yaml.go feedlag_test.go
//
// (VMOP_VCSIM_FEEDLAG = the number of VMs to create; -modfile = a build dir's patched simulator, see
// patchmod.sh: the unpatched one deadlocks here. The meson unit suite never names this file.)
// It creates the VMs as vmop does (clone, then power on; the guest player then publishes an address)
// with 4 workers, and prints how far the feed fell behind. Test-only code.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// The properties operator/vcenter/change_feed.c watches by default.
var feedProps = []string{
	"runtime.powerState", "summary.runtime.powerState", "summary.runtime.connectionState",
	"summary.runtime.host", "guest.ipAddress", "guest.toolsRunningStatus", "guestHeartbeatStatus",
	"config.hardware.numCPU", "config.hardware.memoryMB", "config.cpuAllocation",
	"config.memoryAllocation", "config.hardware.device", "config.changeVersion",
	"config.instanceUuid", "name", "resourcePool", "parent",
}

// updateCounter is a registry handler that counts the object changes the simulator queues for
// every waiting property collector (each costs the collector a full re-collect of its filter).
type updateCounter struct {
	mu     sync.Mutex
	byKind map[string]int
}

func (u *updateCounter) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "vmopUpdateCounter", Value: "counter"}
}
func (u *updateCounter) count(kind string) {
	u.mu.Lock()
	u.byKind[kind]++
	u.mu.Unlock()
}
func (u *updateCounter) PutObject(_ *simulator.Context, o mo.Reference) {
	u.count("enter " + o.Reference().Type)
}
func (u *updateCounter) UpdateObject(_ *simulator.Context, o mo.Reference, _ []types.PropertyChange) {
	u.count("modify " + o.Reference().Type)
}
func (u *updateCounter) RemoveObject(_ *simulator.Context, ref types.ManagedObjectReference) {
	u.count("leave " + ref.Type)
}

type feedStats struct {
	mu       sync.Mutex
	entered  map[string]time.Time // moref -> when the feed first named it
	ipSeen   map[string]time.Time // moref -> when the feed saw its guest.ipAddress
	calls    int
	updates  int
	maxCall  time.Duration // the longest WaitForUpdatesEx that returned updates
	maxBatch int
}

func TestFeedLag(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("VMOP_VCSIM_FEEDLAG"))
	if n <= 0 {
		t.Skip("set VMOP_VCSIM_FEEDLAG=<number of VMs> to measure the change feed")
	}
	m := simulator.VPX()
	m.Machine = 1
	defer m.Remove()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	model = m // main.go's helpers read the global
	counter := &updateCounter{byKind: map[string]int{}}
	m.Map().AddHandler(counter)
	m.Service.RegisterEndpoints = true
	s := m.Service.NewServer() // not closed: Close would wait for a WaitForUpdatesEx still catching up
	go guestPlayer(m)

	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, s.URL, true) // one session for creates
	if err != nil {
		t.Fatal(err)
	}
	wc, err := govmomi.NewClient(ctx, s.URL, true) // the watcher's own session, as vcfeed has
	if err != nil {
		t.Fatal(err)
	}

	si := object.NewSearchIndex(c.Client)
	srcRef, err := si.FindByInventoryPath(ctx, "/DC0/vm/DC0_C0_RP0_VM0")
	if err != nil || srcRef == nil {
		t.Fatalf("source VM: %v", err)
	}
	src := object.NewVirtualMachine(c.Client, srcRef.Reference())
	folderRef, _ := si.FindByInventoryPath(ctx, "/DC0/vm")
	poolRef, _ := si.FindByInventoryPath(ctx, "/DC0/host/DC0_C0/Resources")
	folder := object.NewFolder(c.Client, folderRef.Reference())
	pool := poolRef.Reference()

	// The watch: ContainerView over the VM folder, one filter, WaitForUpdatesEx(maxWait 30 s).
	cv, err := view.NewManager(wc.Client).CreateContainerView(ctx, folderRef.Reference(), []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	pcRes, err := methods.CreatePropertyCollector(ctx, wc.Client, &types.CreatePropertyCollector{This: wc.ServiceContent.PropertyCollector})
	if err != nil {
		t.Fatal(err)
	}
	pc := pcRes.Returnval
	_, err = methods.CreateFilter(ctx, wc.Client, &types.CreateFilter{
		This: pc,
		Spec: types.PropertyFilterSpec{
			ObjectSet: []types.ObjectSpec{{
				Obj: cv.Reference(), Skip: types.NewBool(true),
				SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{Type: "ContainerView", Path: "view"}},
			}},
			PropSet: []types.PropertySpec{{Type: "VirtualMachine", PathSet: feedProps}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := &feedStats{entered: map[string]time.Time{}, ipSeen: map[string]time.Time{}}
	wctx, stopWatch := context.WithCancel(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		version := ""
		for wctx.Err() == nil {
			t0 := time.Now()
			res, err := methods.WaitForUpdatesEx(wctx, wc.Client, &types.WaitForUpdatesEx{
				This: pc, Version: version, Options: &types.WaitOptions{MaxWaitSeconds: types.NewInt32(30)},
			})
			if err != nil {
				return
			}
			d, now := time.Since(t0), time.Now()
			if res.Returnval == nil {
				continue
			}
			version = res.Returnval.Version
			st.mu.Lock()
			st.calls++
			nb := 0
			for _, fs := range res.Returnval.FilterSet {
				for _, ou := range fs.ObjectSet {
					nb++
					ref := ou.Obj.Value
					if _, ok := st.entered[ref]; !ok {
						st.entered[ref] = now
					}
					for _, ch := range ou.ChangeSet {
						if ch.Name == "guest.ipAddress" && ch.Val != nil {
							if _, ok := st.ipSeen[ref]; !ok {
								st.ipSeen[ref] = now
							}
						}
					}
				}
			}
			st.updates += nb
			if nb > st.maxBatch {
				st.maxBatch = nb
			}
			if d > st.maxCall && nb > 0 && version != "" {
				st.maxCall = d
			}
			st.mu.Unlock()
		}
	}()

	// Creates: 4 workers, clone then power on, as vmop's controller does.
	type made struct {
		ref  string
		done time.Time // power-on task finished
	}
	var (
		mu    sync.Mutex
		vms   []made
		wg    sync.WaitGroup
		jobs  = make(chan int)
		start = time.Now()
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				spec := types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &pool}}
				task, err := src.Clone(ctx, folder, fmt.Sprintf("lag-%03d", i), spec)
				if err != nil {
					t.Error(err)
					return
				}
				info, err := task.WaitForResult(ctx, nil)
				if err != nil {
					t.Error(err)
					return
				}
				vm := object.NewVirtualMachine(c.Client, info.Result.(types.ManagedObjectReference))
				if task, err = vm.PowerOn(ctx); err == nil {
					err = task.Wait(ctx)
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				vms = append(vms, made{vm.Reference().Value, time.Now()})
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	created := time.Since(start)

	// How long until the feed has named every VM and seen every address.
	deadline := time.Now().Add(10 * time.Minute)
	var allEntered, allIP time.Duration
	for time.Now().Before(deadline) {
		st.mu.Lock()
		e, ip := 0, 0
		for _, v := range vms {
			if _, ok := st.entered[v.ref]; ok {
				e++
			}
			if _, ok := st.ipSeen[v.ref]; ok {
				ip++
			}
		}
		st.mu.Unlock()
		if e == len(vms) && allEntered == 0 {
			allEntered = time.Since(start)
		}
		if ip == len(vms) {
			allIP = time.Since(start)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopWatch()
	_, _ = methods.CancelWaitForUpdates(ctx, wc.Client, &types.CancelWaitForUpdates{This: pc})
	<-watchDone

	st.mu.Lock()
	defer st.mu.Unlock()
	var lags []time.Duration
	for _, v := range vms {
		if at, ok := st.entered[v.ref]; ok {
			lags = append(lags, at.Sub(v.done))
		}
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	pct := func(p float64) time.Duration {
		if len(lags) == 0 {
			return 0
		}
		return lags[int(p*float64(len(lags)-1))]
	}
	t.Logf("feed lag: %d VMs created (clone + power-on, 4 workers) in %v", len(vms), created.Round(time.Millisecond))
	t.Logf("feed lag: all %d named by the feed at +%v, all addresses seen at +%v (from the first create)",
		len(vms), allEntered.Round(time.Millisecond), allIP.Round(time.Millisecond))
	t.Logf("feed lag: power-on done -> feed names the VM: median %v, p90 %v, max %v (negative: the clone's ENTER came first)",
		pct(0.5).Round(time.Millisecond), pct(0.9).Round(time.Millisecond), pct(1).Round(time.Millisecond))
	t.Logf("feed lag: %d WaitForUpdatesEx answers, %d object updates, largest answer %d objects, slowest answer %v",
		st.calls, st.updates, st.maxBatch, st.maxCall.Round(time.Millisecond))
	counter.mu.Lock()
	t.Logf("feed lag: object changes queued by the simulator: %v", counter.byKind)
	counter.mu.Unlock()
	if allIP == 0 {
		t.Errorf("the feed did not see every address within 10 minutes")
	}
}

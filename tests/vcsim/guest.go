// guest.go: the "guest player": acts as VMware Tools inside each powered-on simulated VM.
//
// Every 100 ms, for each VM (templates skipped):
//   - powered on, no guest.ipAddress yet: publish the static IPv4 address its guestinfo.metadata asks for on
//     the first interface (metadata.go), else the next address of a DHCP-like pool in 192.0.2.0/24 (TEST-NET-1;
//     only a value, no traffic); plus tools running, heartbeat green, guest.net[0] (address + the first NIC's
//     current MAC), guest.hostName from local-hostname;
//   - powered on, address already there but tools not running (a restart): tools running again;
//   - not powered on with tools running: tools not running, heartbeat gray (the address is kept, as vcsim does).
//
// Changes go through Context.Update (the model's registry) under the VM's lock, so WaitForUpdatesEx clients see them.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// ipPool hands out 192.0.2.10-254, one address per VM moref, reused when the VM asks again.
type ipPool struct {
	mu   sync.Mutex
	next int
	byVM map[string]string
}

func (p *ipPool) get(vm string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ip, ok := p.byVM[vm]; ok {
		return ip
	}
	if p.next < 10 || p.next > 254 {
		p.next = 10 // wraps: duplicates after 245 VMs, acceptable in a simulator
	}
	ip := fmt.Sprintf("192.0.2.%d", p.next)
	p.next++
	p.byVM[vm] = ip
	return ip
}

// lastExtraConfig returns the last value of key (vcsim appends, so the last one wins).
func lastExtraConfig(vm *simulator.VirtualMachine, key string) (string, bool) {
	if vm.Config == nil {
		return "", false
	}
	val, found := "", false
	for _, o := range vm.Config.ExtraConfig {
		ov := o.GetOptionValue()
		if ov.Key == key {
			s, _ := ov.Value.(string)
			val, found = s, true
		}
	}
	return val, found
}

// firstNIC returns the first ethernet card's device key and MAC address.
func firstNIC(vm *simulator.VirtualMachine) (int32, string, bool) {
	if vm.Config == nil {
		return 0, "", false
	}
	for _, d := range vm.Config.Hardware.Device {
		if c, ok := d.(types.BaseVirtualEthernetCard); ok {
			e := c.GetVirtualEthernetCard()
			return e.Key, e.MacAddress, true
		}
	}
	return 0, "", false
}

// warned remembers VMs whose metadata did not parse, so the log gets one line per VM and value.
var warned = map[string]string{}

func playVM(ctx *simulator.Context, vm *simulator.VirtualMachine, pool *ipPool) {
	if vm.Config == nil || vm.Config.Template {
		return
	}
	running := vm.Guest != nil && vm.Guest.ToolsRunningStatus == string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
	hasIP := vm.Guest != nil && vm.Guest.IpAddress != ""
	toolsOn := []types.PropertyChange{
		{Name: "guest.toolsRunningStatus", Val: string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)},
		{Name: "summary.guest.toolsRunningStatus", Val: string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)},
		{Name: "guest.toolsStatus", Val: types.VirtualMachineToolsStatusToolsOk},
		{Name: "summary.guest.toolsStatus", Val: types.VirtualMachineToolsStatusToolsOk},
		{Name: "guest.guestState", Val: "running"},
		{Name: "guestHeartbeatStatus", Val: types.ManagedEntityStatusGreen},
	}

	if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		if running {
			ctx.Update(vm, []types.PropertyChange{
				{Name: "guest.toolsRunningStatus", Val: string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning)},
				{Name: "summary.guest.toolsRunningStatus", Val: string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning)},
				{Name: "guest.toolsStatus", Val: types.VirtualMachineToolsStatusToolsNotRunning},
				{Name: "summary.guest.toolsStatus", Val: types.VirtualMachineToolsStatusToolsNotRunning},
				{Name: "guest.guestState", Val: "notRunning"},
				{Name: "guestHeartbeatStatus", Val: types.ManagedEntityStatusGray},
			})
		}
		return
	}
	if hasIP {
		if !running {
			ctx.Update(vm, toolsOn)
		}
		return
	}

	nicKey, mac, haveNIC := firstNIC(vm)
	var g guestNet
	if md, ok := lastExtraConfig(vm, "guestinfo.metadata"); ok && md != "" {
		enc, _ := lastExtraConfig(vm, "guestinfo.metadata.encoding")
		var err error
		g, err = parseGuestMetadata(md, enc, mac)
		if err != nil && warned[vm.Self.Value] != md {
			warned[vm.Self.Value] = md
			// The error text never quotes the metadata (it may hold user data).
			log.Printf("guest player: %s: guestinfo.metadata not understood (%v); using the pool", vm.Self.Value, err)
		}
	}
	ip, prefix := g.IP, g.Prefix
	if ip == "" {
		ip, prefix = pool.get(vm.Self.Value), 24
	}

	changes := append([]types.PropertyChange{
		{Name: "guest.ipAddress", Val: ip},
		{Name: "summary.guest.ipAddress", Val: ip},
	}, toolsOn...)
	if g.Hostname != "" {
		changes = append(changes,
			types.PropertyChange{Name: "guest.hostName", Val: g.Hostname},
			types.PropertyChange{Name: "summary.guest.hostName", Val: g.Hostname})
	}
	if haveNIC {
		var nets []types.GuestNicInfo
		if vm.Guest != nil {
			nets = append(nets, vm.Guest.Net...) // a copy: the old slice may be held by a pending update
		}
		first := types.GuestNicInfo{Connected: true, DeviceConfigId: nicKey}
		if len(nets) > 0 {
			first = nets[0]
		} else {
			nets = append(nets, first)
		}
		first.MacAddress = mac
		first.Connected = true
		first.IpAddress = []string{ip}
		first.IpConfig = &types.NetIpConfigInfo{IpAddress: []types.NetIpConfigInfoIpAddress{{
			IpAddress: ip, PrefixLength: int32(prefix), State: string(types.NetIpConfigInfoIpAddressStatusPreferred),
		}}}
		nets[0] = first
		changes = append(changes, types.PropertyChange{Name: "guest.net", Val: nets})
	}
	ctx.Update(vm, changes)
}

func guestPlayer(m *simulator.Model) {
	pool := &ipPool{byVM: map[string]string{}}
	// The player's own context: a copy of the service context (same registry and session), so it is its
	// own lock holder and never shares a VM lock with a SOAP handler or a task goroutine.
	c := *m.Service.Context
	ctx := &c
	for range time.Tick(100 * time.Millisecond) {
		for _, e := range ctx.Map.All("VirtualMachine") {
			vm, ok := e.(*simulator.VirtualMachine)
			if !ok {
				continue
			}
			ctx.WithLock(vm, func() { playVM(ctx, vm, pool) })
		}
	}
}

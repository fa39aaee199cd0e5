// benchfloor: the floor for vmop's provisioning benchmark (test infrastructure only, never shipped).
//
// It does, per VM, the vCenter work vmop does to provision one VM from a template, and nothing else:
//
//	CloneVM_Task     from a template VM into a folder of its own (bench-floor under the datacenter's VM
//	                 folder), relocated to the binding's pool and datastore; the clone spec carries
//	                 config.instanceUuid and two identity ExtraConfig keys of vmop's sizes (named
//	                 benchfloor.*, so the devenv's vmop never takes a floor VM for one of its own)
//	ReconfigVM_Task  numCPUs, memoryMB, CPU and memory reservation + limit, managedBy,
//	                 guestinfo.metadata / guestinfo.userdata (+ .encoding) as gzip+base64 documents of
//	                 realistic size (user data: a cloud-config of about 1 KiB encoded)
//	PowerOnVM_Task
//	RetrievePropertiesEx of config, runtime and guest (the read-back vmop's status comes from)
//	guest IP         shared by all VMs, so a VM waiting for its IP holds no worker (as in vmop, whose change
//	                 feed brings the IP): -ip-wait poll (default) reads guest.ipAddress of every VM still
//	                 waiting in one RetrievePropertiesEx every 200 ms; -ip-wait feed keeps one WaitForUpdatesEx
//	                 over a ContainerView of the folder, as vmop's change feed does. On the simulator the poll
//	                 is the faster of the two by far at 200 VMs (its WaitForUpdatesEx re-applies the filter for
//	                 every change in the inventory), so it is the floor's default
//
// at concurrency C (C workers, as vmop's --workers; with -rate R the i-th VM is due at i / R seconds and its
// time counts from then, the gradual benchmark), and for the delete phase PowerOffVM_Task and
// Destroy_Task per VM. Each task is waited by reading Task.info (RetrievePropertiesEx on the session's
// PropertyCollector) 25 ms after the start, then with a backoff of 50 ms doubling to 1 s, as vmop's
// vim_task_wait does: one call when the task has ended by the first read (the simulator ends most tasks
// within a few milliseconds);
// -task-wait collector uses govmomi's task.Wait instead (a PropertyCollector per wait: Create, CreateFilter,
// WaitForUpdatesEx, Destroy). Every SOAP request goes through a counting http.RoundTripper (per phase and
// per method, the method read from the envelope's body).
//
// Output: one JSON object on stdout; progress and errors on stderr. Every call, task wait and IP wait is
// bounded: a VM that fails or times out is counted in "errors", never a hang.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

var (
	flagDevenv    = flag.String("devenv", "", "a tests/devenv directory (reads vcenter.json, and vcsim.json for the inventory)")
	flagN         = flag.Int("n", 200, "number of VMs")
	flagC         = flag.Int("c", 8, "concurrency (vmop's --workers)")
	flagTemplate  = flag.String("template", "", "inventory path of the template VM (default: <datacenter>/vm/vmop-tiny-tmpl)")
	flagFolder    = flag.String("folder", "bench-floor", "folder under the datacenter's VM folder (created when missing)")
	flagPrefix    = flag.String("prefix", "floor-", "VM name prefix")
	flagPhase     = flag.String("phase", "both", "create, delete (every VM in the folder), both, latency (latency.go), kready (kready.go) or kcreate (kcreate.go)")
	flagIPWait    = flag.String("ip-wait", "poll", "feed (one WaitForUpdatesEx over a ContainerView of the folder) or poll (one RetrievePropertiesEx of every waiting VM per -ip-poll)")
	flagIPPoll    = flag.Duration("ip-poll", 200*time.Millisecond, "the poll interval of -ip-wait poll")
	flagTaskWait  = flag.String("task-wait", "poll", "poll (read Task.info with backoff, as vmop) or collector (govmomi task.Wait)")
	flagCallT     = flag.Duration("call-timeout", 60*time.Second, "bound of one SOAP call")
	flagTaskT     = flag.Duration("task-timeout", 120*time.Second, "bound of one task wait")
	flagIPT       = flag.Duration("ip-timeout", 120*time.Second, "bound of the wait for a VM's guest IP (from its power-on)")
	flagPhaseT    = flag.Duration("phase-timeout", 30*time.Minute, "bound of a whole phase")
	flagInsecure  = flag.Bool("insecure", false, "skip TLS verification when vcenter.json has no thumbprint (loopback simulator only)")
	flagCPUs      = flag.Int("cpus", 2, "numCPUs")
	flagMemMB     = flag.Int64("memory-mb", 2048, "memoryMB")
	flagUserBytes = flag.Int("userdata-bytes", 1024, "target size of the encoded user data")
)

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "benchfloor: "+format+"\n", a...)
}

// cpuSeconds: this process's user + system CPU time so far (the floor's own share of a phase's CPU).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func die(format string, a ...any) {
	logf(format, a...)
	os.Exit(1)
}

// ---- the counting transport ----

var bodyMethod = regexp.MustCompile(`<(?:[A-Za-z0-9_]+:)?Body[^>]*>\s*<(?:[A-Za-z0-9_]+:)?([A-Za-z0-9_]+)`)

type counter struct {
	mu       sync.Mutex
	phase    string
	byPhase  map[string]map[string]int // phase -> method -> count
	next     http.RoundTripper
	inFlight atomic.Int64
}

func (c *counter) setPhase(p string) {
	c.mu.Lock()
	c.phase = p
	c.mu.Unlock()
}

func (c *counter) RoundTrip(req *http.Request) (*http.Response, error) {
	method := "other"
	if req.Body != nil && req.Method == http.MethodPost {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if m := bodyMethod.FindSubmatch(b); m != nil {
			method = string(m[1])
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.ContentLength = int64(len(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	c.mu.Lock()
	m := c.byPhase[c.phase]
	if m == nil {
		m = map[string]int{}
		c.byPhase[c.phase] = m
	}
	m[method]++
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *counter) total(phase string) (int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, cp := 0, map[string]int{}
	for k, v := range c.byPhase[phase] {
		n += v
		cp[k] = v
	}
	return n, cp
}

// ---- configuration from the devenv directory ----

type vcenterJSON struct {
	URL        string `json:"url"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Thumbprint string `json:"thumbprint"`
}

type vcsimJSON struct {
	Datacenter   string   `json:"datacenter"`
	ResourcePool string   `json:"resource_pool"`
	Folder       string   `json:"folder"`
	Datastore    string   `json:"datastore"`
	Portgroups   []string `json:"portgroups"`
}

func readJSON(p string, v any) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// normThumbprint gives the form govmomi compares with: upper-case hex pairs joined by ':'.
func normThumbprint(t string) string {
	t = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(t), ":", ""))
	var parts []string
	for i := 0; i+1 < len(t); i += 2 {
		parts = append(parts, t[i:i+2])
	}
	return strings.Join(parts, ":")
}

// ---- bounded helpers ----

func callCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, *flagCallT)
}

type env struct {
	c   *vim25.Client
	pc  *property.Collector
	cnt *counter
}

// waitTask waits for a task to end, bounded by -task-timeout, and gives its result.
func (e *env) waitTask(ctx context.Context, t *object.Task) (types.AnyType, error) {
	ctx, cancel := context.WithTimeout(ctx, *flagTaskT)
	defer cancel()
	if *flagTaskWait == "collector" {
		info, err := t.WaitForResult(ctx)
		if err != nil {
			return nil, err
		}
		return info.Result, nil
	}
	// as vim_task_wait: the first read 25 ms after the start, then 50 ms doubling to 1 s
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("task %s: %w", t.Reference().Value, ctx.Err())
	case <-time.After(25 * time.Millisecond):
	}
	backoff := 50 * time.Millisecond
	for {
		var mt mo.Task
		cctx, ccancel := callCtx(ctx)
		err := e.pc.RetrieveOne(cctx, t.Reference(), []string{"info"}, &mt)
		ccancel()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", t.Reference().Value, err)
		}
		switch mt.Info.State {
		case types.TaskInfoStateSuccess:
			return mt.Info.Result, nil
		case types.TaskInfoStateError:
			if mt.Info.Error != nil {
				return nil, fmt.Errorf("task %s (%s) failed: %s", t.Reference().Value, mt.Info.DescriptionId,
					mt.Info.Error.LocalizedMessage)
			}
			return nil, fmt.Errorf("task %s (%s) failed", t.Reference().Value, mt.Info.DescriptionId)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("task %s: %w", t.Reference().Value, ctx.Err())
		case <-time.After(backoff):
		}
		if backoff *= 2; backoff > time.Second {
			backoff = time.Second
		}
	}
}

// vmWatch makes what a WaitForUpdatesEx watch of VMs needs: a ContainerView of the VMs under root
// (recursive: in sub-folders too), a PropertyCollector of its own, and a filter on paths over the
// view. The caller destroys the collector and the view. The calls are bounded by callCtx.
func (e *env) vmWatch(ctx context.Context, root types.ManagedObjectReference, recursive bool,
	paths []string) (*view.ContainerView, *property.Collector, error) {
	cctx, ccancel := callCtx(ctx)
	defer ccancel()
	cv, err := view.NewManager(e.c).CreateContainerView(cctx, root, []string{"VirtualMachine"}, recursive)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateContainerView: %w", err)
	}
	pc, err := e.pc.Create(cctx)
	if err != nil {
		return nil, nil, fmt.Errorf("CreatePropertyCollector: %w", err)
	}
	ts := &types.TraversalSpec{Type: "ContainerView", Path: "view"}
	_, err = pc.CreateFilter(cctx, types.CreateFilter{Spec: types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{Obj: cv.Reference(), Skip: types.NewBool(true), SelectSet: []types.BaseSelectionSpec{ts}}},
		PropSet:   []types.PropertySpec{{Type: "VirtualMachine", PathSet: paths}},
	}, PartialUpdates: false})
	if err != nil {
		return nil, nil, fmt.Errorf("CreateFilter: %w", err)
	}
	return cv, pc, nil
}

// ---- the guest IP feed: one ContainerView + PropertyCollector for the folder ----

type ipFeed struct {
	mu      sync.Mutex
	seen    map[string]bool          // moref -> has an IP
	waiters map[string]chan struct{} // moref -> closed when it has one
	refs    map[string]types.ManagedObjectReference
	err     error
	done    chan struct{}
	cancel  context.CancelFunc
}

func startIPFeed(ctx context.Context, e *env, folder types.ManagedObjectReference) (*ipFeed, error) {
	f := &ipFeed{seen: map[string]bool{}, waiters: map[string]chan struct{}{}, done: make(chan struct{}),
		refs: map[string]types.ManagedObjectReference{}}
	if *flagIPWait == "poll" {
		return f.startPoll(ctx, e), nil
	}
	cv, pc, err := e.vmWatch(ctx, folder, false, []string{"guest.ipAddress"})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	go func() {
		defer close(f.done)
		defer func() { // the server objects, bounded
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			_ = pc.Destroy(dctx)
			_ = cv.Destroy(dctx)
		}()
		version := ""
		wait := int32(1)
		for wctx.Err() == nil {
			req := types.WaitForUpdatesEx{This: pc.Reference(), Version: version,
				Options: &types.WaitOptions{MaxWaitSeconds: &wait}}
			cctx, ccancel := callCtx(wctx)
			res, err := methods.WaitForUpdatesEx(cctx, e.c, &req)
			ccancel()
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
				logf("ip feed: WaitForUpdatesEx: %v (retrying)", err)
				time.Sleep(200 * time.Millisecond)
				continue
			}
			if res.Returnval == nil {
				continue
			}
			version = res.Returnval.Version
			for _, fs := range res.Returnval.FilterSet {
				for _, ou := range fs.ObjectSet {
					for _, ch := range ou.ChangeSet {
						if ch.Name != "guest.ipAddress" {
							continue
						}
						if s, _ := ch.Val.(string); s != "" {
							f.mark(ou.Obj.Value)
						}
					}
				}
			}
		}
	}()
	return f, nil
}

// startPoll: -ip-wait poll, one RetrievePropertiesEx of guest.ipAddress for every VM still waiting,
// every -ip-poll (one call per tick however many VMs wait).
func (f *ipFeed) startPoll(ctx context.Context, e *env) *ipFeed {
	wctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	go func() {
		defer close(f.done)
		tick := time.NewTicker(*flagIPPoll)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			f.mu.Lock()
			var refs []types.ManagedObjectReference
			for k := range f.waiters {
				refs = append(refs, f.refs[k])
			}
			f.mu.Unlock()
			if len(refs) == 0 {
				continue
			}
			var vms []mo.VirtualMachine
			cctx, ccancel := callCtx(wctx)
			err := e.pc.Retrieve(cctx, refs, []string{"guest.ipAddress"}, &vms)
			ccancel()
			if err != nil {
				if wctx.Err() == nil {
					logf("ip poll: RetrievePropertiesEx: %v (retrying)", err)
				}
				continue
			}
			for _, vm := range vms {
				if vm.Guest != nil && vm.Guest.IpAddress != "" {
					f.mark(vm.Self.Value)
				}
			}
		}
	}()
	return f
}

func (f *ipFeed) mark(ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[ref] = true
	if ch, ok := f.waiters[ref]; ok {
		close(ch)
		delete(f.waiters, ref)
		delete(f.refs, ref)
	}
}

// await gives a channel closed once ref has an IP.
func (f *ipFeed) await(ref types.ManagedObjectReference) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.seen[ref.Value] {
		close(ch)
		return ch
	}
	f.waiters[ref.Value] = ch
	f.refs[ref.Value] = ref
	return ch
}

func (f *ipFeed) stop() {
	f.cancel()
	select {
	case <-f.done:
	case <-time.After(15 * time.Second):
		logf("ip feed: did not stop within 15 s")
	}
}

// ---- the cloud-init documents ----

func gzipB64(b []byte) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// userData is a cloud-config whose gzip+base64 form is about target bytes: a user with an SSH key
// (random, so it does not compress), packages, a file and commands.
func userData(name string, target int) string {
	for keyLen := 64; ; keyLen += 16 {
		key := make([]byte, keyLen)
		_, _ = rand.Read(key)
		doc := fmt.Sprintf(`#cloud-config
hostname: %s
users:
  - name: bench
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    ssh_authorized_keys:
      - ssh-ed25519 %s bench@floor
packages: [curl, jq, nginx]
write_files:
  - path: /etc/bench/role
    content: |
      role=web
      tier=frontend
      owner=bench
runcmd:
  - [systemctl, enable, --now, nginx]
  - [sh, -c, "echo provisioned > /var/tmp/bench"]
`, name, base64.StdEncoding.EncodeToString(key))
		enc := gzipB64([]byte(doc))
		if len(enc) >= target || keyLen > 4096 {
			return enc
		}
	}
}

// metaData is the cloud-init metadata vmop writes (instance-id, local-hostname, DHCP on the first NIC).
func metaData(name, iuuid string) string {
	doc := map[string]any{
		"instance-id":    iuuid,
		"local-hostname": name,
		"network": map[string]any{
			"version": 2,
			"ethernets": map[string]any{
				"eth0": map[string]any{"match": map[string]any{"name": "e*"}, "dhcp4": true},
			},
		},
	}
	b, _ := json.Marshal(doc)
	return gzipB64(b)
}

// ---- the phases ----

type result struct {
	errors   int
	samples  []string
	vmTimes  []float64
	steps    map[string][]float64 // step -> seconds, one per VM
	doneAt   []float64            // when each VM was done, in seconds after the phase started
	start    time.Time
	mu       sync.Mutex
	finished atomic.Int64
}

// step records how long one VM's step took, from *since; *since moves on to now.
func (r *result) step(name string, since *time.Time) {
	now := time.Now()
	r.mu.Lock()
	if r.steps == nil {
		r.steps = map[string][]float64{}
	}
	r.steps[name] = append(r.steps[name], now.Sub(*since).Seconds())
	r.mu.Unlock()
	*since = now
}

func (r *result) stepMedians() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]float64{}
	for k, v := range r.steps {
		m[k] = round(quantile(v, 0.5), 4)
	}
	return m
}

func (r *result) fail(name string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors++
	if len(r.samples) < 10 {
		r.samples = append(r.samples, name+": "+err.Error())
	}
	logf("%s: %v", name, err)
}

func (r *result) ok(d time.Duration) {
	r.mu.Lock()
	r.vmTimes = append(r.vmTimes, d.Seconds())
	r.doneAt = append(r.doneAt, time.Since(r.start).Seconds())
	r.mu.Unlock()
}

type target struct {
	tmpl      *object.VirtualMachine
	folder    *object.Folder
	pool      types.ManagedObjectReference
	datastore types.ManagedObjectReference
}

func (e *env) find(ctx context.Context, p string) (types.ManagedObjectReference, error) {
	cctx, cancel := callCtx(ctx)
	defer cancel()
	ref, err := object.NewSearchIndex(e.c).FindByInventoryPath(cctx, p)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("find %s: %w", p, err)
	}
	if ref == nil {
		return types.ManagedObjectReference{}, fmt.Errorf("find %s: not found", p)
	}
	return ref.Reference(), nil
}

func (e *env) folderRef(ctx context.Context, dc string, create bool) (*object.Folder, error) {
	p := path.Join(dc, "vm", *flagFolder)
	if ref, err := e.find(ctx, p); err == nil {
		return object.NewFolder(e.c, ref), nil
	} else if !create {
		return nil, err
	}
	parent, err := e.find(ctx, path.Join(dc, "vm"))
	if err != nil {
		return nil, err
	}
	cctx, cancel := callCtx(ctx)
	defer cancel()
	return object.NewFolder(e.c, parent).CreateFolder(cctx, *flagFolder)
}

// createOne: VM i from its clone to its guest IP; its time counts from start (with -rate the moment it was
// due, so that a wait for a free worker counts too).
func (e *env) createOne(ctx context.Context, t *target, feed *ipFeed, i int, start time.Time, r *result, ipWG *sync.WaitGroup) {
	name := fmt.Sprintf("%s%04d", *flagPrefix, i)
	t0 := time.Now()
	if start.IsZero() {
		start = t0
	}
	iuuid := uuid.NewString()
	ns := "bench-floor/" + name

	spec := types.VirtualMachineCloneSpec{
		Location: types.VirtualMachineRelocateSpec{Pool: &t.pool, Datastore: &t.datastore},
		Config: &types.VirtualMachineConfigSpec{
			InstanceUuid: iuuid,
			ExtraConfig: []types.BaseOptionValue{
				&types.OptionValue{Key: "benchfloor.namespacedName", Value: ns},
				&types.OptionValue{Key: "benchfloor.uid", Value: uuid.NewString()},
			},
		},
		PowerOn:  false,
		Template: false,
	}
	cctx, cancel := callCtx(ctx)
	task, err := t.tmpl.Clone(cctx, t.folder, name, spec)
	cancel()
	if err != nil {
		r.fail(name, fmt.Errorf("CloneVM_Task: %w", err))
		return
	}
	res, err := e.waitTask(ctx, task)
	if err != nil {
		r.fail(name, fmt.Errorf("clone: %w", err))
		return
	}
	ref, ok := res.(types.ManagedObjectReference)
	if !ok {
		r.fail(name, fmt.Errorf("clone: no VM in the task result"))
		return
	}
	r.step("clone", &t0)
	vm := object.NewVirtualMachine(e.c, ref)

	cpuRes, cpuLim := int64(500), int64(2000*int64(*flagCPUs))
	memRes, memLim := *flagMemMB/4, *flagMemMB
	rs := types.VirtualMachineConfigSpec{
		NumCPUs:          int32(*flagCPUs),
		MemoryMB:         *flagMemMB,
		CpuAllocation:    &types.ResourceAllocationInfo{Reservation: &cpuRes, Limit: &cpuLim},
		MemoryAllocation: &types.ResourceAllocationInfo{Reservation: &memRes, Limit: &memLim},
		ManagedBy:        &types.ManagedByInfo{ExtensionKey: "com.vmware.vcenter.wcp", Type: "VirtualMachine"},
		ExtraConfig: []types.BaseOptionValue{
			&types.OptionValue{Key: "guestinfo.metadata", Value: metaData(name, iuuid)},
			&types.OptionValue{Key: "guestinfo.metadata.encoding", Value: "gzip+base64"},
			&types.OptionValue{Key: "guestinfo.userdata", Value: userData(name, *flagUserBytes)},
			&types.OptionValue{Key: "guestinfo.userdata.encoding", Value: "gzip+base64"},
		},
	}
	cctx, cancel = callCtx(ctx)
	task, err = vm.Reconfigure(cctx, rs)
	cancel()
	if err == nil {
		_, err = e.waitTask(ctx, task)
	}
	if err != nil {
		r.fail(name, fmt.Errorf("reconfigure: %w", err))
		return
	}
	r.step("reconfigure", &t0)

	cctx, cancel = callCtx(ctx)
	task, err = vm.PowerOn(cctx)
	cancel()
	if err == nil {
		_, err = e.waitTask(ctx, task)
	}
	if err != nil {
		r.fail(name, fmt.Errorf("power on: %w", err))
		return
	}
	r.step("power_on", &t0)

	var mvm mo.VirtualMachine
	cctx, cancel = callCtx(ctx)
	err = e.pc.RetrieveOne(cctx, ref, []string{"config", "runtime", "guest"}, &mvm)
	cancel()
	if err != nil {
		r.fail(name, fmt.Errorf("read back: %w", err))
		return
	}
	if mvm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		r.fail(name, fmt.Errorf("read back: power state %s", mvm.Runtime.PowerState))
		return
	}
	r.step("read_back", &t0)
	if mvm.Guest != nil && mvm.Guest.IpAddress != "" {
		r.step("guest_ip", &t0)
		r.ok(time.Since(start))
		r.finished.Add(1)
		return
	}
	// the IP comes through the shared feed; the worker goes on to the next VM
	ch := feed.await(ref)
	ipWG.Add(1)
	go func() {
		defer ipWG.Done()
		select {
		case <-ch:
			r.step("guest_ip", &t0)
			r.ok(time.Since(start))
			r.finished.Add(1)
		case <-time.After(*flagIPT):
			r.fail(name, fmt.Errorf("no guest IP within %s of its power-on", *flagIPT))
		case <-ctx.Done():
			r.fail(name, fmt.Errorf("no guest IP: %w", ctx.Err()))
		}
	}()
}

func progress(ctx context.Context, what string, r *result, n int) func() {
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
				r.mu.Lock()
				errs := r.errors
				r.mu.Unlock()
				logf("%s: %d/%d done, %d errors", what, r.finished.Load(), n, errs)
			}
		}
	}()
	return func() { close(stop) }
}

func (e *env) create(ctx context.Context, t *target, n, c int) (*result, time.Duration, error) {
	r := &result{start: time.Now()}
	start := r.start
	feed, err := startIPFeed(ctx, e, t.folder.Reference())
	if err != nil {
		return nil, 0, err
	}
	stopProgress := progress(ctx, "create", r, n)
	defer stopProgress()
	type job struct {
		i  int
		at time.Time
	}
	jobs := make(chan job, n)
	var wg, ipWG sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				e.createOne(ctx, t, feed, j.i, j.at, r, &ipWG)
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if *flagRate <= 0 { // all at once: a VM's time starts when a worker takes it
			jobs <- job{i: i}
			continue
		}
		at := start.Add(time.Duration(float64(i) / *flagRate * float64(time.Second)))
		select {
		case <-time.After(time.Until(at)):
		case <-ctx.Done():
		}
		jobs <- job{i: i, at: at}
	}
	close(jobs)
	wg.Wait()
	ipWG.Wait()
	d := time.Since(start)
	feed.stop()
	return r, d, nil
}

func (e *env) destroyOne(ctx context.Context, vm mo.VirtualMachine, r *result) {
	start := time.Now()
	o := object.NewVirtualMachine(e.c, vm.Self)
	if vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
		cctx, cancel := callCtx(ctx)
		task, err := o.PowerOff(cctx)
		cancel()
		if err == nil {
			_, err = e.waitTask(ctx, task)
		}
		if err != nil {
			r.fail(vm.Name, fmt.Errorf("power off: %w", err))
			return
		}
	}
	cctx, cancel := callCtx(ctx)
	task, err := o.Destroy(cctx)
	cancel()
	if err == nil {
		_, err = e.waitTask(ctx, task)
	}
	if err != nil {
		r.fail(vm.Name, fmt.Errorf("destroy: %w", err))
		return
	}
	r.ok(time.Since(start))
	r.finished.Add(1)
}

func (e *env) delete(ctx context.Context, folder *object.Folder, c int) (*result, int, time.Duration, error) {
	r := &result{start: time.Now()}
	start := r.start
	var f mo.Folder
	cctx, cancel := callCtx(ctx)
	err := e.pc.RetrieveOne(cctx, folder.Reference(), []string{"childEntity"}, &f)
	cancel()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("list %s: %w", *flagFolder, err)
	}
	var refs []types.ManagedObjectReference
	for _, ch := range f.ChildEntity {
		if ch.Type == "VirtualMachine" {
			refs = append(refs, ch)
		}
	}
	var vms []mo.VirtualMachine
	if len(refs) > 0 {
		cctx, cancel = callCtx(ctx)
		err = e.pc.Retrieve(cctx, refs, []string{"name", "runtime.powerState"}, &vms)
		cancel()
		if err != nil {
			return nil, 0, 0, fmt.Errorf("read the VMs: %w", err)
		}
	}
	n := 0
	jobs := make(chan mo.VirtualMachine)
	stopProgress := progress(ctx, "delete", r, len(vms))
	defer stopProgress()
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for vm := range jobs {
				e.destroyOne(ctx, vm, r)
			}
		}()
	}
	for _, vm := range vms {
		if !strings.HasPrefix(vm.Name, *flagPrefix) {
			continue // only ours
		}
		n++
		jobs <- vm
	}
	close(jobs)
	wg.Wait()
	return r, n, time.Since(start), nil
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[i]
}

func round(x float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	if x < 0 {
		return float64(int64(x*p-0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

func main() {
	flag.Parse()
	if *flagDevenv == "" {
		die("-devenv DIR is required")
	}
	if *flagN < 0 || *flagC < 1 {
		die("-n must be >= 0 and -c >= 1")
	}
	switch *flagPhase {
	case "create", "delete", "both", "latency":
	case "kready": // no vCenter: kready.go
		runKReady()
		return
	case "kcreate": // no vCenter: kcreate.go
		runKCreate()
		return
	default:
		die("-phase must be create, delete, both, latency, kready or kcreate")
	}
	switch *flagIPWait {
	case "feed", "poll":
	default:
		die("-ip-wait must be feed or poll")
	}
	switch *flagTaskWait {
	case "poll", "collector":
	default:
		die("-task-wait must be poll or collector")
	}
	var vc vcenterJSON
	if err := readJSON(path.Join(*flagDevenv, "vcenter.json"), &vc); err != nil {
		die("reading vcenter.json: %v", err)
	}
	var sim vcsimJSON
	_ = readJSON(path.Join(*flagDevenv, "vcsim.json"), &sim) // optional: the inventory names
	dc := sim.Datacenter
	if dc == "" {
		dc = "/DC0"
	}
	pool := sim.ResourcePool
	if pool == "" {
		pool = dc + "/host/DC0_C0/Resources"
	}
	ds := sim.Datastore
	if ds == "" {
		ds = dc + "/datastore/LocalDS_0"
	}
	tmplPath := *flagTemplate
	if tmplPath == "" {
		tmplPath = path.Join(dc, "vm", "vmop-tiny-tmpl")
	}

	u, err := soap.ParseURL(strings.TrimRight(vc.URL, "/") + "/sdk")
	if err != nil {
		die("url %q: %v", vc.URL, err)
	}
	tp := normThumbprint(vc.Thumbprint)
	if tp == "" && !*flagInsecure {
		die("vcenter.json has no thumbprint: pass -insecure for a loopback simulator")
	}
	sc := soap.NewClient(u, tp == "")
	if tp != "" {
		sc.SetThumbprint(u.Host, tp)
	}
	// one idle connection per worker plus the feed's, as vmop's connection pool keeps them
	sc.DefaultTransport().MaxIdleConnsPerHost = *flagC + 4
	cnt := &counter{phase: "setup", byPhase: map[string]map[string]int{}, next: sc.Client.Transport}
	sc.Client.Transport = cnt

	root, cancelAll := context.WithTimeout(context.Background(), 3**flagPhaseT)
	defer cancelAll()
	cctx, cancel := callCtx(root)
	c, err := vim25.NewClient(cctx, sc)
	if err == nil {
		err = session.NewManager(c).Login(cctx, url.UserPassword(vc.Username, vc.Password))
	}
	cancel()
	if err != nil {
		die("login to %s: %v", u.Host, err)
	}
	e := &env{c: c, pc: property.DefaultCollector(c), cnt: cnt}
	defer func() {
		lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer lcancel()
		_ = session.NewManager(c).Logout(lctx)
	}()

	if *flagPhase == "latency" {
		runLatency(root, e, dc)
		return
	}

	out := map[string]any{"n": *flagN, "c": *flagC, "task_wait": *flagTaskWait, "ip_wait": *flagIPWait, "rate": *flagRate}
	errs := 0
	var samples []string

	folder, err := e.folderRef(root, dc, *flagPhase != "delete")
	if err != nil {
		die("folder %s: %v", *flagFolder, err)
	}

	if *flagPhase != "delete" {
		tref, err := e.find(root, tmplPath)
		if err != nil {
			die("template: %v", err)
		}
		t := &target{tmpl: object.NewVirtualMachine(c, tref), folder: folder}
		if t.pool, err = e.find(root, pool); err != nil {
			die("resource pool: %v", err)
		}
		if t.datastore, err = e.find(root, ds); err != nil {
			die("datastore: %v", err)
		}
		setupCalls, _ := cnt.total("setup")
		out["setup_calls"] = setupCalls
		logf("create: %d VMs from %s into %s, %d workers, task wait %s", *flagN, tmplPath, *flagFolder, *flagC, *flagTaskWait)
		cnt.setPhase("create")
		cpu0 := cpuSeconds()
		pctx, pcancel := context.WithTimeout(root, *flagPhaseT)
		r, d, err := e.create(pctx, t, *flagN, *flagC)
		pcancel()
		cnt.setPhase("idle")
		if err != nil {
			die("create: %v", err)
		}
		calls, by := cnt.total("create")
		out["create_s"] = round(d.Seconds(), 3)
		out["cpu_create_s"] = round(cpuSeconds()-cpu0, 3)
		out["created"] = len(r.vmTimes)
		out["p50_vm_s"] = round(quantile(r.vmTimes, 0.50), 3)
		out["p90_vm_s"] = round(quantile(r.vmTimes, 0.90), 3)
		out["p99_vm_s"] = round(quantile(r.vmTimes, 0.99), 3)
		out["p50_ready_s"] = round(quantile(r.doneAt, 0.50), 3)
		out["create_step_p50_s"] = r.stepMedians()
		out["calls_create"] = calls
		out["calls_create_by_method"] = by
		if *flagN > 0 {
			out["calls_per_vm_create"] = round(float64(calls)/float64(*flagN), 2)
		}
		errs += r.errors
		samples = append(samples, r.samples...)
		logf("create: %d VMs in %.1f s, %d SOAP calls, %d errors", len(r.vmTimes), d.Seconds(), calls, r.errors)
	}

	if *flagPhase != "create" {
		cnt.setPhase("delete")
		cpu0 := cpuSeconds()
		pctx, pcancel := context.WithTimeout(root, *flagPhaseT)
		r, n, d, err := e.delete(pctx, folder, *flagC)
		pcancel()
		cnt.setPhase("idle")
		if err != nil {
			die("delete: %v", err)
		}
		calls, by := cnt.total("delete")
		out["delete_s"] = round(d.Seconds(), 3)
		out["cpu_delete_s"] = round(cpuSeconds()-cpu0, 3)
		out["deleted"] = len(r.vmTimes)
		out["calls_delete"] = calls
		out["calls_delete_by_method"] = by
		if n > 0 {
			out["calls_per_vm_delete"] = round(float64(calls)/float64(n), 2)
		}
		if *flagPhase == "delete" {
			out["n"] = n
		}
		errs += r.errors
		samples = append(samples, r.samples...)
		logf("delete: %d VMs in %.1f s, %d SOAP calls, %d errors", len(r.vmTimes), d.Seconds(), calls, r.errors)
	}
	out["errors"] = errs
	emitResult(out, errs, samples)
}

// emitResult prints a phase's result as one JSON line, with the error samples if any, and exits 2
// when there were errors (what the benchmark scripts check).
func emitResult(out map[string]any, errs int, samples []string) {
	if len(samples) > 0 {
		out["error_samples"] = samples
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if errs > 0 {
		os.Exit(2)
	}
}

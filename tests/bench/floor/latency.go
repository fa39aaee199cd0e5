// latency.go: -phase latency, the two latency figures of tests/bench/latency.sh (issue 14).
//
//  1. powerState patch -> vCenter acts: t0 just before the merge PATCH of spec.powerState is sent to the
//     API server (HTTP from here, no kubectl), t1 when a long-lived WaitForUpdatesEx watch (a ContainerView
//     of the datacenter's VMs) sees runtime.powerState change. The VM's power task (found through its
//     recentTask, read afterwards) gives "patch -> task queued / started" from the task's own queueTime /
//     startTime (the simulator's clock: this machine's wall clock). Also, from a Kubernetes watch, "patch ->
//     committed" (the first watch event of the VM after t0) and "patch -> status.powerState". Both
//     directions: PoweredOff (powerOffMode Hard) and PoweredOn, -lat-n rounds.
//  2. out-of-band power-off -> vmop repairs it: t0 just before this program's own PowerOffVM_Task, t1 when
//     the watch sees the VM powered on again (vmop's repair), t2 when the VirtualMachine object first
//     changes (resourceVersion, from the Kubernetes watch) after t0, if it does; -lat-oob-n samples.
//
// Every wait is bounded (-lat-sample-timeout, -lat-converge-timeout): a sample that times out is counted
// in "timeouts" and the run goes on. One JSON object on stdout (milliseconds), progress on stderr.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

var (
	flagKubeDir   = flag.String("lat-kube-dir", "", "directory with server, ca.crt, client.crt, client.key (or token) of the API server")
	flagLatNS     = flag.String("lat-ns", "default", "namespace of the VirtualMachines")
	flagLatAPI    = flag.String("lat-api-version", "v1alpha5", "the vmoperator.vmware.com version the PATCH and the watch use")
	flagLatVMs    = flag.String("lat-vms", "", "comma-separated VirtualMachine names (converged, PoweredOn)")
	flagLatN      = flag.Int("lat-n", 100, "rounds of the patch figure (one PoweredOff and one PoweredOn each)")
	flagLatOOBN   = flag.Int("lat-oob-n", 30, "samples of the out-of-band figure")
	flagLatSample = flag.Duration("lat-sample-timeout", 30*time.Second, "bound of one sample's wait for vCenter")
	flagLatConv   = flag.Duration("lat-converge-timeout", 90*time.Second, "bound of the wait until a VM is converged")
	flagLatQuiet  = flag.Duration("lat-quiet", 300*time.Millisecond, "a converged VM has had no change (vCenter or Kubernetes) for this long")
)

// ---- the Kubernetes side: HTTP to the API server, client certificate ----

type kube struct {
	base  string
	token string
	hc    *http.Client
}

func newKube(dir string) (*kube, error) {
	rd := func(f string) ([]byte, error) { return os.ReadFile(path.Join(dir, f)) }
	srv, err := rd("server")
	if err != nil {
		return nil, err
	}
	ca, err := rd("ca.crt")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s/ca.crt: no certificate", dir)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	k := &kube{base: strings.TrimRight(strings.TrimSpace(string(srv)), "/")}
	if tok, err := rd("token"); err == nil && len(bytes.TrimSpace(tok)) > 0 {
		k.token = string(bytes.TrimSpace(tok))
	} else {
		cert, err := tls.LoadX509KeyPair(path.Join(dir, "client.crt"), path.Join(dir, "client.key"))
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if !strings.HasPrefix(k.base, "https://127.0.0.1:") && !strings.HasPrefix(k.base, "https://localhost:") &&
		!strings.HasPrefix(k.base, "https://[::1]:") {
		return nil, fmt.Errorf("API server %s: loopback only", k.base)
	}
	tr := &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 4, ForceAttemptHTTP2: true}
	k.hc = &http.Client{Transport: tr}
	return k, nil
}

func (k *kube) do(ctx context.Context, method, p, ctype string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.base+p, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if k.token != "" {
		req.Header.Set("Authorization", "Bearer "+k.token)
	}
	return k.hc.Do(req)
}

// call: a bounded request whose whole body is read; an error unless 2xx.
func (k *kube) call(ctx context.Context, method, p, ctype string, body []byte) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := k.do(cctx, method, p, ctype, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return b, fmt.Errorf("%s %s: HTTP %d: %.300s", method, p, resp.StatusCode, b)
	}
	return b, nil
}

func vmsPath(ns string) string {
	return "/apis/vmoperator.vmware.com/" + *flagLatAPI + "/namespaces/" + ns + "/virtualmachines"
}

type kvm struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		PowerState string `json:"powerState"`
	} `json:"spec"`
	Status struct {
		PowerState string `json:"powerState"`
		UniqueID   string `json:"uniqueID"`
		Network    *struct {
			PrimaryIP4 string `json:"primaryIP4"`
		} `json:"network"`
	} `json:"status"`
}

func (v *kvm) ip() string {
	if v.Status.Network == nil {
		return ""
	}
	return v.Status.Network.PrimaryIP4
}

// ---- what both watches saw, with the time each change arrived ----

type vcEv struct {
	t    time.Time
	prop string
	val  string
}

type kEv struct {
	t      time.Time
	rv     string
	status string
}

type vcState struct {
	power  string
	ip     string
	recent []types.ManagedObjectReference
	last   time.Time
}

type world struct {
	mu     sync.Mutex
	ch     chan struct{} // closed and replaced on every change
	vcHist map[string][]vcEv
	vcCur  map[string]*vcState
	kHist  map[string][]kEv
	kCur   map[string]kvm
	kLast  map[string]time.Time
	errs   []string
}

func newWorld() *world {
	return &world{ch: make(chan struct{}), vcHist: map[string][]vcEv{}, vcCur: map[string]*vcState{},
		kHist: map[string][]kEv{}, kCur: map[string]kvm{}, kLast: map[string]time.Time{}}
}

func (w *world) notify() { // under mu
	close(w.ch)
	w.ch = make(chan struct{})
}

func (w *world) note(format string, a ...any) {
	w.mu.Lock()
	if len(w.errs) < 20 {
		w.errs = append(w.errs, fmt.Sprintf(format, a...))
	}
	w.mu.Unlock()
	logf(format, a...)
}

// waitFor evaluates pred (under the lock) on every change and every 20 ms until it holds or timeout.
func (w *world) waitFor(ctx context.Context, timeout time.Duration, pred func() (time.Time, bool)) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		t, ok := pred()
		ch := w.ch
		w.mu.Unlock()
		if ok {
			return t, true
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return time.Time{}, false
		}
		if left > 20*time.Millisecond {
			left = 20 * time.Millisecond
		}
		select {
		case <-ch:
		case <-time.After(left):
		case <-ctx.Done():
		}
	}
}

// ---- the vCenter watch: WaitForUpdatesEx over a ContainerView of the datacenter's VMs ----

func (e *env) startVCWatch(ctx context.Context, w *world, dc types.ManagedObjectReference) (func(), error) {
	cv, pc, err := e.vmWatch(ctx, dc, true, []string{"runtime.powerState", "guest.ipAddress", "recentTask"})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer dcancel()
			_ = pc.Destroy(dctx)
			_ = cv.Destroy(dctx)
		}()
		version := ""
		wait := int32(5)
		for wctx.Err() == nil {
			req := types.WaitForUpdatesEx{This: pc.Reference(), Version: version,
				Options: &types.WaitOptions{MaxWaitSeconds: &wait}}
			cctx, ccancel := callCtx(wctx)
			res, err := methods.WaitForUpdatesEx(cctx, e.c, &req)
			ccancel()
			now := time.Now()
			if err != nil {
				if wctx.Err() != nil {
					return
				}
				w.note("vCenter watch: WaitForUpdatesEx: %v (retrying)", err)
				time.Sleep(200 * time.Millisecond)
				continue
			}
			if res.Returnval == nil {
				continue
			}
			version = res.Returnval.Version
			w.mu.Lock()
			for _, fs := range res.Returnval.FilterSet {
				for _, ou := range fs.ObjectSet {
					ref := ou.Obj.Value
					st := w.vcCur[ref]
					if st == nil {
						st = &vcState{}
						w.vcCur[ref] = st
					}
					st.last = now
					for _, ch := range ou.ChangeSet {
						val := ""
						switch v := ch.Val.(type) {
						case types.VirtualMachinePowerState:
							val = string(v)
							st.power = val
						case string:
							val = v
							if ch.Name == "guest.ipAddress" {
								st.ip = v
							}
						case types.ArrayOfManagedObjectReference:
							st.recent = v.ManagedObjectReference
							val = fmt.Sprint(len(v.ManagedObjectReference))
						case nil:
							if ch.Name == "guest.ipAddress" {
								st.ip = ""
							}
						}
						w.vcHist[ref] = append(w.vcHist[ref], vcEv{t: now, prop: ch.Name, val: val})
					}
				}
			}
			w.notify()
			w.mu.Unlock()
			if first != nil {
				close(first)
				first = nil
			}
		}
	}()
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		cancel()
		return nil, fmt.Errorf("vCenter watch: no first update within 30 s")
	}
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			logf("vCenter watch: did not stop within 15 s")
		}
	}, nil
}

// ---- the Kubernetes watch of the namespace's VirtualMachines ----

func (w *world) kSet(now time.Time, v kvm) { // under mu
	name := v.Metadata.Name
	if old, ok := w.kCur[name]; ok && old.Metadata.ResourceVersion == v.Metadata.ResourceVersion {
		return
	}
	w.kCur[name] = v
	w.kLast[name] = now
	w.kHist[name] = append(w.kHist[name], kEv{t: now, rv: v.Metadata.ResourceVersion, status: v.Status.PowerState})
}

func (k *kube) list(ctx context.Context, w *world, ns string) (string, error) {
	b, err := k.call(ctx, http.MethodGet, vmsPath(ns), "", nil)
	if err != nil {
		return "", err
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []kvm `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return "", err
	}
	now := time.Now()
	w.mu.Lock()
	for _, v := range l.Items {
		w.kSet(now, v)
	}
	w.notify()
	w.mu.Unlock()
	return l.Metadata.ResourceVersion, nil
}

func (k *kube) startWatch(ctx context.Context, w *world, ns string) (func(), error) {
	rv, err := k.list(ctx, w, ns)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for wctx.Err() == nil {
			if rv == "" {
				if rv, err = k.list(wctx, w, ns); err != nil {
					if wctx.Err() == nil {
						w.note("kube watch: list: %v (retrying)", err)
						time.Sleep(200 * time.Millisecond)
					}
					continue
				}
			}
			p := vmsPath(ns) + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=" + rv
			resp, err := k.do(wctx, http.MethodGet, p, "", nil)
			if err != nil {
				if wctx.Err() == nil {
					w.note("kube watch: %v (retrying)", err)
					time.Sleep(200 * time.Millisecond)
				}
				continue
			}
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
				resp.Body.Close()
				w.note("kube watch: HTTP %d: %s (listing again)", resp.StatusCode, b)
				rv = ""
				time.Sleep(200 * time.Millisecond)
				continue
			}
			dec := json.NewDecoder(resp.Body)
			for {
				var ev struct {
					Type   string          `json:"type"`
					Object json.RawMessage `json:"object"`
				}
				if err := dec.Decode(&ev); err != nil {
					break // the stream ended (timeoutSeconds) or was cancelled: watch again from rv
				}
				now := time.Now()
				var v kvm
				if err := json.Unmarshal(ev.Object, &v); err != nil {
					continue
				}
				switch ev.Type {
				case "ERROR": // typically 410 Gone: list again
					rv = ""
				case "BOOKMARK":
					rv = v.Metadata.ResourceVersion
				case "ADDED", "MODIFIED":
					rv = v.Metadata.ResourceVersion
					w.mu.Lock()
					w.kSet(now, v)
					w.notify()
					w.mu.Unlock()
				case "DELETED":
					rv = v.Metadata.ResourceVersion
				}
				if rv == "" {
					break
				}
			}
			resp.Body.Close()
		}
	}()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			logf("kube watch: did not stop within 15 s")
		}
	}, nil
}

// ---- the samples ----

type latRun struct {
	e      *env
	k      *kube
	w      *world
	ns     string
	refs   map[string]types.ManagedObjectReference // name -> VM
	series map[string][]float64                    // figure -> ms
	counts map[string]int
	mu     sync.Mutex
}

func (r *latRun) add(series string, d time.Duration) {
	r.mu.Lock()
	r.series[series] = append(r.series[series], float64(d.Microseconds())/1000)
	r.mu.Unlock()
}

func (r *latRun) count(what string) {
	r.mu.Lock()
	r.counts[what]++
	r.mu.Unlock()
}

// converged: PoweredOn in vCenter with an IP, status PoweredOn with an IP, spec PoweredOn, quiet for -lat-quiet.
func (r *latRun) converged(ctx context.Context, name string, timeout time.Duration) bool {
	ref := r.refs[name].Value
	_, ok := r.w.waitFor(ctx, timeout, func() (time.Time, bool) {
		st := r.w.vcCur[ref]
		v, have := r.w.kCur[name]
		if st == nil || !have || st.power != string(types.VirtualMachinePowerStatePoweredOn) || st.ip == "" {
			return time.Time{}, false
		}
		if v.Spec.PowerState != "PoweredOn" || v.Status.PowerState != "PoweredOn" || v.ip() == "" {
			return time.Time{}, false
		}
		q := time.Since(st.last) >= *flagLatQuiet && time.Since(r.w.kLast[name]) >= *flagLatQuiet
		return time.Now(), q
	})
	return ok
}

// vcAfter: the first vCenter change of prop to val on ref that arrived after t0.
func (r *latRun) vcAfter(ref, prop, val string, t0 time.Time) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		for _, ev := range r.w.vcHist[ref] {
			if ev.t.After(t0) && ev.prop == prop && ev.val == val {
				return ev.t, true
			}
		}
		return time.Time{}, false
	}
}

// kAfter: the first change of the VirtualMachine after t0 (status "" = any change, else status.powerState).
func (r *latRun) kAfter(name, status string, t0 time.Time) func() (time.Time, bool) {
	return func() (time.Time, bool) {
		for _, ev := range r.w.kHist[name] {
			if ev.t.After(t0) && (status == "" || ev.status == status) {
				return ev.t, true
			}
		}
		return time.Time{}, false
	}
}

// powerTask: the VM's first task of kind ("powerOn"/"powerOff") queued after t0, read from its recentTask.
func (r *latRun) powerTask(ctx context.Context, name, kind string, t0 time.Time) (*types.TaskInfo, error) {
	ref := r.refs[name].Value
	r.w.mu.Lock()
	var recent []types.ManagedObjectReference
	if st := r.w.vcCur[ref]; st != nil {
		recent = append(recent, st.recent...)
	}
	r.w.mu.Unlock()
	if len(recent) > 8 {
		recent = recent[len(recent)-8:]
	}
	if len(recent) == 0 {
		return nil, fmt.Errorf("%s: no recentTask", name)
	}
	var tasks []mo.Task
	cctx, cancel := callCtx(ctx)
	err := r.e.pc.Retrieve(cctx, recent, []string{"info"}, &tasks)
	cancel()
	if err != nil {
		return nil, err
	}
	var best *types.TaskInfo
	for i := range tasks {
		in := &tasks[i].Info
		if !strings.HasSuffix(in.DescriptionId, "."+kind) || in.QueueTime.Before(t0) {
			continue
		}
		if best == nil || in.QueueTime.Before(best.QueueTime) {
			best = in
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%s: no %s task queued after the patch", name, kind)
	}
	return best, nil
}

func (r *latRun) patch(ctx context.Context, name string, spec map[string]any) error {
	b, _ := json.Marshal(map[string]any{"spec": spec})
	_, err := r.k.call(ctx, http.MethodPatch, vmsPath(r.ns)+"/"+name, "application/merge-patch+json", b)
	return err
}

// patchOne: one direction of the patch figure on name. Returns whether vCenter acted.
func (r *latRun) patchOne(ctx context.Context, name, dir string) bool {
	spec := map[string]any{"powerState": "PoweredOn"}
	vcWant, kind := string(types.VirtualMachinePowerStatePoweredOn), "powerOn"
	if dir == "off" {
		spec = map[string]any{"powerState": "PoweredOff", "powerOffMode": "Hard"}
		vcWant, kind = string(types.VirtualMachinePowerStatePoweredOff), "powerOff"
	}
	ref := r.refs[name].Value
	t0 := time.Now()
	err := r.patch(ctx, name, spec)
	r.add("patch_http_"+dir, time.Since(t0))
	if err != nil {
		r.count("patch_" + dir + "_errors")
		r.w.note("patch %s %s: %v", name, dir, err)
		return false
	}
	t1, ok := r.w.waitFor(ctx, *flagLatSample, r.vcAfter(ref, "runtime.powerState", vcWant, t0))
	if !ok {
		r.count("patch_" + dir + "_timeouts")
		r.w.note("patch %s %s: vCenter not %s within %s", name, dir, vcWant, *flagLatSample)
		return false
	}
	r.add("patch_vcenter_"+dir, t1.Sub(t0))
	if ti, err := r.powerTask(ctx, name, kind, t0); err == nil {
		r.add("patch_task_queued_"+dir, ti.QueueTime.Sub(t0))
		if ti.StartTime != nil {
			r.add("patch_task_started_"+dir, ti.StartTime.Sub(t0))
		}
	} else {
		r.count("patch_" + dir + "_no_task")
		r.w.note("patch %s %s: %v", name, dir, err)
	}
	want := "PoweredOn"
	if dir == "off" {
		want = "PoweredOff"
	}
	if t2, ok := r.w.waitFor(ctx, *flagLatSample, r.kAfter(name, want, t0)); ok {
		r.add("patch_status_"+dir, t2.Sub(t0))
	} else {
		r.count("patch_" + dir + "_status_timeouts")
	}
	r.w.mu.Lock()
	if tc, ok := r.kAfter(name, "", t0)(); ok { // the first watch event after t0: the patch, committed
		r.add("patch_committed_"+dir, tc.Sub(t0))
	}
	r.w.mu.Unlock()
	return true
}

// oobOne: one sample of the out-of-band figure on name.
func (r *latRun) oobOne(ctx context.Context, name string) {
	ref := r.refs[name]
	vm := object.NewVirtualMachine(r.e.c, ref)
	t0 := time.Now()
	cctx, cancel := callCtx(ctx)
	task, err := vm.PowerOff(cctx)
	cancel()
	r.add("oob_call", time.Since(t0))
	if err != nil {
		r.count("oob_errors")
		r.w.note("oob %s: PowerOffVM_Task: %v", name, err)
		return
	}
	on := string(types.VirtualMachinePowerStatePoweredOn)
	if tOff, ok := r.w.waitFor(ctx, *flagLatSample, r.vcAfter(ref.Value, "runtime.powerState",
		string(types.VirtualMachinePowerStatePoweredOff), t0)); ok {
		r.add("oob_seen_off", tOff.Sub(t0))
	}
	t1, ok := r.w.waitFor(ctx, *flagLatSample, r.vcAfter(ref.Value, "runtime.powerState", on, t0))
	if !ok {
		r.count("oob_timeouts")
		r.w.note("oob %s: not powered on again within %s", name, *flagLatSample)
	} else {
		r.add("oob_repaired", t1.Sub(t0))
		if ti, err := r.powerTask(ctx, name, "powerOn", t0); err == nil {
			r.add("oob_repair_task_queued", ti.QueueTime.Sub(t0))
			if ti.StartTime != nil {
				r.add("oob_repair_task_started", ti.StartTime.Sub(t0))
			}
		} else {
			r.count("oob_no_repair_task")
		}
	}
	// our own power-off task: only whether it failed
	var mt mo.Task
	cctx, cancel = callCtx(ctx)
	if err := r.e.pc.RetrieveOne(cctx, task.Reference(), []string{"info"}, &mt); err == nil &&
		mt.Info.State == types.TaskInfoStateError {
		r.count("oob_poweroff_task_failed")
	}
	cancel()
	if !r.converged(ctx, name, *flagLatConv) {
		r.count("oob_converge_timeouts")
		r.w.note("oob %s: not converged within %s", name, *flagLatConv)
	}
	r.w.mu.Lock()
	t2, ok := r.kAfter(name, "", t0)()
	r.w.mu.Unlock()
	if ok {
		r.add("oob_status_changed", t2.Sub(t0))
	} else {
		r.count("oob_status_unchanged")
	}
}

func statsMS(xs []float64) map[string]any {
	if len(xs) == 0 {
		return map[string]any{"n": 0}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return map[string]any{"n": len(s), "p50": round(quantile(s, 0.50), 1), "p95": round(quantile(s, 0.95), 1),
		"p99": round(quantile(s, 0.99), 1), "max": round(s[len(s)-1], 1), "min": round(s[0], 1)}
}

func runLatency(root context.Context, e *env, dc string) {
	if *flagKubeDir == "" || *flagLatVMs == "" {
		die("-phase latency needs -lat-kube-dir and -lat-vms")
	}
	k, err := newKube(*flagKubeDir)
	if err != nil {
		die("kube: %v", err)
	}
	dcRef, err := e.find(root, dc)
	if err != nil {
		die("datacenter: %v", err)
	}
	w := newWorld()
	stopK, err := k.startWatch(root, w, *flagLatNS)
	if err != nil {
		die("kube watch: %v", err)
	}
	defer stopK()
	stopV, err := e.startVCWatch(root, w, dcRef)
	if err != nil {
		die("vCenter watch: %v", err)
	}
	defer stopV()
	r := &latRun{e: e, k: k, w: w, ns: *flagLatNS, refs: map[string]types.ManagedObjectReference{},
		series: map[string][]float64{}, counts: map[string]int{}}
	names := strings.Split(*flagLatVMs, ",")
	w.mu.Lock()
	for _, n := range names {
		v, ok := w.kCur[n]
		if !ok || v.Status.UniqueID == "" {
			w.mu.Unlock()
			die("VirtualMachine %s/%s: not there or no status.uniqueID", *flagLatNS, n)
		}
		id := v.Status.UniqueID
		if i := strings.LastIndex(id, ":"); i >= 0 {
			id = id[i+1:]
		}
		r.refs[n] = types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
	}
	w.mu.Unlock()
	for _, n := range names {
		if !r.converged(root, n, *flagLatConv) {
			die("%s: not converged within %s", n, *flagLatConv)
		}
	}
	start := time.Now()
	e.cnt.setPhase("latency-patch")
	for i := 0; i < *flagLatN && root.Err() == nil; i++ {
		n := names[i%len(names)]
		if !r.converged(root, n, *flagLatConv) {
			r.count("patch_converge_timeouts")
			w.note("patch round %d: %s not converged within %s", i, n, *flagLatConv)
		}
		if r.patchOne(root, n, "off") {
			// before powering on again: vmop has reported PoweredOff and settled
			w.waitFor(root, *flagLatConv, func() (time.Time, bool) {
				v := w.kCur[n]
				return time.Now(), v.Status.PowerState == "PoweredOff" && time.Since(w.kLast[n]) >= *flagLatQuiet &&
					time.Since(w.vcCur[r.refs[n].Value].last) >= *flagLatQuiet
			})
		}
		r.patchOne(root, n, "on")
		if (i+1)%10 == 0 {
			logf("latency: %d/%d patch rounds", i+1, *flagLatN)
		}
	}
	patchS := time.Since(start)
	start = time.Now()
	e.cnt.setPhase("latency-oob")
	for i := 0; i < *flagLatOOBN && root.Err() == nil; i++ {
		n := names[i%len(names)]
		if !r.converged(root, n, *flagLatConv) {
			r.count("oob_converge_timeouts")
			w.note("oob sample %d: %s not converged within %s", i, n, *flagLatConv)
			continue
		}
		r.oobOne(root, n)
		if (i+1)%10 == 0 {
			logf("latency: %d/%d out-of-band samples", i+1, *flagLatOOBN)
		}
	}
	oobS := time.Since(start)
	e.cnt.setPhase("idle")

	// PowerStateDrift events (vmop's reaction to the out-of-band power-offs)
	drift := -1
	if b, err := k.call(root, http.MethodGet, "/api/v1/namespaces/"+*flagLatNS+"/events", "", nil); err == nil {
		var l struct {
			Items []struct {
				Reason string `json:"reason"`
				Count  int    `json:"count"`
				Series *struct {
					Count int `json:"count"`
				} `json:"series"`
			} `json:"items"`
		}
		if json.Unmarshal(b, &l) == nil {
			drift = 0
			for _, ev := range l.Items {
				if ev.Reason == "PowerStateDrift" {
					c := ev.Count
					if ev.Series != nil && ev.Series.Count > c {
						c = ev.Series.Count
					}
					if c < 1 {
						c = 1
					}
					drift += c
				}
			}
		}
	}

	figs := map[string]any{}
	for k, v := range r.series {
		figs[k] = statsMS(v)
	}
	callsPatch, _ := e.cnt.total("latency-patch")
	callsOOB, _ := e.cnt.total("latency-oob")
	out := map[string]any{
		"vms": names, "api_version": *flagLatAPI, "patch_rounds": *flagLatN, "oob_samples": *flagLatOOBN,
		"patch_s": round(patchS.Seconds(), 1), "oob_s": round(oobS.Seconds(), 1),
		"figures_ms": figs, "counts": r.counts, "power_state_drift_events": drift,
		"samples_ms": r.series, "bench_soap_calls": map[string]int{"patch": callsPatch, "oob": callsOOB},
	}
	if len(w.errs) > 0 {
		out["error_samples"] = w.errs
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

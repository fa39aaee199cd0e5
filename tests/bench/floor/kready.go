// kready.go: -phase kready, the provisioning benchmarks' readiness clock on the Kubernetes side.
//
// One list + watch of the VirtualMachines of -lat-ns (latency.go's kube and world) records, for every VM
// whose name starts with -kready-prefix, the moment its watch event first showed it PoweredOn with a
// primaryIP4. It ends when -kready-n of them are ready or after -kready-timeout, and prints one JSON object:
// {"n", "ready", "ready_ms": [epoch ms of each first-ready, ascending], "ready_by": {name: epoch ms},
// "lists", "errors"}. One watch costs the
// API server far less than listing every VM twice a second, and it times each VM to the event, not to the
// next poll. With -kready-lease NS/NAME it also reports that Lease's spec.acquireTime as "lease_acquire_ms"
// (the moment a standby vmop became the leader: the start of the backlog benchmark).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

var (
	flagKReadyN       = flag.Int("kready-n", 0, "kready: stop once this many VMs are ready")
	flagKReadyPrefix  = flag.String("kready-prefix", "bench-", "kready: count VMs whose name starts with this")
	flagKReadyTimeout = flag.Duration("kready-timeout", 10*time.Minute, "kready: bound of the whole wait")
	flagKReadyLease   = flag.String("kready-lease", "", "kready: NS/NAME of a Lease whose spec.acquireTime to report")
	flagKReadyStarted = flag.String("kready-started", "", "kready: a file created once the watch is established")
)

func ms(t time.Time) int64 { return t.UnixNano() / int64(time.Millisecond) }

// leaseAcquired: the Lease's spec.acquireTime in epoch ms, 0 when there is none (yet).
func leaseAcquired(ctx context.Context, k *kube, nsName string) int64 {
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		return 0
	}
	b, err := k.call(ctx, http.MethodGet, "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/"+name, "", nil)
	if err != nil {
		return 0
	}
	var l struct {
		Spec struct {
			AcquireTime string `json:"acquireTime"`
		} `json:"spec"`
	}
	if json.Unmarshal(b, &l) != nil {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, l.Spec.AcquireTime)
	if err != nil {
		return 0
	}
	return ms(t)
}

func runKReady() {
	if *flagKubeDir == "" || *flagKReadyN < 1 {
		die("-phase kready needs -lat-kube-dir and -kready-n >= 1")
	}
	k, err := newKube(*flagKubeDir)
	if err != nil {
		die("kube: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *flagKReadyTimeout)
	defer cancel()
	w := newWorld()
	stop, err := k.startWatch(ctx, w, *flagLatNS)
	if err != nil {
		die("kube watch: %v", err)
	}
	if *flagKReadyStarted != "" {
		if err := os.WriteFile(*flagKReadyStarted, nil, 0o644); err != nil {
			die("%s: %v", *flagKReadyStarted, err)
		}
	}
	readyAt := map[string]time.Time{}
	w.waitFor(ctx, *flagKReadyTimeout, func() (time.Time, bool) { // under w.mu
		for name, v := range w.kCur {
			if _, seen := readyAt[name]; seen || !strings.HasPrefix(name, *flagKReadyPrefix) {
				continue
			}
			if v.Status.PowerState == "PoweredOn" && v.ip() != "" {
				readyAt[name] = w.kLast[name]
			}
		}
		return time.Time{}, len(readyAt) >= *flagKReadyN
	})
	stop()
	times := make([]int64, 0, len(readyAt))
	by := make(map[string]int64, len(readyAt))
	for name, t := range readyAt {
		times = append(times, ms(t))
		by[name] = ms(t)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	w.mu.Lock()
	out := map[string]any{"n": *flagKReadyN, "ready": len(times), "ready_ms": times, "ready_by": by, "errors": w.errs}
	w.mu.Unlock()
	if *flagKReadyLease != "" {
		lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
		out["lease_acquire_ms"] = leaseAcquired(lctx, k, *flagKReadyLease)
		lcancel()
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
}

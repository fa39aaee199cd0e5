// kcreate.go: -phase kcreate, the gradual provisioning benchmark's arrivals on the Kubernetes side.
//
// It reads -kcreate-file, a Kubernetes List in JSON (what `kubectl create --dry-run=client -o json -f
// bench.yaml` prints), and POSTs its VirtualMachines one by one to the API server, the i-th at
// start + i / -rate seconds, each from its own goroutine, so that a slow answer never delays the next
// arrival (the rate is what the machine is offered, as VMs created one at a time by users would be).
// Objects of other kinds in the list are skipped (the caller creates the Secret before). It prints one
// JSON object: {"n", "rate", "posted", "errors", "posted_ms": {name: epoch ms just before its POST was sent},
// "post_p50_ms", "post_p99_ms", "span_s", "error_samples"}. kready (kready.go), started before, times each
// VM's readiness; the difference of the two is the VM's provisioning latency. Every POST is bounded
// (kube.call: 30 s).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

var (
	flagRate        = flag.Float64("rate", 0, "create/kcreate: VMs started per second (0: all at once, bounded by -c for the floor)")
	flagKCreateFile = flag.String("kcreate-file", "", "kcreate: a JSON List of the objects to POST (its VirtualMachines)")
)

type kobj struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// kcreateItems: the VirtualMachines of the List in f, each with its raw JSON.
func kcreateItems(f string) ([]kobj, []json.RawMessage, error) {
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, nil, err
	}
	var l struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f, err)
	}
	var objs []kobj
	var raws []json.RawMessage
	for _, raw := range l.Items {
		var o kobj
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		if o.Kind != "VirtualMachine" || !strings.HasPrefix(o.APIVersion, "vmoperator.vmware.com/") {
			continue
		}
		objs = append(objs, o)
		raws = append(raws, raw)
	}
	return objs, raws, nil
}

func runKCreate() {
	if *flagKubeDir == "" || *flagKCreateFile == "" || *flagRate <= 0 {
		die("-phase kcreate needs -lat-kube-dir, -kcreate-file and -rate > 0")
	}
	k, err := newKube(*flagKubeDir)
	if err != nil {
		die("kube: %v", err)
	}
	objs, raws, err := kcreateItems(*flagKCreateFile)
	if err != nil {
		die("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *flagPhaseT)
	defer cancel()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		posted  = map[string]int64{}
		errs    int
		samples []string
		postMS  []float64
	)
	start := time.Now()
	for i := range objs {
		at := start.Add(time.Duration(float64(i) / *flagRate * float64(time.Second)))
		select {
		case <-time.After(time.Until(at)):
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		o, raw := objs[i], raws[i]
		ns := o.Metadata.Namespace
		if ns == "" {
			ns = *flagLatNS
		}
		p := "/apis/" + o.APIVersion + "/namespaces/" + ns + "/virtualmachines"
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			_, err := k.call(ctx, http.MethodPost, p, "application/json", raw)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs++
				if len(samples) < 10 {
					samples = append(samples, o.Metadata.Name+": "+err.Error())
				}
				logf("kcreate %s: %v", o.Metadata.Name, err)
				return
			}
			posted[o.Metadata.Name] = ms(t0)
			postMS = append(postMS, float64(d.Microseconds())/1000)
		}()
	}
	wg.Wait()
	out := map[string]any{"n": len(objs), "rate": *flagRate, "posted": len(posted), "errors": errs, "posted_ms": posted,
		"post_p50_ms": round(quantile(postMS, 0.5), 1), "post_p99_ms": round(quantile(postMS, 0.99), 1),
		"span_s": round(time.Since(start).Seconds(), 3)}
	emitResult(out, errs, samples)
}

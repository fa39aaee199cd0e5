package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	maxLatencyMs = 60000 // one minute: a longer delay is a hang, not latency
	maxRules     = 1000
)

// ruleSpec is one rule as the control API reads and shows it.
type ruleSpec struct {
	Method     string `json:"method"`
	Path       string `json:"path"`
	Code       *int   `json:"code,omitempty"`  // absent: 500 (410 with watchEvent)
	Count      *int   `json:"count,omitempty"` // absent: 1; < 0: unlimited; 0: refused
	LatencyMs  int    `json:"latencyMs"`
	Watch      *bool  `json:"watch,omitempty"`
	WatchEvent bool   `json:"watchEvent,omitempty"`
}

// spec is the body of POST /faults; every key is optional and they combine.
type spec struct {
	DropWatches bool       `json:"dropWatches"`
	LatencyMs   *int       `json:"latencyMs"`
	Rules       []ruleSpec `json:"rules"`
}

type rule struct {
	method     string // upper case; "" = any
	path       string
	re         *regexp.Regexp
	code       int
	count      int // < 0: unlimited
	latencyMs  int
	watch      *bool
	watchEvent bool
}

func (r *rule) view() ruleSpec {
	code, count := r.code, r.count
	return ruleSpec{Method: r.method, Path: r.path, Code: &code, Count: &count, LatencyMs: r.latencyMs,
		Watch: r.watch, WatchEvent: r.watchEvent}
}

func (r *rule) matches(method, path string, isWatch bool) bool {
	if r.method != "" && r.method != method {
		return false
	}
	if r.watch != nil && *r.watch != isWatch {
		return false
	}
	return r.re.MatchString(path)
}

// watchEntry is one watch request open through the proxy.
type watchEntry struct {
	cancel  context.CancelFunc
	dropped atomic.Bool
	desc    string // method and path, for the log
}

// faults is the proxy's fault state, shared by the proxy and the control API.
type faults struct {
	log *log.Logger

	mu             sync.Mutex
	latencyMs      int
	rules          []*rule
	watches        map[*watchEntry]struct{}
	requests       int64
	injected       int64
	droppedWatches int64
}

func newFaults(l *log.Logger) *faults {
	return &faults{log: l, watches: make(map[*watchEntry]struct{})}
}

// decision is what happens to one request: wait delay, then answer with code (0: forward).
type decision struct {
	delay      time.Duration
	code       int
	watchEvent bool
}

// admit counts a request and picks the first rule that applies to it (using one of its count).
func (f *faults) admit(method, path string, isWatch bool) decision {
	method = strings.ToUpper(method)
	f.mu.Lock()
	f.requests++
	d := decision{delay: time.Duration(f.latencyMs) * time.Millisecond}
	var hit *rule
	remaining := 0
	for i, r := range f.rules {
		if !r.matches(method, path, isWatch) {
			continue
		}
		hit = r
		if r.count > 0 {
			r.count--
			if r.count == 0 {
				f.rules = append(f.rules[:i:i], f.rules[i+1:]...)
			}
		}
		remaining = r.count
		f.injected++
		break
	}
	f.mu.Unlock()
	if hit == nil {
		return d
	}
	d.delay += time.Duration(hit.latencyMs) * time.Millisecond
	d.code = hit.code
	d.watchEvent = hit.watchEvent && isWatch
	what := fmt.Sprintf("code %d", hit.code)
	switch {
	case hit.code == 0:
		what = fmt.Sprintf("delay %d ms", hit.latencyMs)
	case d.watchEvent:
		what = fmt.Sprintf("watch ERROR event %d", hit.code)
	}
	left := "unlimited"
	if remaining >= 0 {
		left = fmt.Sprint(remaining)
	}
	f.log.Printf("injected %s: %s %s (rule %q, %s left)", what, method, path, hit.path, left)
	return d
}

func (f *faults) addWatch(cancel context.CancelFunc, desc string) *watchEntry {
	w := &watchEntry{cancel: cancel, desc: desc}
	f.mu.Lock()
	f.watches[w] = struct{}{}
	f.mu.Unlock()
	return w
}

func (f *faults) removeWatch(w *watchEntry) {
	f.mu.Lock()
	delete(f.watches, w)
	f.mu.Unlock()
}

// dropWatches ends every open watch: its upstream request is cancelled and its handler aborts
// the client connection (see proxy.go).
func (f *faults) dropWatches() int {
	f.mu.Lock()
	ws := make([]*watchEntry, 0, len(f.watches))
	for w := range f.watches {
		if !w.dropped.Swap(true) {
			ws = append(ws, w)
		}
		delete(f.watches, w)
	}
	f.droppedWatches += int64(len(ws))
	f.mu.Unlock()
	for _, w := range ws {
		w.cancel()
		f.log.Printf("dropped watch: %s", w.desc)
	}
	return len(ws)
}

// parseSpec reads and checks a POST body; nothing of it applies unless all of it is valid.
func parseSpec(body []byte) (*spec, []*rule, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil, errors.New("empty body: want a JSON object such as {\"dropWatches\":true}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var s spec
	if err := dec.Decode(&s); err != nil {
		return nil, nil, fmt.Errorf("not a valid fault spec: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("not a valid fault spec: data after the JSON object")
	}
	if err := checkKeys(body); err != nil {
		return nil, nil, err
	}
	if s.LatencyMs != nil && (*s.LatencyMs < 0 || *s.LatencyMs > maxLatencyMs) {
		return nil, nil, fmt.Errorf("latencyMs %d: want 0..%d", *s.LatencyMs, maxLatencyMs)
	}
	rules := make([]*rule, 0, len(s.Rules))
	for i, rs := range s.Rules {
		r, err := compileRule(rs)
		if err != nil {
			return nil, nil, fmt.Errorf("rules[%d]: %v", i, err)
		}
		rules = append(rules, r)
	}
	return &s, rules, nil
}

var (
	specKeys = map[string]bool{"dropWatches": true, "latencyMs": true, "rules": true}
	ruleKeys = map[string]bool{"method": true, "path": true, "code": true, "count": true, "latencyMs": true,
		"watch": true, "watchEvent": true}
)

// checkKeys refuses keys spelt otherwise than the API has them (encoding/json matches them
// case-insensitively, so {"dropwatches":true} would pass for {"dropWatches":true}).
func checkKeys(body []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return fmt.Errorf("not a valid fault spec: %v", err)
	}
	for k := range top {
		if !specKeys[k] {
			return fmt.Errorf("unknown key %q: want dropWatches, latencyMs, rules", k)
		}
	}
	var rules []map[string]json.RawMessage
	if raw, ok := top["rules"]; ok {
		if err := json.Unmarshal(raw, &rules); err != nil {
			return fmt.Errorf("rules: %v", err)
		}
	}
	for i, r := range rules {
		for k := range r {
			if !ruleKeys[k] {
				return fmt.Errorf("rules[%d]: unknown key %q: want method, path, code, count, latencyMs, watch, watchEvent", i, k)
			}
		}
	}
	return nil
}

func compileRule(rs ruleSpec) (*rule, error) {
	r := &rule{method: strings.ToUpper(strings.TrimSpace(rs.Method)), path: rs.Path, code: 500, count: 1,
		latencyMs: rs.LatencyMs, watch: rs.Watch, watchEvent: rs.WatchEvent}
	if r.method == "*" {
		r.method = ""
	}
	re, err := regexp.Compile(rs.Path)
	if err != nil {
		return nil, fmt.Errorf("path is not a valid regular expression: %v", err)
	}
	r.re = re
	if rs.WatchEvent {
		r.code = 410
	}
	if rs.Code != nil {
		r.code = *rs.Code
		if r.code != 0 && (r.code < 200 || r.code > 599) {
			return nil, fmt.Errorf("code %d: want 0 (delay only) or 200..599", r.code)
		}
		if r.code == 0 && rs.WatchEvent {
			return nil, errors.New("watchEvent needs a code (410 for an expired resourceVersion)")
		}
	}
	if rs.Count != nil {
		r.count = *rs.Count
		if r.count == 0 {
			return nil, errors.New("count 0 would never apply: want > 0, or < 0 for unlimited")
		}
	}
	if r.latencyMs < 0 || r.latencyMs > maxLatencyMs {
		return nil, fmt.Errorf("latencyMs %d: want 0..%d", r.latencyMs, maxLatencyMs)
	}
	return r, nil
}

// apply applies a checked spec: drop, then latency, then rules appended.
func (f *faults) apply(s *spec, rules []*rule) error {
	f.mu.Lock()
	if len(f.rules)+len(rules) > maxRules {
		n := len(f.rules)
		f.mu.Unlock()
		return fmt.Errorf("too many rules: %d armed, %d more, at most %d", n, len(rules), maxRules)
	}
	if s.LatencyMs != nil {
		f.latencyMs = *s.LatencyMs
	}
	f.rules = append(f.rules, rules...)
	f.mu.Unlock()
	if s.DropWatches {
		f.dropWatches()
	}
	return nil
}

func (f *faults) clear() {
	f.mu.Lock()
	f.rules = nil
	f.latencyMs = 0
	f.mu.Unlock()
}

// stateView is the answer of GET /faults.
type stateView struct {
	LatencyMs      int        `json:"latencyMs"`
	Rules          []ruleSpec `json:"rules"`
	OpenWatches    int        `json:"openWatches"`
	Requests       int64      `json:"requests"`
	Injected       int64      `json:"injected"`
	DroppedWatches int64      `json:"droppedWatches"`
}

func (f *faults) state() stateView {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := stateView{LatencyMs: f.latencyMs, Rules: make([]ruleSpec, 0, len(f.rules)), OpenWatches: len(f.watches),
		Requests: f.requests, Injected: f.injected, DroppedWatches: f.droppedWatches}
	for _, r := range f.rules {
		v.Rules = append(v.Rules, r.view())
	}
	return v
}

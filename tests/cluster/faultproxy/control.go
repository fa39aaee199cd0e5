package main

import (
	"encoding/json"
	"io"
	"net/http"
)

const maxSpecBytes = 1 << 20

// controlHandler is the control API (plain HTTP, loopback only, no auth):
//
//	GET    /healthz  ok
//	GET    /faults   the state: latency, remaining rules, counters
//	POST   /faults   apply a spec ({"dropWatches":true,"latencyMs":N,"rules":[...]}); PUT alike
//	DELETE /faults   clear rules and latency
func controlHandler(f *faults) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("/faults", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost, http.MethodPut:
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSpecBytes))
			if err != nil {
				writeStatus(w, http.StatusBadRequest, "BadRequest", "reading the fault spec: "+err.Error())
				return
			}
			s, rules, err := parseSpec(body)
			if err == nil {
				err = f.apply(s, rules)
			}
			if err != nil {
				f.log.Printf("control: refused a fault spec: %v", err)
				writeStatus(w, http.StatusBadRequest, "BadRequest", err.Error())
				return
			}
		case http.MethodDelete:
			f.clear()
		default:
			w.Header().Set("Allow", "GET, POST, PUT, DELETE")
			writeStatus(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "use GET, POST or DELETE")
			return
		}
		b, _ := json.Marshal(f.state())
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(b, '\n'))
	})
	return mux
}

// trace.go: -trace-calls FILE, one line per SOAP request the simulator serves, for finding where
// a client's calls go (tests/bench). A line holds the time, the method, the object it is called on
// and, for property reads, the objects and property paths asked for: never a request's body, so
// a Login's password is not written. Responses are dropped.
package main

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"
)

// summarize turns one SOAP request into "Method this obj=... paths=...".
func summarize(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	var method, this string
	var objs, paths []string
	var cur string
	depth, bodyDepth := 0, -1
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			cur = t.Name.Local
			if cur == "Body" && bodyDepth < 0 {
				bodyDepth = depth
			} else if bodyDepth >= 0 && depth == bodyDepth+1 && method == "" {
				method = cur
			}
		case xml.EndElement:
			depth--
			cur = ""
		case xml.CharData:
			v := strings.TrimSpace(string(t))
			if v == "" {
				continue
			}
			switch cur {
			case "_this":
				this = v
			case "obj":
				objs = append(objs, v)
			case "pathSet":
				paths = append(paths, v)
			}
		}
	}
	s := method + " " + this
	if len(objs) > 0 {
		s += " obj=" + strings.Join(objs, ",")
	}
	if len(paths) > 0 {
		s += " paths=" + strings.Join(paths, ",")
	}
	return s
}

// traceCalls points the simulator's SOAP trace (an *os.File) at a pipe whose reader writes one
// summary line per request to path. A body may span lines: a record runs until the next line
// that starts with "Request: " or "Response: ".
func traceCalls(path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fatalf("-trace-calls: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		fatalf("-trace-calls: %v", err)
	}
	go func() {
		br := bufio.NewReaderSize(r, 1<<16)
		var req []byte
		inReq := false
		flush := func() {
			if inReq {
				fmt.Fprintf(f, "%s %s\n", time.Now().Format("15:04:05.000000"), summarize(req))
			}
			req, inReq = req[:0], false
		}
		for {
			line, err := br.ReadBytes('\n')
			switch {
			case bytes.HasPrefix(line, []byte("Request: ")):
				flush()
				req, inReq = append(req, line[len("Request: "):]...), true
			case bytes.HasPrefix(line, []byte("Response: ")):
				flush()
			case inReq:
				req = append(req, line...)
			}
			if err != nil {
				flush()
				return
			}
		}
	}()
	simulator.TraceFile = w
	simulator.Trace = true
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The bound of every wait in these tests: generous, the machine may be busy.
const bound = 10 * time.Second

// certFiles are the PEM files made once for the whole run.
type certFiles struct {
	servingCert, servingKey string // the proxy's serving certificate (SAN 127.0.0.1)
	clientCert, clientKey   string // presented upstream by requests without Authorization
	servingPool             *x509.CertPool
}

var certs certFiles

func TestMain(m *testing.M) {
	if os.Getenv("FAULTPROXY_TEST_MAIN") == "1" {
		main() // the test binary as the real program (TestSIGTERM, TestDieWithParent)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "faultproxy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	certs = makeCerts(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func selfSigned(dir, name string, usage x509.ExtKeyUsage) (certPath, keyPath string, cert *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	must(os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return certPath, keyPath, cert
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func makeCerts(dir string) certFiles {
	var c certFiles
	var serving *x509.Certificate
	c.servingCert, c.servingKey, serving = selfSigned(dir, "serving", x509.ExtKeyUsageServerAuth)
	c.clientCert, c.clientKey, _ = selfSigned(dir, "client", x509.ExtKeyUsageClientAuth)
	c.servingPool = x509.NewCertPool()
	c.servingPool.AddCert(serving)
	return c
}

// ---- the fake upstream -------------------------------------------------------------------

// upstream is a stand-in kube-apiserver: it echoes plain requests and streams watches.
type upstream struct {
	*httptest.Server
	hits    atomic.Int64
	release chan struct{} // ends the /hold watches
	once    sync.Once
	caFile  string
}

// echo is what the upstream saw of a plain request.
type echo struct {
	Method, Path, RawPath     string
	RawQuery, Body            string
	Authorization, XTest      string
	AcceptEncoding, Forwarded string
	ClientCert                bool
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{release: make(chan struct{})}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.Server.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	u.StartTLS()
	u.caFile = filepath.Join(t.TempDir(), "upstream-ca.crt")
	must(os.WriteFile(u.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.Certificate().Raw}), 0o600))
	t.Cleanup(func() {
		u.releaseHolds()
		u.Close()
	})
	return u
}

func (u *upstream) releaseHolds() { u.once.Do(func() { close(u.release) }) }

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	if v := r.URL.Query().Get("watch"); v == "1" || v == "true" {
		u.watch(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(echo{
		Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: string(body),
		Authorization: r.Header.Get("Authorization"), XTest: r.Header.Get("X-Test"),
		AcceptEncoding: r.Header.Get("Accept-Encoding"), Forwarded: r.Header.Get("X-Forwarded-For"),
		ClientCert: len(r.TLS.PeerCertificates) > 0,
	})
}

// watch streams ADDED events: on .../hold one, then a second once released; elsewhere one
// every 50 ms (200 at most), until the client goes.
func (u *upstream) watch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	ev := func(i int) {
		fmt.Fprintf(w, `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p%d","resourceVersion":"%d"}}}`+"\n", i, i)
		rc.Flush()
	}
	if strings.HasSuffix(r.URL.Path, "/hold") {
		ev(1)
		select {
		case <-u.release:
			ev(2)
		case <-r.Context().Done():
		}
		return
	}
	tk := time.NewTicker(50 * time.Millisecond)
	defer tk.Stop()
	for i := 1; i <= 200; i++ {
		ev(i)
		select {
		case <-tk.C:
		case <-r.Context().Done():
			return
		}
	}
}

// ---- the proxy under test ----------------------------------------------------------------

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type fp struct {
	ready   readyLine
	raw     string // the ready line as printed
	h1, h2  *http.Client
	control *http.Client
	stderr  *syncBuf
}

func proxyArgs(u *upstream, extra ...string) []string {
	return append([]string{"-listen", "127.0.0.1:0", "-control", "127.0.0.1:0", "-upstream", u.URL,
		"-upstream-ca", u.caFile, "-tls-cert", certs.servingCert, "-tls-key", certs.servingKey}, extra...)
}

// startProxy runs the proxy in-process (run(), as main does) and reads its ready line.
func startProxy(t *testing.T, args []string) *fp {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	p := &fp{stderr: &syncBuf{}}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, pw, p.stderr)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(bound):
			t.Errorf("the proxy did not stop within %v", bound)
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, pr) // anything more on stdout is caught by TestReadyLineAndStdout
	}()
	select {
	case p.raw = <-lines:
	case err := <-done:
		t.Fatalf("run ended before its ready line: %v; stderr:\n%s", err, p.stderr)
	case <-time.After(bound):
		t.Fatalf("no ready line within %v", bound)
	}
	if err := json.Unmarshal([]byte(p.raw), &p.ready); err != nil {
		t.Fatalf("ready line %q: %v", p.raw, err)
	}
	tc := &tls.Config{RootCAs: certs.servingPool}
	p.h1 = &http.Client{Transport: &http.Transport{TLSClientConfig: tc.Clone()}}
	p.h2 = &http.Client{Transport: &http.Transport{TLSClientConfig: tc.Clone(), ForceAttemptHTTP2: true}}
	p.control = &http.Client{Timeout: bound}
	t.Cleanup(func() {
		p.h1.CloseIdleConnections()
		p.h2.CloseIdleConnections()
		p.control.CloseIdleConnections()
	})
	return p
}

func newProxyFor(t *testing.T) (*upstream, *fp) {
	u := newUpstream(t)
	return u, startProxy(t, proxyArgs(u))
}

type reply struct {
	code   int
	header http.Header
	body   []byte
	proto  string
}

func doReq(t *testing.T, c *http.Client, method, url, body string, hdr map[string]string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return reply{res.StatusCode, res.Header, b, res.Proto}
}

func (p *fp) get(t *testing.T, path string) reply {
	return doReq(t, p.h1, "GET", p.ready.URL+path, "", nil)
}

// faults calls the control API and decodes its answer (the state) when it is 200.
func (p *fp) faults(t *testing.T, method, body string) (int, stateView, string) {
	t.Helper()
	r := doReq(t, p.control, method, p.ready.Control+"/faults", body, map[string]string{"Content-Type": "application/json"})
	var s stateView
	if r.code == http.StatusOK {
		if err := json.Unmarshal(r.body, &s); err != nil {
			t.Fatalf("%s /faults: %v: %s", method, err, r.body)
		}
	}
	return r.code, s, string(r.body)
}

func (p *fp) mustFaults(t *testing.T, method, body string) stateView {
	t.Helper()
	code, s, raw := p.faults(t, method, body)
	if code != http.StatusOK {
		t.Fatalf("%s /faults %s: %d %s", method, body, code, raw)
	}
	return s
}

// watchStream is an open watch through the proxy.
type watchStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	res    *http.Response
	rd     *bufio.Reader
}

func openWatch(t *testing.T, c *http.Client, url string) *watchStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer watch-token")
	res, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", url, err)
	}
	w := &watchStream{ctx, cancel, res, bufio.NewReader(res.Body)}
	t.Cleanup(func() {
		res.Body.Close()
		cancel()
	})
	return w
}

// event reads the next event line; a read error fails the test.
func (w *watchStream) event(t *testing.T) map[string]any {
	t.Helper()
	line, err := w.rd.ReadString('\n')
	if err != nil {
		t.Fatalf("reading a watch event: %v (got %q)", err, line)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(line), &ev); err != nil {
		t.Fatalf("watch event %q: %v", line, err)
	}
	return ev
}

// untilError reads until the stream ends and returns how it did (io.EOF: a clean end).
func (w *watchStream) untilError() error {
	for {
		if _, err := w.rd.ReadString('\n'); err != nil {
			return err
		}
	}
}

func eventName(ev map[string]any) string {
	obj, _ := ev["object"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name
}

func decodeEcho(t *testing.T, r reply) echo {
	t.Helper()
	var e echo
	if r.code != http.StatusOK {
		t.Fatalf("want 200 from the upstream, got %d: %s", r.code, r.body)
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("echo %s: %v", r.body, err)
	}
	return e
}

func decodeStatus(t *testing.T, r reply, code int, reason string) status {
	t.Helper()
	if r.code != code {
		t.Fatalf("want %d, got %d: %s", code, r.code, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var s status
	if err := json.Unmarshal(r.body, &s); err != nil {
		t.Fatalf("status %s: %v", r.body, err)
	}
	if s.Kind != "Status" || s.APIVersion != "v1" || s.Status != "Failure" || s.Code != code || s.Reason != reason {
		t.Errorf("status %s: want kind Status, apiVersion v1, Failure, code %d, reason %s", r.body, code, reason)
	}
	return s
}

// ---- tests --------------------------------------------------------------------------------

func TestPassThrough(t *testing.T) {
	_, p := newProxyFor(t)
	const token = "Bearer s3cr3t-token-value"
	path := "/apis/vmoperator.vmware.com/v1alpha3/namespaces/ns-1/virtualmachines/vm%2Fa"
	query := "labelSelector=app%3Dweb&limit=5&fieldSelector=metadata.name%3Dx;odd"
	for _, c := range []struct {
		name   string
		client *http.Client
		proto  string
	}{{"http1", p.h1, "HTTP/1.1"}, {"http2", p.h2, "HTTP/2.0"}} {
		t.Run(c.name, func(t *testing.T) {
			r := doReq(t, c.client, "POST", p.ready.URL+path+"?"+query, `{"spec":{"x":1}}`,
				map[string]string{"Authorization": token, "X-Test": "kept", "Accept-Encoding": "identity",
					"X-Forwarded-For": "10.1.2.3"})
			if r.proto != c.proto {
				t.Errorf("client spoke %s, want %s", r.proto, c.proto)
			}
			e := decodeEcho(t, r)
			want := echo{Method: "POST", Path: "/apis/vmoperator.vmware.com/v1alpha3/namespaces/ns-1/virtualmachines/vm/a",
				RawPath: path, RawQuery: query, Body: `{"spec":{"x":1}}`, Authorization: token, XTest: "kept",
				AcceptEncoding: "identity", Forwarded: "10.1.2.3", ClientCert: false}
			if e != want {
				t.Errorf("upstream saw %+v\nwant           %+v", e, want)
			}
		})
	}
	// No Authorization and no client certificate configured: none presented either.
	if e := decodeEcho(t, p.get(t, "/api/v1/pods")); e.ClientCert || e.Authorization != "" || e.AcceptEncoding != "gzip" {
		t.Errorf("plain GET: upstream saw %+v", e)
	}
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		if e := decodeEcho(t, doReq(t, p.h1, m, p.ready.URL+"/api/v1/namespaces/a", "b", nil)); e.Method != m || e.Body != "b" {
			t.Errorf("%s: upstream saw %+v", m, e)
		}
	}
	if s := p.mustFaults(t, "GET", ""); s.Requests != 6 || s.Injected != 0 {
		t.Errorf("counters %+v, want 6 requests, 0 injected", s)
	}
	if strings.Contains(p.stderr.String(), "s3cr3t") {
		t.Errorf("the token is in the log:\n%s", p.stderr)
	}
}

func TestClientCertOnlyWithoutAuthorization(t *testing.T) {
	u := newUpstream(t)
	p := startProxy(t, proxyArgs(u, "-upstream-client-cert", certs.clientCert, "-upstream-client-key", certs.clientKey))
	if e := decodeEcho(t, p.get(t, "/api/v1/pods")); !e.ClientCert {
		t.Errorf("no Authorization: the client certificate was not presented")
	}
	r := doReq(t, p.h1, "GET", p.ready.URL+"/api/v1/pods", "", map[string]string{"Authorization": "Bearer t"})
	if e := decodeEcho(t, r); e.ClientCert || e.Authorization != "Bearer t" {
		t.Errorf("with Authorization: upstream saw %+v, want the token and no client certificate", e)
	}
}

func TestWatchStreamsEventByEvent(t *testing.T) {
	for _, c := range []string{"http1", "http2"} {
		t.Run(c, func(t *testing.T) {
			u, p := newProxyFor(t)
			client := map[string]*http.Client{"http1": p.h1, "http2": p.h2}[c]
			w := openWatch(t, client, p.ready.URL+"/api/v1/namespaces/ns/pods/hold?watch=1&resourceVersion=5")
			if w.res.StatusCode != 200 {
				t.Fatalf("watch: %d", w.res.StatusCode)
			}
			// The upstream holds its stream open after the first event: it arrives all the same.
			if ev := w.event(t); eventName(ev) != "p1" || ev["type"] != "ADDED" {
				t.Fatalf("first event %v", ev)
			}
			if s := p.mustFaults(t, "GET", ""); s.OpenWatches != 1 {
				t.Errorf("openWatches %d, want 1", s.OpenWatches)
			}
			u.releaseHolds()
			if ev := w.event(t); eventName(ev) != "p2" {
				t.Fatalf("second event %v", ev)
			}
			if err := w.untilError(); err != io.EOF {
				t.Errorf("the upstream ended its watch cleanly, the client saw %v", err)
			}
		})
	}
}

func TestDropWatches(t *testing.T) {
	for _, c := range []string{"http1", "http2"} {
		t.Run(c, func(t *testing.T) {
			_, p := newProxyFor(t)
			client := map[string]*http.Client{"http1": p.h1, "http2": p.h2}[c]
			url := p.ready.URL + "/apis/vmoperator.vmware.com/v1alpha3/virtualmachines?watch=true"
			w1 := openWatch(t, client, url)
			w2 := openWatch(t, client, p.ready.URL+"/api/v1/namespaces/ns/pods/hold?watch=1")
			w1.event(t)
			w2.event(t)
			if s := p.mustFaults(t, "GET", ""); s.OpenWatches != 2 {
				t.Errorf("openWatches %d, want 2", s.OpenWatches)
			}
			s := p.mustFaults(t, "POST", `{"dropWatches":true}`)
			if s.DroppedWatches != 2 || s.OpenWatches != 0 {
				t.Errorf("after the drop: %+v, want 2 dropped, 0 open", s)
			}
			if err := w2.untilError(); err == nil || err == io.EOF || w2.ctx.Err() != nil {
				t.Errorf("the held watch: %v, want an abrupt end before the deadline", err)
			}
			err := w1.untilError()
			if w1.ctx.Err() != nil {
				t.Fatalf("the dropped watch did not end within %v", bound)
			}
			if err == nil || err == io.EOF {
				t.Errorf("a dropped watch must end abruptly, the client saw %v", err)
			}
			// A new watch works as before.
			w3 := openWatch(t, client, url)
			if ev := w3.event(t); eventName(ev) != "p1" {
				t.Errorf("new watch: first event %v", ev)
			}
			w3.event(t)
			if s := p.mustFaults(t, "GET", ""); s.OpenWatches != 1 || s.DroppedWatches != 2 {
				t.Errorf("after a new watch: %+v, want 1 open, 2 dropped", s)
			}
			if n := strings.Count(p.stderr.String(), "dropped watch"); n != 2 {
				t.Errorf("%d log lines on dropped watches, want 2:\n%s", n, p.stderr)
			}
		})
	}
}

func TestRuleCount(t *testing.T) {
	u, p := newProxyFor(t)
	s := p.mustFaults(t, "POST", `{"rules":[{"method":"PUT","path":"^/apis/.*","code":409,"count":2,"latencyMs":0}]}`)
	if len(s.Rules) != 1 || *s.Rules[0].Count != 2 || *s.Rules[0].Code != 409 || s.Rules[0].Method != "PUT" {
		t.Fatalf("armed: %+v", s.Rules)
	}
	path := p.ready.URL + "/apis/vmoperator.vmware.com/v1alpha3/namespaces/a/virtualmachines/b"
	for i := 0; i < 2; i++ {
		r := doReq(t, p.h1, "PUT", path, "{}", map[string]string{"Authorization": "Bearer tok-123"})
		st := decodeStatus(t, r, 409, "Conflict")
		if st.Message != "injected fault" {
			t.Errorf("message %q", st.Message)
		}
		if r.header.Get("Retry-After") != "" {
			t.Errorf("409 with Retry-After")
		}
		want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected fault","reason":"Conflict","code":409}`
		if strings.TrimSpace(string(r.body)) != want {
			t.Errorf("body %s\nwant %s", r.body, want)
		}
	}
	if n := u.hits.Load(); n != 0 {
		t.Errorf("injected answers reached the upstream %d times", n)
	}
	decodeEcho(t, doReq(t, p.h1, "PUT", path, "{}", nil))
	s = p.mustFaults(t, "GET", "")
	if len(s.Rules) != 0 || s.Injected != 2 || s.Requests != 3 {
		t.Errorf("after: %+v, want no rules, 2 injected, 3 requests", s)
	}
	if n := strings.Count(p.stderr.String(), "injected code 409"); n != 2 {
		t.Errorf("%d log lines on injected 409s, want 2:\n%s", n, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "tok-123") {
		t.Errorf("the token is in the log")
	}
}

func TestRetryAfterAndReasons(t *testing.T) {
	_, p := newProxyFor(t)
	p.mustFaults(t, "POST", `{"rules":[{"path":"^/a$","code":429},{"path":"^/b$","code":503},{"path":"^/c$","code":500},{"path":"^/d$"}]}`)
	cases := []struct {
		path, reason string
		code         int
		retry        string
	}{{"/a", "TooManyRequests", 429, "1"}, {"/b", "ServiceUnavailable", 503, "1"}, {"/c", "InternalError", 500, ""},
		{"/d", "InternalError", 500, ""}} // no code: 500, no count: once
	for _, c := range cases {
		r := p.get(t, c.path)
		decodeStatus(t, r, c.code, c.reason)
		if got := r.header.Get("Retry-After"); got != c.retry {
			t.Errorf("%s: Retry-After %q, want %q", c.path, got, c.retry)
		}
	}
	if s := p.mustFaults(t, "GET", ""); len(s.Rules) != 0 {
		t.Errorf("rules left: %+v", s.Rules)
	}
}

func TestMethodAndWatchFilters(t *testing.T) {
	u, p := newProxyFor(t)
	p.mustFaults(t, "POST", `{"rules":[
		{"method":"get","path":"^/api/v1/pods$","watch":false,"code":500,"count":-1},
		{"method":"*","path":"^/api/v1/nodes$","watch":true,"code":503,"count":1}]}`)
	// The method filter: a POST to the path passes.
	decodeEcho(t, doReq(t, p.h1, "POST", p.ready.URL+"/api/v1/pods", "x", nil))
	// The watch filter: a watch on the path passes, a GET does not (unlimited).
	w := openWatch(t, p.h1, p.ready.URL+"/api/v1/pods?watch=1")
	if w.res.StatusCode != 200 {
		t.Fatalf("watch: %d", w.res.StatusCode)
	}
	w.event(t)
	for i := 0; i < 3; i++ {
		decodeStatus(t, p.get(t, "/api/v1/pods"), 500, "InternalError")
	}
	// watch:true matches only watches.
	decodeEcho(t, p.get(t, "/api/v1/nodes"))
	decodeEcho(t, p.get(t, "/api/v1/nodes?watch=0"))
	r := p.get(t, "/api/v1/nodes?watch=true")
	decodeStatus(t, r, 503, "ServiceUnavailable")
	w2 := openWatch(t, p.h1, p.ready.URL+"/api/v1/nodes?watch=true")
	w2.event(t)
	s := p.mustFaults(t, "GET", "")
	if len(s.Rules) != 1 || *s.Rules[0].Count != -1 || s.Rules[0].Watch == nil || *s.Rules[0].Watch {
		t.Errorf("rules left %+v, want the unlimited watch:false one", s.Rules)
	}
	if s.Injected != 4 {
		t.Errorf("injected %d, want 4", s.Injected)
	}
	if u.hits.Load() != 5 {
		t.Errorf("upstream hits %d, want 5", u.hits.Load())
	}
}

func TestLatency(t *testing.T) {
	_, p := newProxyFor(t)
	timed := func(path string) (time.Duration, reply) {
		start := time.Now()
		r := p.get(t, path)
		return time.Since(start), r
	}
	const lat = 200 * time.Millisecond
	if s := p.mustFaults(t, "POST", `{"latencyMs":200}`); s.LatencyMs != 200 {
		t.Fatalf("latencyMs %d", s.LatencyMs)
	}
	if d, r := timed("/api/v1/pods"); d < lat || d > bound {
		t.Errorf("with latencyMs 200 the request took %v", d)
	} else {
		decodeEcho(t, r)
	}
	// 0 clears it; a delay-only rule (code 0) delays and forwards.
	p.mustFaults(t, "POST", `{"latencyMs":0,"rules":[{"path":"^/slow$","code":0,"latencyMs":150,"count":1}]}`)
	if d, r := timed("/slow"); d < 150*time.Millisecond || d > bound {
		t.Errorf("with a 150 ms rule the request took %v", d)
	} else if e := decodeEcho(t, r); e.Path != "/slow" {
		t.Errorf("the delayed request was not forwarded: %+v", e)
	}
	// Latency delays watches too, and a watch dropped while it waits ends at once.
	p.mustFaults(t, "POST", `{"latencyMs":300}`)
	start := time.Now()
	w := openWatch(t, p.h1, p.ready.URL+"/api/v1/pods?watch=1")
	w.event(t)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("the watch's first event came after %v, want >= 300ms", d)
	}
	// A watch dropped while it waits for its latency ends then, without an answer.
	p.mustFaults(t, "POST", `{"latencyMs":8000}`)
	failed := make(chan error, 1)
	start = time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", p.ready.URL+"/api/v1/pods?watch=1", nil)
		res, err := p.h1.Do(req)
		if err == nil {
			res.Body.Close()
			err = fmt.Errorf("answered %d", res.StatusCode)
		} else if ctx.Err() != nil {
			err = nil
		}
		failed <- err
	}()
	deadline := time.Now().Add(bound)
	for p.mustFaults(t, "GET", "").OpenWatches != 2 { // w above, and the waiting one
		if time.Now().After(deadline) {
			t.Fatalf("the waiting watch never showed in openWatches")
		}
		time.Sleep(10 * time.Millisecond) // polling the state, bounded by the deadline
	}
	p.mustFaults(t, "POST", `{"dropWatches":true,"latencyMs":0}`)
	if err := <-failed; err == nil || strings.HasPrefix(err.Error(), "answered") {
		t.Errorf("a watch dropped during its delay: %v, want a transport error", err)
	}
	if d := time.Since(start); d >= 8*time.Second {
		t.Errorf("the dropped waiting watch took %v to end", d)
	}
	p.mustFaults(t, "DELETE", "")
	if d, _ := timed("/api/v1/pods"); d > bound {
		t.Errorf("after DELETE: %v", d)
	}
}

func TestWatchEvent410(t *testing.T) {
	u, p := newProxyFor(t)
	p.mustFaults(t, "POST", `{"rules":[{"path":"^/api/v1/pods$","code":410,"watchEvent":true,"count":1},
		{"path":"^/api/v1/nodes$","watchEvent":true}]}`)
	w := openWatch(t, p.h1, p.ready.URL+"/api/v1/pods?watch=1&resourceVersion=1")
	if w.res.StatusCode != 200 || w.res.ContentLength != -1 || len(w.res.TransferEncoding) == 0 || w.res.TransferEncoding[0] != "chunked" {
		t.Errorf("want 200 chunked, got %d, Content-Length %d, Transfer-Encoding %v", w.res.StatusCode, w.res.ContentLength, w.res.TransferEncoding)
	}
	line, err := w.rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: injected","reason":"Expired","code":410}}` + "\n"
	if line != want {
		t.Errorf("event %s\nwant  %s", line, want)
	}
	if err := w.untilError(); err != io.EOF {
		t.Errorf("after the ERROR event the stream must end cleanly, got %v", err)
	}
	// Used up: the next watch passes.
	w2 := openWatch(t, p.h1, p.ready.URL+"/api/v1/pods?watch=1")
	if eventName(w2.event(t)) != "p1" {
		t.Errorf("second watch did not pass")
	}
	// watchEvent on a plain request: the HTTP error (no code: 410).
	decodeStatus(t, p.get(t, "/api/v1/nodes"), 410, "Expired")
	if u.hits.Load() != 1 {
		t.Errorf("upstream hits %d, want 1", u.hits.Load())
	}
}

func TestControlRefusesBadSpecs(t *testing.T) {
	_, p := newProxyFor(t)
	bad := []string{
		``, `{`, `not json`, `[]`, `{"rules":[{"path":"("}]}`, `{"dropwatches":true}`, `{"rules":[{"Path":"x"}]}`, `{"rules":[{"path":"x","cnt":1}]}`, `{"rules":{}}`,
		`{"rules":[{"path":"x","count":0}]}`, `{"latencyMs":-1}`, `{"latencyMs":"50"}`,
		`{"rules":[{"path":"x","code":99}]}`, `{"rules":[{"path":"x","latencyMs":-5}]}`,
		`{"rules":[{"path":"x","code":0,"watchEvent":true}]}`, `{"latencyMs":5} {}`,
		// a valid rule with an invalid one: none of it applies
		`{"latencyMs":7,"rules":[{"path":"ok"},{"path":"[z-a]"}]}`,
	}
	for _, b := range bad {
		code, _, raw := p.faults(t, "POST", b)
		if code != http.StatusBadRequest {
			t.Errorf("POST %q: %d %s, want 400", b, code, raw)
			continue
		}
		var st status
		if err := json.Unmarshal([]byte(raw), &st); err != nil || st.Message == "" || st.Code != 400 {
			t.Errorf("POST %q: 400 without a message: %s", b, raw)
		}
	}
	if s := p.mustFaults(t, "GET", ""); len(s.Rules) != 0 || s.LatencyMs != 0 {
		t.Errorf("refused specs changed the state: %+v", s)
	}
	if code, _, _ := p.faults(t, "PATCH", "{}"); code != http.StatusMethodNotAllowed {
		t.Errorf("PATCH /faults: %d, want 405", code)
	}
	r := doReq(t, p.control, "GET", p.ready.Control+"/healthz", "", nil)
	if r.code != 200 || strings.TrimSpace(string(r.body)) != "ok" {
		t.Errorf("/healthz: %d %q", r.code, r.body)
	}
	// Still serving after all that.
	decodeEcho(t, p.get(t, "/api/v1/pods"))
}

func TestStateAndDelete(t *testing.T) {
	_, p := newProxyFor(t)
	s := p.mustFaults(t, "POST", `{"latencyMs":0,"rules":[{"method":"PUT","path":"^/x","code":409,"count":3},
		{"path":"^/y","code":500,"count":-1,"watch":true,"latencyMs":5}]}`)
	raw := doReq(t, p.control, "GET", p.ready.Control+"/faults", "", nil)
	for _, key := range []string{`"latencyMs":0`, `"rules":[`, `"openWatches":0`, `"requests":0`, `"injected":0`} {
		if !strings.Contains(string(raw.body), key) {
			t.Errorf("GET /faults %s: no %s", raw.body, key)
		}
	}
	if len(s.Rules) != 2 || s.Rules[1].Watch == nil || !*s.Rules[1].Watch || s.Rules[1].LatencyMs != 5 {
		t.Errorf("rules %+v", s.Rules)
	}
	doReq(t, p.h1, "PUT", p.ready.URL+"/x1", "", nil)
	if s := p.mustFaults(t, "GET", ""); *s.Rules[0].Count != 2 || s.Requests != 1 || s.Injected != 1 {
		t.Errorf("after one use: %+v", s)
	}
	if s := p.mustFaults(t, "DELETE", ""); len(s.Rules) != 0 || s.LatencyMs != 0 || s.Requests != 1 {
		t.Errorf("after DELETE: %+v", s)
	}
	if !strings.Contains(string(doReq(t, p.control, "GET", p.ready.Control+"/faults", "", nil).body), `"rules":[]`) {
		t.Errorf("no rules must show as []")
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u := newUpstream(t) // only for its CA file
	args := proxyArgs(u)
	for i := range args {
		if args[i] == u.URL {
			args[i] = "https://" + addr
		}
	}
	p := startProxy(t, args)
	start := time.Now()
	st := decodeStatus(t, p.get(t, "/api/v1/pods"), http.StatusBadGateway, "ServiceUnavailable")
	if !strings.Contains(st.Message, "upstream unavailable") {
		t.Errorf("message %q", st.Message)
	}
	if d := time.Since(start); d > dialTimeout+2*time.Second {
		t.Errorf("took %v", d)
	}
}

var readyRE = regexp.MustCompile(`^\{"url":"https://127\.0\.0\.1:(\d+)","port":(\d+),"control":"http://127\.0\.0\.1:(\d+)","pid":(\d+)\}\n$`)

// subprocess is the test binary run as the real program (main), or through sh.
type subprocess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *os.File
	first  chan string // the first line on stdout
	rest   chan string // what came after it, once stdout closes
}

func startSubprocess(t *testing.T, name string, args ...string) *subprocess {
	t.Helper()
	sp := &subprocess{cmd: exec.Command(name, args...), first: make(chan string, 1), rest: make(chan string, 1)}
	sp.cmd.Env = append(os.Environ(), "FAULTPROXY_TEST_MAIN=1")
	var err error
	// A file, not a pipe: Wait must not wait for a grandchild that holds it.
	if sp.stderr, err = os.Create(filepath.Join(t.TempDir(), "stderr")); err != nil {
		t.Fatal(err)
	}
	sp.cmd.Stderr = sp.stderr
	out, err := sp.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if sp.stdin, err = sp.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := sp.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sp.cmd.Process.Kill()
		sp.stderr.Close()
	})
	go func() {
		br := bufio.NewReader(out)
		l, _ := br.ReadString('\n')
		sp.first <- l
		b, _ := io.ReadAll(br)
		sp.rest <- string(b)
	}()
	return sp
}

func (sp *subprocess) closeStdin() { sp.stdin.Close() }

func (sp *subprocess) log() string {
	b, _ := os.ReadFile(sp.stderr.Name())
	return string(b)
}

func (sp *subprocess) readyLine(t *testing.T) (string, readyLine) {
	t.Helper()
	var ready readyLine
	select {
	case l := <-sp.first:
		if err := json.Unmarshal([]byte(l), &ready); err != nil {
			t.Fatalf("ready line %q: %v; stderr:\n%s", l, err, sp.log())
		}
		return l, ready
	case <-time.After(bound):
		t.Fatalf("no ready line within %v; stderr:\n%s", bound, sp.log())
	}
	return "", ready
}

func TestReadyLineAndSIGTERM(t *testing.T) {
	u := newUpstream(t)
	sp := startSubprocess(t, os.Args[0], proxyArgs(u)...)
	line, ready := sp.readyLine(t)
	m := readyRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("ready line %q does not match %s", line, readyRE)
	}
	if m[1] != m[2] || m[4] != strconv.Itoa(sp.cmd.Process.Pid) || ready.Port == 0 {
		t.Errorf("ready line %q: port or pid wrong (pid %d)", line, sp.cmd.Process.Pid)
	}
	c := &http.Client{Timeout: bound, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.servingPool}}}
	defer c.CloseIdleConnections()
	for _, url := range []string{ready.Control + "/healthz", ready.URL + "/api/v1/pods"} {
		r, err := c.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Errorf("GET %s: %d", url, r.StatusCode)
		}
	}
	// SIGTERM: a clean exit, and nothing more on stdout.
	sp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case rest := <-sp.rest:
		if rest != "" {
			t.Errorf("stdout after the ready line: %q", rest)
		}
	case <-time.After(bound):
		t.Fatalf("stdout still open %v after SIGTERM", bound)
	}
	if err := sp.cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, sp.log())
	}
}

// alive: PID runs (a zombie, left unreaped by a container's init, counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func TestShutdownWithOpenWatch(t *testing.T) {
	u := newUpstream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, proxyArgs(u), pw, io.Discard); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	var ready readyLine
	json.Unmarshal([]byte(line), &ready)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.servingPool}}}
	w := openWatch(t, c, ready.URL+"/api/v1/pods/hold?watch=1")
	w.event(t)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(bound):
		t.Fatalf("no shutdown within %v with a watch open", bound)
	}
	if err := w.untilError(); err == io.EOF || w.ctx.Err() != nil {
		t.Errorf("the open watch should end abruptly at shutdown, got %v", err)
	}
}

func TestFlags(t *testing.T) {
	u := newUpstream(t)
	cases := [][]string{
		{"-tls-cert", certs.servingCert, "-tls-key", certs.servingKey},
		{"-upstream", u.URL, "-tls-cert", certs.servingCert},
		append(proxyArgs(u), "-control", "0.0.0.0:0"),
		append(proxyArgs(u), "-upstream-client-cert", certs.clientCert),
		append(proxyArgs(u), "extra"),
		{"-upstream", "ftp://x", "-tls-cert", certs.servingCert, "-tls-key", certs.servingKey},
		{"-upstream", u.URL, "-upstream-ca", certs.servingKey, "-tls-cert", certs.servingCert, "-tls-key", certs.servingKey},
	}
	for _, args := range cases {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		err := run(ctx, args, &out, io.Discard)
		cancel()
		if err == nil || out.Len() != 0 {
			t.Errorf("run %q: err %v, stdout %q; want an error and no ready line", args, err, out.String())
		}
	}
}

func TestIsWatchRequest(t *testing.T) {
	cases := map[string]bool{
		"GET /api/v1/pods?watch=1":                          true,
		"GET /api/v1/pods?watch=true":                       true,
		"GET /api/v1/pods?watch=True":                       true,
		"GET /api/v1/pods?watch=0":                          false,
		"GET /api/v1/pods?watch=false":                      false,
		"GET /api/v1/pods":                                  false,
		"GET /api/v1/watch/pods":                            true,
		"GET /apis/vmoperator.vmware.com/v1/watch/vms":      true,
		"GET /apis/vmoperator.vmware.com/v1/namespaces/wat": false,
		"POST /api/v1/pods?watch=1":                         false,
	}
	for in, want := range cases {
		mp := strings.SplitN(in, " ", 2)
		r := httptest.NewRequest(mp[0], mp[1], nil)
		if got := isWatchRequest(r); got != want {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
}

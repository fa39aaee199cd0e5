package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

const dialTimeout = 5 * time.Second

// upstreamConfig says where and how the proxy forwards.
type upstreamConfig struct {
	url        *url.URL
	rootCAs    *x509.CertPool   // nil: the system's
	clientCert *tls.Certificate // presented upstream by requests without Authorization
}

// proxy forwards every request to the upstream, after the faults that apply to it.
type proxy struct {
	f   *faults
	log *log.Logger
	rp  *httputil.ReverseProxy
}

func newTransport(rootCAs *x509.CertPool, cert *tls.Certificate) *http.Transport {
	tc := &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12}
	if cert != nil {
		tc.Certificates = []tls.Certificate{*cert}
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		DialContext:           d.DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   dialTimeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Accept-Encoding passes unchanged, and so does what the upstream answers to it.
		DisableCompression: true,
	}
	// HTTP/1.1 upstream: one connection per watch, and a dropped watch closes only its own.
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return t
}

// pickTransport presents the client certificate only for requests that bring no Authorization
// of their own, so that a bearer token is what the apiserver authenticates.
type pickTransport struct {
	plain, withCert http.RoundTripper
}

func (t pickTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.withCert != nil && r.Header.Get("Authorization") == "" {
		return t.withCert.RoundTrip(r)
	}
	return t.plain.RoundTrip(r)
}

func newProxy(cfg upstreamConfig, f *faults, l *log.Logger) *proxy {
	rt := pickTransport{plain: newTransport(cfg.rootCAs, nil)}
	if cfg.clientCert != nil {
		rt.withCert = newTransport(cfg.rootCAs, cfg.clientCert)
	}
	target := cfg.url
	p := &proxy{f: f, log: l}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// Exactly as the client sent them: the query (Rewrite re-encodes odd ones) and the
			// forwarding headers (Rewrite strips them).
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
				if v, ok := pr.In.Header[h]; ok {
					pr.Out.Header[h] = v
				}
			}
		},
		Transport:     rt,
		FlushInterval: -1, // every write at once: watch events one by one
		ErrorLog:      l,
		ErrorHandler:  p.upstreamError,
	}
	return p
}

// upstreamError answers a request the upstream did not: 502 with a Status, or, when the request
// was cancelled (client gone, or its watch dropped), an aborted connection.
func (p *proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		panic(http.ErrAbortHandler)
	}
	p.log.Printf("upstream error: %s %s: %v", r.Method, r.URL.Path, err)
	writeStatus(w, http.StatusBadGateway, "ServiceUnavailable", "faultproxy: upstream unavailable: "+err.Error())
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	isWatch := isWatchRequest(r)
	var we *watchEntry
	if isWatch {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		we = p.f.addWatch(cancel, r.Method+" "+r.URL.Path)
		defer p.f.removeWatch(we)
		r = r.WithContext(ctx)
	}
	d := p.f.admit(r.Method, r.URL.Path, isWatch)
	if d.delay > 0 {
		t := time.NewTimer(d.delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			panic(http.ErrAbortHandler) // client gone, or watch dropped while it waited
		}
	}
	switch {
	case d.code != 0 && d.watchEvent:
		serveWatchError(w, d.code)
		return
	case d.code != 0:
		writeStatus(w, d.code, reasonFor(d.code), "injected fault")
		return
	}
	p.rp.ServeHTTP(w, r)
	if we != nil && we.dropped.Load() {
		// Dropped as the upstream ended it: abrupt all the same (no terminating chunk).
		panic(http.ErrAbortHandler)
	}
}

// serveWatchError answers a watch as the apiserver ends one with an error: 200, a chunked
// stream with one ERROR event, then a clean end.
func serveWatchError(w http.ResponseWriter, code int) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush() // headers first: no Content-Length, so a chunked stream
	w.Write(watchErrorEvent(code))
	rc.Flush()
}

// isWatchRequest: a GET with ?watch= as the apiserver reads it (anything but "0"/"false" is true, as
// Convert_Slice_string_To_bool), or a legacy /api/v1/watch/... or /apis/G/V/watch/... path.
func isWatchRequest(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	if vs, ok := r.URL.Query()["watch"]; ok && len(vs) > 0 {
		v := vs[0]
		return v != "0" && !strings.EqualFold(v, "false")
	}
	seg := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case len(seg) >= 3 && seg[0] == "api" && seg[2] == "watch":
		return true
	case len(seg) >= 4 && seg[0] == "apis" && seg[3] == "watch":
		return true
	}
	return false
}

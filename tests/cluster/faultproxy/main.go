// Command faultproxy is a fault-injecting HTTPS reverse proxy in front of a real kube-apiserver,
// for the chaos and fault tests of vmop (test infrastructure only; standard library only). It
// forwards every request unchanged and, as told on its control API, drops open watches, delays
// requests, and answers some itself with 409/429/500/... Statuses or a 410 watch ERROR event.
// See README.md.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		fmt.Fprintln(os.Stderr, "faultproxy:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "faultproxy:", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

type options struct {
	listen, control       string
	upstream, upstreamCA  string
	tlsCert, tlsKey       string
	clientCert, clientKey string
	http2, dieWithParent  bool
	parentPoll            time.Duration
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{parentPoll: 200 * time.Millisecond}
	fs := flag.NewFlagSet("faultproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "`address` the proxy serves HTTPS on")
	fs.StringVar(&o.upstream, "upstream", "", "the kube-apiserver's `URL`, e.g. https://127.0.0.1:6443 (required)")
	fs.StringVar(&o.upstreamCA, "upstream-ca", "", "PEM `file` of the CA the upstream's certificate is checked against (default: the system's)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM `file`: the serving certificate (required)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM `file`: the serving certificate's key (required)")
	fs.StringVar(&o.clientCert, "upstream-client-cert", "", "PEM `file`: client certificate presented upstream by requests without Authorization")
	fs.StringVar(&o.clientKey, "upstream-client-key", "", "PEM `file`: the client certificate's key")
	fs.StringVar(&o.control, "control", "127.0.0.1:0", "loopback `address` of the plain-HTTP control API")
	fs.BoolVar(&o.http2, "http2", true, "offer HTTP/2 to clients (ALPN), as the apiserver does; HTTP/1.1 always")
	fs.BoolVar(&o.dieWithParent, "die-with-parent", false, "exit when the parent process goes away")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() > 0:
		return nil, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case o.upstream == "":
		return nil, usageError{"-upstream is required"}
	case o.tlsCert == "" || o.tlsKey == "":
		return nil, usageError{"-tls-cert and -tls-key are required"}
	case (o.clientCert == "") != (o.clientKey == ""):
		return nil, usageError{"-upstream-client-cert and -upstream-client-key go together"}
	}
	return o, nil
}

func upstreamFrom(o *options) (upstreamConfig, error) {
	var cfg upstreamConfig
	u, err := url.Parse(o.upstream)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return cfg, usageError{fmt.Sprintf("-upstream %q: want https://HOST:PORT", o.upstream)}
	}
	cfg.url = u
	if o.upstreamCA != "" {
		pem, err := os.ReadFile(o.upstreamCA)
		if err != nil {
			return cfg, err
		}
		cfg.rootCAs = x509.NewCertPool()
		if !cfg.rootCAs.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("-upstream-ca %s: no PEM certificate in it", o.upstreamCA)
		}
	}
	if o.clientCert != "" {
		c, err := tls.LoadX509KeyPair(o.clientCert, o.clientKey)
		if err != nil {
			return cfg, fmt.Errorf("-upstream-client-cert/-key: %v", err)
		}
		cfg.clientCert = &c
	}
	return cfg, nil
}

// listenLoopback listens on ADDR, which must be a loopback one (the control API has no auth).
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usageError{fmt.Sprintf("-control %q: %v", addr, err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, usageError{fmt.Sprintf("-control %q: must be a loopback address", addr)}
	}
	return net.Listen("tcp", addr)
}

// readyLine is the one line printed on stdout once both listeners serve.
type readyLine struct {
	URL     string `json:"url"`
	Port    int    `json:"port"`
	Control string `json:"control"`
	PID     int    `json:"pid"`
}

func hostPort(ln net.Listener) (string, int) {
	a := ln.Addr().(*net.TCPAddr)
	ip := a.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(a.Port)), a.Port
}

// run is the whole program: serves until ctx ends (a signal), the parent goes away
// (-die-with-parent) or a listener fails.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := upstreamFrom(o)
	if err != nil {
		return err
	}
	serving, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return fmt.Errorf("-tls-cert/-tls-key: %v", err)
	}
	logger := log.New(stderr, "faultproxy: ", log.LstdFlags|log.Lmicroseconds)
	f := newFaults(logger)

	cln, err := listenLoopback(o.control)
	if err != nil {
		return err
	}
	defer cln.Close()
	pln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	defer pln.Close()

	protos := new(http.Protocols)
	protos.SetHTTP1(true)
	protos.SetHTTP2(o.http2)
	psrv := &http.Server{
		Handler:           newProxy(cfg, f, logger),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{serving}, MinVersion: tls.VersionTLS12},
		Protocols:         protos,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          logger,
	}
	csrv := &http.Server{Handler: controlHandler(f), ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}

	errc := make(chan error, 2)
	go func() { errc <- psrv.ServeTLS(pln, "", "") }()
	go func() { errc <- csrv.Serve(cln) }()

	if o.dieWithParent {
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = pctx
		go func() {
			watchParent(pctx, o.parentPoll)
			if pctx.Err() == nil {
				logger.Printf("parent went away: exiting")
				cancel()
			}
		}()
	}

	paddr, pport := hostPort(pln)
	caddr, _ := hostPort(cln)
	ready, _ := json.Marshal(readyLine{URL: "https://" + paddr, Port: pport, Control: "http://" + caddr, PID: os.Getpid()})
	if _, err := fmt.Fprintf(stdout, "%s\n", ready); err != nil {
		return fmt.Errorf("writing the ready line: %v", err)
	}
	logger.Printf("proxying https://%s -> %s, control http://%s", paddr, cfg.url.Redacted(), caddr)

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Printf("shutting down")
	case serveErr = <-errc:
	}
	// Open watches would hold Shutdown up: end them first, then give the rest a moment.
	f.dropWatches()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	psrv.Shutdown(sctx)
	csrv.Shutdown(sctx)
	psrv.Close()
	csrv.Close()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

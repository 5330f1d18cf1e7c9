// Package safehttp is drip's outbound HTTP to addresses its users choose
// (D53): webhook deliveries (issue 12's outbox worker and the console's
// "send a test event") and merchant callbacks (issue 13). Such a URL must
// not reach drip's own network: CheckURL refuses it when it is saved unless
// it is https on a public address, and NewClient's clients check the
// address again when they connect, in the dialer, so a name that resolved
// to a public address when saved and resolves to a private one now (DNS
// rebinding) is not connected to. The clients follow no redirect and use no
// proxy, whatever the environment says.
//
// Options.AllowInsecure, for local testing only, admits http and loopback
// addresses; it is off by default, and the caller that turns it on must say
// so loudly in the log (at warning level, at start-up), since it opens the
// server's own ports to anyone who can register a URL.
//
// The package logs nothing; request bodies, headers and signing secrets
// pass through it untouched and are never recorded here.
package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds a whole exchange, connect to the last byte of
	// the reply's body: D52 counts a delivery answered later as failed.
	DefaultTimeout = 15 * time.Second
	// DefaultName is how messages call the URL when Options.Name is empty.
	DefaultName = "URL"
)

// ReplyLogBytes is how much of a reply a delivery attempt keeps (issue 12):
// pass it to ReadReply.
const ReplyLogBytes = 1024

// maxDrain is how much of a reply ReadReply reads past what it keeps, so
// the connection can serve the next delivery; a longer reply costs its
// connection instead of a worker's time.
const maxDrain = 64 << 10

// maxHeaderBytes bounds a reply's header: receivers are not trusted.
const maxHeaderBytes = 64 << 10

// Resolver looks up the addresses of a host name; *net.Resolver is one.
// Tests give their own, so that names resolve without a network.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure CheckURL and NewClient; the zero value is production's.
type Options struct {
	// AllowInsecure admits http URLs and loopback addresses, for local
	// testing only. Private, link-local and every other non-public
	// address stay refused. The caller must log loudly when it is on.
	AllowInsecure bool
	// AllowHTTP admits http URLs on public addresses: merchant callbacks
	// (spec 4.4), which sites in the wild serve over plain http. Every
	// address rule stays; webhooks never set it (D53: https only).
	AllowHTTP bool
	// Resolver resolves host names, when URLs are checked and when clients
	// connect; net.DefaultResolver when nil.
	Resolver Resolver
	// Timeout bounds a client's whole exchange; DefaultTimeout when zero.
	Timeout time.Duration
	// RootCAs are the authorities a client trusts for https; the system's
	// when nil. Tests and local receivers with their own certificate set it.
	RootCAs *x509.CertPool
	// Name is what messages call the URL ("Webhook URL", "Callback URL");
	// DefaultName when empty.
	Name string
}

func (o Options) withDefaults() Options {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	return o
}

// NewClient returns a client for delivery URLs. Every request's URL is
// checked again as CheckURL checks it, less the lookup; the host is
// resolved through opts.Resolver when connecting, and the dialer refuses,
// before the connection is made, any address CheckURL would refuse. The
// refusal is a *drip.Error (CodeInvalid) inside the request's error.
//
// Redirects are not followed: a 3xx is returned as the reply. No proxy is
// used. TLS is 1.2 or later. The whole exchange, reading the reply's body
// included, is bounded by opts.Timeout.
//
// Connections are kept alive and reused between requests to the same
// scheme, host and port, so a worker delivering many events to one
// receiver does not pay a handshake for each. Reuse cannot bypass the
// check: a connection is only ever made to an address the dialer admitted.
// A name that resolves elsewhere later is checked when a new connection is
// made; idle connections close after 90 seconds.
func NewClient(opts Options) *http.Client {
	opts = opts.withDefaults()
	dialer := &net.Dialer{
		Timeout:   opts.Timeout,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			return checkConnect(network, address, opts.AllowInsecure)
		},
	}
	base := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialContext(dialer, opts.Resolver),
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    64, // at least the outbox worker's sends in flight (32): fewer churns connections
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	return &http.Client{
		Transport: &transport{base: base, opts: opts},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Timeout: opts.Timeout,
	}
}

// transport refuses a request whose URL CheckURL would refuse for its
// shape (http without AllowInsecure, user information, a bad port) before
// anything is dialled.
type transport struct {
	base *http.Transport
	opts Options
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, err := checkShape(req.URL.String(), t.opts); err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the connections kept for reuse; the
// client's method of that name calls it.
func (t *transport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// dialContext resolves a host name through r and dials its addresses in
// turn; d's Control admits or refuses each one. IP literals are dialled
// as they are.
func dialContext(d *net.Dialer, r Resolver) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return d.DialContext(ctx, network, address)
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return nil, err
		}
		addrs, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
		var first error
		for _, addr := range addrs {
			to := netip.AddrPortFrom(addr.Unmap(), uint16(port)).String()
			conn, err := d.DialContext(ctx, network, to)
			if err == nil {
				return conn, nil
			}
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
}

// checkConnect is the dialer's Control: it runs after the socket is made
// and before it connects, with the address actually connected to.
func checkConnect(network, address string, allowInsecure bool) error {
	if network != "tcp4" && network != "tcp6" {
		return invalid("Refused to connect over %s.", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return invalid("Refused to connect to %q: not an address.", address)
	}
	addr := ap.Addr().Unmap()
	if why := classify(addr); !why.allowed(allowInsecure) {
		return invalid("Refused to connect to %s (%s).", why, addr)
	}
	return nil
}

// ReadReply returns at most the first n bytes of resp's body, reads on
// (up to 64 KB) so the connection can be reused, and closes the body. A
// body that ends early is no error; an error reading the first n bytes is
// returned with what was read before it.
func ReadReply(resp *http.Response, n int) ([]byte, error) {
	if resp == nil || resp.Body == nil {
		return nil, nil
	}
	defer resp.Body.Close()
	if n < 0 {
		n = 0
	}
	kept, err := io.ReadAll(io.LimitReader(resp.Body, int64(n)))
	if err != nil {
		return kept, err
	}
	// A failed drain costs the connection, not the part kept.
	_, _ = io.CopyN(io.Discard, resp.Body, maxDrain)
	return kept, nil
}

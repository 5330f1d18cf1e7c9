package safehttp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
)

// resolver answers names from a table, so tests need no DNS. A name with
// several answers gives them in turn, the last one ever after: a rebinding
// attacker's name is {public, loopback}.
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	asked   []string
}

func newResolver(names map[string][]string) *resolver {
	r := &resolver{answers: map[string][][]netip.Addr{}}
	for name, addrs := range names {
		r.set(name, addrs...)
	}
	return r
}

// set makes name answer all addrs at once.
func (r *resolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var answer []netip.Addr
	for _, a := range addrs {
		answer = append(answer, netip.MustParseAddr(a))
	}
	r.answers[name] = [][]netip.Addr{answer}
}

// sequence makes name answer each addr in turn, one per lookup.
func (r *resolver) sequence(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var seq [][]netip.Addr
	for _, a := range addrs {
		seq = append(seq, []netip.Addr{netip.MustParseAddr(a)})
	}
	r.answers[name] = seq
}

func (r *resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, network+" "+host)
	seq, ok := r.answers[strings.ToLower(host)] // as DNS, whatever the case
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	answer := seq[0]
	if len(seq) > 1 {
		r.answers[host] = seq[1:]
	}
	return answer, nil
}

func (r *resolver) lookups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// receiver is a local HTTP or HTTPS server that counts the requests it
// gets and answers them with handler (200 "ok" when nil).
type receiver struct {
	*httptest.Server
	hits atomic.Int64
}

func newReceiver(t *testing.T, tls bool, handler http.HandlerFunc) *receiver {
	t.Helper()
	r := &receiver{}
	if handler == nil {
		handler = func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }
	}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		handler(w, req)
	}))
	if tls {
		r.StartTLS()
	} else {
		r.Start()
	}
	t.Cleanup(r.Close)
	return r
}

// port is the receiver's port, for URLs that name it by host name.
func (r *receiver) port() string {
	return strconv.Itoa(r.Listener.Addr().(*net.TCPAddr).Port)
}

// appError returns the *drip.Error in err, failing the test if there is
// none or its code is not CodeInvalid.
func appError(t *testing.T, err error) *drip.Error {
	t.Helper()
	var e *drip.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *drip.Error", err, err)
	}
	if e.Code != drip.CodeInvalid {
		t.Fatalf("error code %q, want %q", e.Code, drip.CodeInvalid)
	}
	return e
}

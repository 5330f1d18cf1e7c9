package safehttp_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/safehttp"
)

// The httptest certificate names example.com and 127.0.0.1, so a test
// reaches an HTTPS receiver by a name through a resolver that says
// example.com is 127.0.0.1.
const testHost = "example.com"

// devOptions admit the local receiver rcv: loopback, http, its certificate.
func devOptions(rcv *receiver, res *resolver) safehttp.Options {
	pool := x509.NewCertPool()
	if cert := rcv.Certificate(); cert != nil {
		pool.AddCert(cert)
	}
	return safehttp.Options{AllowInsecure: true, Resolver: res, RootCAs: pool, Timeout: 5 * time.Second}
}

func TestClientRefusesAddressesThatAreNotPublicWhenConnecting(t *testing.T) {
	t.Parallel()
	for _, tc := range forbidden {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			res := newResolver(map[string][]string{"victim.example.com": {tc.addr}})
			// The dialer's check runs before the socket connects: no
			// packet leaves for these addresses.
			client := safehttp.NewClient(safehttp.Options{Resolver: res, Timeout: 2 * time.Second})
			for _, u := range []string{"https://victim.example.com/hook", "https://" + literal(tc.addr) + "/hook"} {
				resp, err := client.Get(u)
				if err == nil {
					resp.Body.Close()
					t.Fatalf("%s: got a reply %d", u, resp.StatusCode)
				}
				want := "Refused to connect to " + tc.why + " (" + netip.MustParseAddr(tc.addr).Unmap().String() + ")."
				if got := appError(t, err).Message; got != want {
					t.Errorf("%s: message %q, want %q", u, got, want)
				}
			}
		})
	}
}

func TestClientRefusesAReboundNameWhenConnecting(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, true, nil)
	res := newResolver(nil)
	// Public when the URL is saved, the receiver's loopback address after.
	res.sequence(testHost, "93.184.215.14", "127.0.0.1")
	raw := "https://" + testHost + ":" + rcv.port() + "/hook"

	if err := safehttp.CheckURL(t.Context(), raw, safehttp.Options{Resolver: res}); err != nil {
		t.Fatalf("save: %v", err)
	}
	resp, err := safehttp.NewClient(safehttp.Options{Resolver: res, RootCAs: devOptions(rcv, res).RootCAs}).Get(raw)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("connected after rebinding: %d", resp.StatusCode)
	}
	if got, want := appError(t, err).Message, "Refused to connect to a loopback address (127.0.0.1)."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if n := rcv.hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}

	// The same client setup reaches the receiver where loopback is
	// admitted: what refused it above was the address check alone.
	resp, err = safehttp.NewClient(devOptions(rcv, res)).Get(raw)
	if err != nil {
		t.Fatalf("development client: %v", err)
	}
	body, err := safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
	if err != nil || string(body) != "ok" || resp.StatusCode != 200 {
		t.Fatalf("development client: %d %q %v", resp.StatusCode, body, err)
	}
	if n := rcv.hits.Load(); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	landing := newReceiver(t, true, nil)
	for _, location := range []string{
		"https://" + testHost + ":" + landing.port() + "/landing", // reachable, and not followed
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.5/admin",
	} {
		t.Run(location, func(t *testing.T) {
			rcv := newReceiver(t, true, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, location, http.StatusFound)
			})
			res := newResolver(map[string][]string{testHost: {"127.0.0.1"}})
			resp, err := safehttp.NewClient(devOptions(rcv, res)).Post("https://"+testHost+":"+rcv.port()+"/hook", "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			safehttp.ReadReply(resp, 0)
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != location {
				t.Errorf("reply %d Location %q, want 302 %q", resp.StatusCode, resp.Header.Get("Location"), location)
			}
			if n := rcv.hits.Load(); n != 1 {
				t.Errorf("receiver got %d requests, want 1", n)
			}
		})
	}
	if n := landing.hits.Load(); n != 0 {
		t.Errorf("redirect target got %d requests, want 0", n)
	}
}

// Not parallel: it sets the environment.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "proxy", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"} {
		t.Setenv(name, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	for _, secure := range []bool{false, true} {
		rcv := newReceiver(t, secure, nil)
		scheme := map[bool]string{false: "http", true: "https"}[secure]
		raw := scheme + "://" + testHost + ":" + rcv.port() + "/hook"

		// A client that honours the environment would send this request
		// to the proxy; otherwise this test would prove nothing.
		req, err := http.NewRequest(http.MethodGet, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		// (ProxyFromEnvironment reads the environment once a process, so
		// a second run of this test sees the first run's proxy: a client
		// that used it would fail to connect, and this test with it.)
		if u, err := http.ProxyFromEnvironment(req); err != nil || u == nil {
			t.Fatalf("%s: no proxy in the environment (%v)", scheme, err)
		}

		res := newResolver(map[string][]string{testHost: {"127.0.0.1"}})
		resp, err := safehttp.NewClient(devOptions(rcv, res)).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		safehttp.ReadReply(resp, 0)
		if resp.StatusCode != http.StatusOK || rcv.hits.Load() != 1 {
			t.Errorf("%s: reply %d, receiver hits %d; want 200 and 1", scheme, resp.StatusCode, rcv.hits.Load())
		}
	}
	if n := proxied.Load(); n != 0 {
		t.Errorf("proxy got %d requests, want 0", n)
	}
}

func TestClientDevelopmentOptionAdmitsALocalHTTPReceiver(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, false, nil)
	res := newResolver(nil)
	raw := rcv.URL + "/hook" // http://127.0.0.1:port/hook

	if err := safehttp.CheckURL(t.Context(), raw, devOptions(rcv, res)); err != nil {
		t.Errorf("development: save refused: %v", err)
	}
	resp, err := safehttp.NewClient(devOptions(rcv, res)).Get(raw)
	if err != nil {
		t.Fatalf("development: %v", err)
	}
	if body, _ := safehttp.ReadReply(resp, safehttp.ReplyLogBytes); string(body) != "ok" {
		t.Errorf("development: reply %q, want ok", body)
	}

	prod := safehttp.Options{Resolver: res}
	if got, want := appError(t, safehttp.CheckURL(t.Context(), raw, prod)).Message, "URL must use https."; got != want {
		t.Errorf("production: save message %q, want %q", got, want)
	}
	resp, err = safehttp.NewClient(prod).Get(raw)
	if err == nil {
		resp.Body.Close()
		t.Fatal("production: sent over http")
	}
	if got, want := appError(t, err).Message, "URL must use https."; got != want {
		t.Errorf("production: message %q, want %q", got, want)
	}
	if n := rcv.hits.Load(); n != 1 {
		t.Errorf("receiver got %d requests, want 1 (the development client's)", n)
	}
}

func TestClientDevelopmentOptionAdmitsALocalHTTPSReceiver(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, true, nil)
	res := newResolver(nil)
	raw := rcv.URL + "/hook" // https://127.0.0.1:port/hook

	resp, err := safehttp.NewClient(devOptions(rcv, res)).Get(raw)
	if err != nil {
		t.Fatalf("development: %v", err)
	}
	safehttp.ReadReply(resp, 0)

	prod := devOptions(rcv, res)
	prod.AllowInsecure = false
	if got, want := appError(t, safehttp.CheckURL(t.Context(), raw, prod)).Message, "URL points to a loopback address (127.0.0.1)."; got != want {
		t.Errorf("production: save message %q, want %q", got, want)
	}
	resp, err = safehttp.NewClient(prod).Get(raw)
	if err == nil {
		resp.Body.Close()
		t.Fatal("production: connected to loopback")
	}
	if got, want := appError(t, err).Message, "Refused to connect to a loopback address (127.0.0.1)."; got != want {
		t.Errorf("production: message %q, want %q", got, want)
	}
	if n := rcv.hits.Load(); n != 1 {
		t.Errorf("receiver got %d requests, want 1 (the development client's)", n)
	}
}

func TestClientRefusesUserInformationWhenSending(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, true, nil)
	res := newResolver(nil)
	u, _ := url.Parse(rcv.URL)
	u.User = url.UserPassword("admin", "hunter2")
	resp, err := safehttp.NewClient(devOptions(rcv, res)).Get(u.String())
	if err == nil {
		resp.Body.Close()
		t.Fatal("sent a URL with a password")
	}
	if got, want := appError(t, err).Message, "URL must not contain a user name or password."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if n := rcv.hits.Load(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

func TestClientTimesOut(t *testing.T) {
	t.Parallel()
	// The handlers stall until the test ends, whatever the client does:
	// a handler that returned when the client gave up could end the reply
	// first, and the test would be timing that instead.
	stall := func(release chan struct{}) http.HandlerFunc {
		return func(http.ResponseWriter, *http.Request) { <-release }
	}
	stallBody := func(release chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			<-release
		}
	}
	for name, handler := range map[string]func(chan struct{}) http.HandlerFunc{"headers": stall, "body": stallBody} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			rcv := newReceiver(t, true, handler(release))
			t.Cleanup(func() { close(release) }) // before rcv.Close, which waits for the handler
			opts := devOptions(rcv, newResolver(nil))
			opts.Timeout = 300 * time.Millisecond
			// The context only stops a client that never times out.
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, rcv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := safehttp.NewClient(opts).Do(req)
			if err == nil {
				_, err = safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
			}
			elapsed := time.Since(start)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("error %v, want a timeout", err)
			}
			if elapsed < opts.Timeout || elapsed > 3*time.Second {
				t.Errorf("gave up after %v, want about %v", elapsed, opts.Timeout)
			}
		})
	}
}

func TestClientRefusesTLSBelow12(t *testing.T) {
	t.Parallel()
	rcv := &receiver{Server: httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))}
	rcv.TLS = &tls.Config{MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}
	rcv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	rcv.StartTLS()
	t.Cleanup(rcv.Close)

	// A client that allows TLS 1.1 gets an answer: the server speaks it.
	old := rcv.Client()
	old.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS10
	resp, err := old.Get(rcv.URL)
	if err != nil {
		t.Fatalf("TLS 1.1 client: %v", err)
	}
	resp.Body.Close()

	resp, err = safehttp.NewClient(devOptions(rcv, newResolver(nil))).Get(rcv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("connected over TLS 1.1")
	}
	if !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("error %v, want a protocol version refusal", err)
	}
}

func TestClientReusesConnectionsAfterReadReply(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	big := strings.Repeat("0123456789", 500) // 5,000 bytes
	rcv := &receiver{Server: httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, big)
	}))}
	rcv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	rcv.StartTLS()
	t.Cleanup(rcv.Close)

	client := safehttp.NewClient(devOptions(rcv, newResolver(nil)))
	for range 3 {
		resp, err := client.Get(rcv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, err := safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
		if err != nil || string(body) != big[:safehttp.ReplyLogBytes] {
			t.Fatalf("kept %d bytes (%v), want the first %d", len(body), err, safehttp.ReplyLogBytes)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests, want 1", n)
	}
}

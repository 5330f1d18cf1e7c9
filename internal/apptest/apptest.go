// Package apptest runs the real drip application for tests: services over
// a fresh store, served over HTTP by httptest, with a settable clock,
// fixture factories and a v1 client.
package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/clocktest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// Clock is a settable clock, safe for concurrent use (clocktest.Clock).
type Clock = clocktest.Clock

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return clocktest.New(t) }

// Env is a running application.
type Env struct {
	App    *app.App
	Server *httptest.Server
	Clock  *Clock
	seq    atomic.Int64
}

// Options adjust the environment.
type Options struct {
	Rate ratelimit.Config // request rate per key; default D40
	// CallerRate is the request rate per caller IP; default D29's.
	CallerRate ratelimit.Config
	// DefaultCoin is the deployment's default coin (D28); BTC when empty.
	DefaultCoin string
	Handler     app.HandlerOptions
	Prices      price.Source // USD prices (D60); the built-in static table when nil
	// Console opens the accounts service and serves the web console's
	// pages (issue 11), at the test server's own address.
	Console bool
	// Webhooks are the webhook URL rules (D53): a local receiver needs
	// AllowInsecure, and RootCAs for its certificate.
	Webhooks safehttp.Options
	// Log is the application's log, for a test that checks what it
	// holds (a secret must never be there); discarded when nil.
	Log *slog.Logger
}

// New starts the application over st.
func New(t testing.TB, st store.Store, opts Options) *Env {
	t.Helper()
	clock := NewClock(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC))
	a, err := app.New(context.Background(), st, app.Options{Now: clock.Now, Rate: opts.Rate, CallerRate: opts.CallerRate, Prices: opts.Prices,
		DefaultCoin: opts.DefaultCoin, Webhooks: opts.Webhooks, Log: opts.Log})
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	srv := httptest.NewUnstartedServer(nil)
	if opts.Console {
		// The emailed links and the cookie's Secure follow the address
		// the console is served at: the listener's, known before start.
		if err := a.OpenAccounts(context.Background(), "http://"+srv.Listener.Addr().String(), app.AccountLimiters{}); err != nil {
			t.Fatalf("accounts: %v", err)
		}
	}
	srv.Config.Handler = a.Handler(opts.Handler)
	srv.Start()
	t.Cleanup(a.Close) // cleanups run last-first: the server closes, then the ledger
	t.Cleanup(srv.Close)
	return &Env{App: a, Server: srv, Clock: clock}
}

// User creates a verified, active user; name must be unique in the env.
func (e *Env) User(t testing.TB, username string) *drip.User {
	t.Helper()
	u, err := e.App.Users.Create(context.Background(), user.CreateParams{
		Username: username, Email: username + "@example.com", Verified: true,
	})
	if err != nil {
		t.Fatalf("create user %s: %v", username, err)
	}
	return u
}

// Faucet creates a faucet owned by a new user and deposits funds (coin ->
// smallest units) into it. It returns the faucet and its v1 key.
func (e *Env) Faucet(t testing.TB, funds map[string]int64) (*drip.Faucet, string) {
	t.Helper()
	n := e.seq.Add(1)
	owner := e.User(t, fmt.Sprintf("owner%d", n))
	f, key, err := e.App.Faucets.Create(context.Background(), faucet.CreateParams{
		OwnerID: owner.ID, Name: fmt.Sprintf("Faucet %d", n),
		Domain: fmt.Sprintf("f%d.example.com", n), URL: fmt.Sprintf("https://f%d.example.com/", n),
	})
	if err != nil {
		t.Fatalf("create faucet: %v", err)
	}
	for coin, amount := range funds {
		if _, err := e.App.Ledger.Deposit(context.Background(), f, coin, amount); err != nil {
			t.Fatalf("deposit %d %s: %v", amount, coin, err)
		}
	}
	return f, key
}

// Reply is a v1 reply: its HTTP status, raw body and decoded members.
type Reply struct {
	HTTPStatus int
	Raw        string
	Body       map[string]json.RawMessage
}

// Status is the v1 outcome code in the body, or -1 if absent.
func (r *Reply) Status() int {
	var s int
	if err := json.Unmarshal(r.Body["status"], &s); err != nil {
		return -1
	}
	return s
}

// Post sends a form-encoded POST to a v1 path ("/send") and decodes the reply.
func (e *Env) Post(t testing.TB, path string, form url.Values) *Reply {
	t.Helper()
	return e.Do(t, http.MethodPost, path, "application/x-www-form-urlencoded", form.Encode())
}

// Do sends any request to a v1 path and decodes the reply, failing the test
// if the reply is not JSON.
func (e *Env) Do(t testing.TB, method, path, contentType, body string) *Reply {
	t.Helper()
	return e.do(t, method, path, strings.NewReader(body), map[string]string{"Content-Type": contentType})
}

// DoWithHeader POSTs body to a v1 path with the given headers ("" values are left out).
func (e *Env) DoWithHeader(t testing.TB, path string, body io.Reader, header map[string]string) *Reply {
	t.Helper()
	return e.do(t, http.MethodPost, path, body, header)
}

func (e *Env) do(t testing.TB, method, path string, body io.Reader, header map[string]string) *Reply {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+apiv1.Prefix+path, body)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	r := &Reply{HTTPStatus: resp.StatusCode, Raw: string(raw)}
	if err := json.Unmarshal(raw, &r.Body); err != nil {
		t.Fatalf("%s %s: reply is not a JSON object: %v\n%s", method, path, err, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return r
}

// Balance reads an account's balance of coin straight from the store.
func (e *Env) Balance(t testing.TB, accountID int64, coin string) int64 {
	t.Helper()
	b, err := e.App.Store.BalanceGet(context.Background(), accountID, coin)
	if err != nil {
		t.Fatalf("balance: %v", err)
	}
	return b
}

// Reconcile fails the test unless the ledger holds its invariant (D3).
func (e *Env) Reconcile(t testing.TB) {
	t.Helper()
	r, err := e.App.Ledger.Reconcile(context.Background())
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if !r.OK() {
		t.Fatalf("ledger does not reconcile: %+v", r)
	}
}

package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faultproxy"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// requestTimeout is the deadline the outage tests give each request: long
// enough for a payout (ledger.SettleMargin and a second), short enough
// that a hang would show.
const requestTimeout = 4 * time.Second

// outageEnv is the application over PostgreSQL reached through a fault
// proxy, with a funded faucet, its v1 key and a read+send v2 key.
type outageEnv struct {
	*apptest.Env
	px     *faultproxy.Proxy
	f      *drip.Faucet
	v1, v2 string
}

func newOutageEnv(t *testing.T) *outageEnv {
	t.Helper()
	_, raw := storetest.OpenPostgresURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	px, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	u.Host = px.Addr()
	st, err := postgres.OpenTimeouts(context.Background(), u.String(),
		postgres.Timeouts{Connect: time.Second, Statement: requestTimeout, IdleInTransaction: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := apptest.New(t, st, apptest.Options{Handler: app.HandlerOptions{RequestTimeout: requestTimeout}})
	env.User(t, "bob")
	f, v1 := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
	v2 := env.Key(t, f, drip.ScopeRead, drip.ScopeSend)
	// A first use records the key's last use (key.TouchEvery); the clock
	// stands still, so no later request writes it again, and the COMMIT
	// a test breaks is the payout's own.
	if r := env.V2(t, v2, "/balances", nil); r.HTTPStatus != http.StatusOK {
		t.Fatalf("first use of the v2 key: %s", r.Raw)
	}
	return &outageEnv{Env: env, px: px, f: f, v1: v1, v2: v2}
}

// readyz returns /readyz's HTTP status and checks.
func (e *outageEnv) readyz(t *testing.T) (int, map[string]string) {
	t.Helper()
	resp, err := http.Get(e.Server.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("/readyz: %v\n%s", err, raw)
	}
	return resp.StatusCode, body.Checks
}

// toolCall calls a tool of the tool server with the v2 key and returns the
// HTTP status, Retry-After, and the JSON-RPC error's drip code if any.
func (e *outageEnv) toolCall(t *testing.T, tool string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	req, err := http.NewRequest(http.MethodPost, e.Server.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.v2)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Error *struct {
			Data *struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		t.Fatalf("tool call: not JSON-RPC: %v\n%s", err, raw)
	}
	code := ""
	if rpc.Error != nil && rpc.Error.Data != nil {
		code = rpc.Error.Data.Code
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), code
}

// timed runs fn and fails the test if it took past the request's deadline
// and a margin: an outage is answered, never waited out.
func timed(t *testing.T, what string, fn func()) {
	t.Helper()
	start := time.Now()
	fn()
	if took := time.Since(start); took > requestTimeout+2*time.Second {
		t.Errorf("%s answered after %s, want within the request's deadline (%s)", what, took, requestTimeout)
	}
}

// D58, issue 9 item 3: with PostgreSQL refusing connections, v1 answers in
// its envelope (HTTP 200, 459: retry later), v2 answers 503 unavailable
// with Retry-After, /readyz says the database is down; nothing is paid,
// and all comes back when the database does.
func TestOutageAnswers(t *testing.T) {
	t.Parallel()
	for _, fault := range []struct {
		name          string
		start, finish func(*faultproxy.Proxy)
	}{
		{"refused", func(p *faultproxy.Proxy) { p.Refuse(true); p.ResetAll() }, func(p *faultproxy.Proxy) { p.Refuse(false) }},
		{"stalled", func(p *faultproxy.Proxy) { p.Stall(true) }, func(p *faultproxy.Proxy) { p.Stall(false) }},
	} {
		t.Run(fault.name, func(t *testing.T) {
			t.Parallel()
			e := newOutageEnv(t)
			send := url.Values{"api_key": {e.v1}, "to": {"bob"}, "amount": {"1000"}, "currency": {"BTC"}}
			if r := e.Post(t, "/send", send); r.Status() != 200 {
				t.Fatalf("send before the outage: %s", r.Raw)
			}
			if status, checks := e.readyz(t); status != http.StatusOK || checks["database"] != "ok" {
				t.Fatalf("/readyz before the outage: %d %v", status, checks)
			}

			fault.start(e.px)
			timed(t, "v1 send", func() {
				r := e.Post(t, "/send", send)
				if r.HTTPStatus != http.StatusOK || r.Status() != 459 {
					t.Errorf("v1 send: HTTP %d %s, want HTTP 200 and status 459", r.HTTPStatus, r.Raw)
				}
			})
			timed(t, "v1 getbalance", func() {
				r := e.Post(t, "/getbalance", url.Values{"api_key": {e.v1}, "currency": {"BTC"}})
				if r.HTTPStatus != http.StatusOK || r.Status() != 459 {
					t.Errorf("v1 getbalance: HTTP %d %s, want HTTP 200 and status 459", r.HTTPStatus, r.Raw)
				}
			})
			for _, path := range []string{"/balances", "/send"} {
				timed(t, "v2 "+path, func() {
					body := map[string]any{"idempotency_key": "outage-1", "to": "bob", "amount": 1000, "currency": "BTC"}
					if path != "/send" {
						body = nil
					}
					r := e.V2(t, e.v2, path, body) // checked against the OpenAPI document too
					if r.HTTPStatus != http.StatusServiceUnavailable || r.Code() != string(drip.CodeUnavailable) {
						t.Errorf("v2 %s: HTTP %d %s, want 503 unavailable", path, r.HTTPStatus, r.Raw)
					}
					if r.Header.Get("Retry-After") == "" {
						t.Errorf("v2 %s: no Retry-After", path)
					}
				})
			}
			timed(t, "tool call", func() {
				status, retryAfter, code := e.toolCall(t, "get_balances")
				if status != http.StatusServiceUnavailable || code != string(drip.CodeUnavailable) || retryAfter == "" {
					t.Errorf("tool call: HTTP %d, data.code %q, Retry-After %q; want 503 unavailable with Retry-After", status, code, retryAfter)
				}
			})
			timed(t, "/readyz", func() {
				if status, checks := e.readyz(t); status != http.StatusServiceUnavailable || checks["database"] != "down" {
					t.Errorf("/readyz during the outage: %d %v, want 503 and the database down", status, checks)
				}
			})

			fault.finish(e.px)
			e.px.ResetAll() // connections that held stalled requests are of no use now
			deadline := time.Now().Add(10 * time.Second)
			for {
				status, _ := e.readyz(t)
				if status == http.StatusOK {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("/readyz still not ready 10 s after the database came back")
				}
				time.Sleep(100 * time.Millisecond)
			}
			if r := e.Post(t, "/send", send); r.Status() != 200 {
				t.Errorf("send after the outage: %s", r.Raw)
			}
			if r := e.V2(t, e.v2, "/send", map[string]any{"idempotency_key": "outage-1", "to": "bob", "amount": 1000, "currency": "BTC"}); r.HTTPStatus != http.StatusOK {
				t.Errorf("v2 send after the outage: %s", r.Raw)
			}
			// Two v1 sends and one v2 send were paid; nothing during the outage.
			if got := e.Balance(t, e.f.AccountID, "BTC"); got != 1_000_000-3_000 {
				t.Errorf("faucet balance %d, want %d", got, 1_000_000-3_000)
			}
			e.Reconcile(t)
		})
	}
}

// D6, D58: a payout's COMMIT is answered while every connection is reset
// and new ones refused, and the database stays out of reach past the
// request's deadline. The payout committed, and nobody could ask: v1
// answers 459 saying the outcome is not known, v2 answers 503
// outcome_unknown (never "unavailable", which would say nothing was done:
// found by TestFaults, where v2 answered it for committed payouts). Once
// the database is back, the v2 retry with the same key replays the payout
// and pays nothing more.
func TestLostCommitDuringOutage(t *testing.T) {
	t.Parallel()
	for _, api := range []string{"v1", "v2"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := newOutageEnv(t)
			before := e.Balance(t, e.f.AccountID, "BTC")
			fired := e.px.ResetWhenServerSends([]byte("COMMIT\x00"))
			go func() { // the database goes away the moment it commits
				<-fired
				e.px.Refuse(true)
				e.px.ResetAll()
			}()
			send := map[string]any{"idempotency_key": "lost-1", "to": "bob", "amount": 1000, "currency": "BTC"}
			timed(t, api+" send", func() {
				if api == "v1" {
					r := e.Post(t, "/send", url.Values{"api_key": {e.v1}, "to": {"bob"}, "amount": {"1000"}, "currency": {"BTC"}})
					if r.HTTPStatus != http.StatusOK || r.Status() != 459 || !strings.Contains(r.Raw, "not known") {
						t.Errorf("v1 send: HTTP %d %s, want 459 saying the outcome is not known", r.HTTPStatus, r.Raw)
					}
					return
				}
				r := e.V2(t, e.v2, "/send", send)
				if r.HTTPStatus != http.StatusServiceUnavailable || r.Code() != string(drip.CodeOutcomeUnknown) {
					t.Errorf("v2 send: HTTP %d %s, want 503 outcome_unknown", r.HTTPStatus, r.Raw)
				}
			})
			select {
			case <-fired:
			case <-time.After(5 * time.Second):
				t.Fatal("no COMMIT was answered: the fault was not injected")
			}
			e.px.Refuse(false)
			if got := e.Balance(t, e.f.AccountID, "BTC"); got != before-1000 {
				t.Fatalf("faucet balance %d, want %d: the payout committed", got, before-1000)
			}
			if api == "v2" {
				r := e.V2(t, e.v2, "/send", send)
				if r.HTTPStatus != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("v2 retry with the same key: HTTP %d %s, want the payout replayed", r.HTTPStatus, r.Raw)
				}
				if got := e.Balance(t, e.f.AccountID, "BTC"); got != before-1000 {
					t.Errorf("faucet balance %d after the retry, want %d: paid once", got, before-1000)
				}
			}
			e.Reconcile(t)
		})
	}
}

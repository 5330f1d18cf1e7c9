package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
)

// fault is what the proxy does with one attempt of a send.
type fault int

const (
	forward          fault = iota // pass it to drip
	unavailable                   // answer 503 unavailable, as drip does when its database stalls; drip never sees it
	rateLimited                   // answer 429 rate_limited; drip never sees it
	dropAfterPaying               // pass it to drip, then close the connection without a reply
	unknownAfterPaid              // pass it to drip, then answer 503 outcome_unknown
)

// proxy stands between the client and drip and fails sends as its plan
// says, attempt by attempt; it keeps each attempt's idempotency key.
type proxy struct {
	t    *testing.T
	srv  *httptest.Server
	next *httputil.ReverseProxy
	plan func(attempt int) fault

	mu   sync.Mutex
	keys []string
}

func newProxy(t *testing.T, target string, plan func(attempt int) fault) *proxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, next: httputil.NewSingleHostReverseProxy(u), plan: plan}
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != v2Prefix+"/send" {
		p.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Key string `json:"idempotency_key"`
	}
	_ = json.Unmarshal(body, &req)
	p.mu.Lock()
	p.keys = append(p.keys, req.Key)
	attempt := len(p.keys)
	p.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))

	switch p.plan(attempt) {
	case forward:
		p.next.ServeHTTP(w, r)
	case unavailable:
		refuse(w, http.StatusServiceUnavailable, CodeUnavailable)
	case rateLimited:
		refuse(w, http.StatusTooManyRequests, CodeRateLimited)
	case dropAfterPaying, unknownAfterPaid:
		rec := httptest.NewRecorder()
		p.next.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			p.t.Errorf("attempt %d: drip answered %d, want a paid send: %s", attempt, rec.Code, rec.Body)
		}
		if p.plan(attempt) == unknownAfterPaid {
			refuse(w, http.StatusServiceUnavailable, CodeOutcomeUnknown)
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			p.t.Error(err)
			return
		}
		conn.Close()
	}
}

// refuse answers as drip answers a refusal, Retry-After included.
func refuse(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"success":false,"status":%d,"message":"Retry in a second.","data":null,"error":{"code":%q,"v1_status":459}}`, status, code)
}

// attempts is how many sends reached the proxy, and their keys.
func (p *proxy) attempts() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.keys), append([]string(nil), p.keys...)
}

// TestSendRetriesKeepTheKey sends through a proxy that fails attempts
// before and after drip paid: every retry carries the first attempt's
// idempotency key, so there is exactly one payout whatever happened to
// the requests (D35), and a retry of a paid send is a replay of it.
func TestSendRetriesKeepTheKey(t *testing.T) {
	first := func(f fault, n int) func(int) fault {
		return func(attempt int) fault {
			if attempt <= n {
				return f
			}
			return forward
		}
	}
	always := func(f fault) func(int) fault { return func(int) fault { return f } }
	cases := []struct {
		name   string
		plan   func(int) fault
		policy func(*RetryPolicy)
		key    string // the caller's; "" lets Send make one
		// what must happen
		attempts int
		paid     bool
		replayed bool
		code     string // of the error when not paid
		minTime  time.Duration
		maxTime  time.Duration
	}{
		{name: "503 unavailable twice, honouring Retry-After", plan: first(unavailable, 2), attempts: 3, paid: true, minTime: 2 * time.Second},
		{name: "connection dropped after drip paid", plan: first(dropAfterPaying, 1), attempts: 2, paid: true, replayed: true},
		{name: "outcome_unknown after drip paid", plan: first(unknownAfterPaid, 1), key: "order-42", attempts: 2, paid: true, replayed: true},
		{name: "429 not retried unless asked", plan: first(rateLimited, 1), attempts: 1, code: CodeRateLimited, maxTime: time.Second},
		{name: "429 retried when asked", plan: first(rateLimited, 1), policy: func(p *RetryPolicy) { p.RetryRateLimited = true },
			attempts: 2, paid: true, minTime: time.Second},
		{name: "attempts bounded", plan: always(unknownAfterPaid), policy: func(p *RetryPolicy) { p.MaxAttempts = 3 },
			attempts: 3, code: CodeOutcomeUnknown},
		{name: "time bounded", plan: always(unavailable), policy: func(p *RetryPolicy) { p.MaxElapsed = 1500 * time.Millisecond },
			attempts: 2, code: CodeUnavailable, maxTime: 1900 * time.Millisecond},
	}
	eachEngine(t, apptest.Options{}, func(t *testing.T, e *apptest.Env) {
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				to := fmt.Sprintf("user%d", i)
				e.User(t, to)
				f, _ := e.Faucet(t, map[string]int64{"BTC": 1_000_000})
				p := newProxy(t, e.Server.URL, tc.plan)
				policy := testPolicy()
				if tc.policy != nil {
					tc.policy(&policy)
				}
				c := newClient(t, p.srv.URL, e.Key(t, f, drip.ScopeSend), newRecorder(t, nil), WithRetryPolicy(policy))

				start := time.Now()
				res, err := c.Send(ctx, SendRequest{IdempotencyKey: tc.key, To: to, Amount: 1000, Currency: "BTC"})
				elapsed := time.Since(start)

				n, keys := p.attempts()
				if n != tc.attempts {
					t.Errorf("%d attempts reached drip's side, want %d", n, tc.attempts)
				}
				for _, k := range keys {
					if k != keys[0] || k == "" || (tc.key != "" && k != tc.key) {
						t.Errorf("idempotency keys %q: want one key on every attempt (the caller's %q if given)", keys, tc.key)
						break
					}
				}
				payouts, perr := e.App.Faucets.Payouts(ctx, f, "BTC", 10)
				if perr != nil {
					t.Fatal(perr)
				}
				if tc.paid {
					if err != nil {
						t.Fatalf("Send: %v", err)
					}
					if len(payouts) != 1 || res.PayoutID != payouts[0].ID {
						t.Errorf("payouts held %+v, reply's payout_id %d: want exactly one, that one", payouts, res.PayoutID)
					}
					if res.Attempts != tc.attempts || res.Replayed != tc.replayed || res.IdempotencyKey != keys[0] {
						t.Errorf("result: attempts %d replayed %v key %q; want %d, %v, %q", res.Attempts, res.Replayed, res.IdempotencyKey, tc.attempts, tc.replayed, keys[0])
					}
					if got := e.Balance(t, f.AccountID, "BTC"); got != 999_000 || res.Balance != got {
						t.Errorf("balance %d, reply says %d: want 999000, debited once", got, res.Balance)
					}
				} else {
					var se *SendError
					var ae *Error
					if !errors.As(err, &se) || !errors.As(err, &ae) {
						t.Fatalf("Send: %v (%T), want a *SendError wrapping an *Error", err, err)
					}
					if se.Attempts != tc.attempts || se.IdempotencyKey != keys[0] || ae.Code != tc.code || ae.RetryAfter != time.Second || ae.V1Status != 459 {
						t.Errorf("error: %+v, %+v; want %d attempts with key %q, code %s, Retry-After 1s, v1 459", se, ae, tc.attempts, keys[0], tc.code)
					}
					if tc.code == CodeOutcomeUnknown {
						// Every attempt reached drip, which paid the first
						// and replayed it to the others: never twice.
						if len(payouts) != 1 {
							t.Errorf("%d payouts held, want 1 (each attempt replays the first)", len(payouts))
						}
					} else if len(payouts) != 0 {
						t.Errorf("%d payouts held, want none", len(payouts))
					}
				}
				if elapsed < tc.minTime || (tc.maxTime > 0 && elapsed > tc.maxTime) {
					t.Errorf("Send took %s, want between %s and %s", elapsed, tc.minTime, tc.maxTime)
				}
			})
		}
	})
}

// TestSendStopsWithTheContext: a context that ends while Send waits to
// retry ends Send at once, with both the context's error and drip's.
func TestSendStopsWithTheContext(t *testing.T) {
	eachEngine(t, apptest.Options{}, func(t *testing.T, e *apptest.Env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 1_000_000})
		p := newProxy(t, e.Server.URL, func(int) fault { return unavailable })
		c := newClient(t, p.srv.URL, e.Key(t, f, drip.ScopeSend), newRecorder(t, nil))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC"})
		if elapsed := time.Since(start); elapsed > 900*time.Millisecond {
			t.Errorf("Send took %s after its context ended at 200ms", elapsed)
		}
		if !errors.Is(err, context.DeadlineExceeded) || ErrorCode(err) != CodeUnavailable {
			t.Errorf("Send: %v, want the deadline and the 503 unavailable", err)
		}
		if n, _ := p.attempts(); n != 1 {
			t.Errorf("%d attempts, want 1", n)
		}
	})
}

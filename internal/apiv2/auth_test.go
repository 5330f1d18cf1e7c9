// Tests of v2 authentication and authorization (spec 5 v2, 8; DESIGN D14,
// D34, D40): Bearer keys that are missing, unknown, expired or revoked are
// 401 with WWW-Authenticate; a key lacking the scope, a caller outside the
// key's or the faucet's IP whitelist and a suspended owner are 403; the
// request rate of each key is 429 with Retry-After. Every error carries
// the v1_status of drip's one table (internal/drip/error.go).
//
// The helpers are those of helpers_test.go.
package apiv2_test

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestAuthExpiredKey: a key minted to live an hour works for the hour and
// is 401 from its expiry on, for every path (D14).
func TestAuthExpiredKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, ExpiresIn: time.Hour})
		_, lasting := mintKey(t, env, key.MintParams{FaucetID: f.ID})

		wantOK(t, askBalance(t, env, secret))
		env.Clock.Advance(time.Hour - time.Second)
		wantOK(t, askBalance(t, env, secret))
		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("before-expiry")), false)
		env.Clock.Advance(time.Second)
		wantUnauthenticated(t, askBalance(t, env, secret))
		wantUnauthenticated(t, env.V2(t, secret, "/send", sendToAlice("after-expiry")))
		// Not even a replay of a payout the key made before it expired.
		wantUnauthenticated(t, env.V2(t, secret, "/send", sendToAlice("before-expiry")))
		env.Clock.Advance(24 * time.Hour)
		wantUnauthenticated(t, askBalance(t, env, secret))
		wantOK(t, askBalance(t, env, lasting))
		env.Reconcile(t)
	})
}

// TestAuthRevokedKey: a revoked key is 401 at once (D14); the faucet's
// other keys keep working.
func TestAuthRevokedKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env, _, k, secret, other := twoKeys(t, eng)

		wantOK(t, askBalance(t, env, secret))
		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("pre-revoke")), false)
		if _, err := env.App.Keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		wantUnauthenticated(t, askBalance(t, env, secret))
		wantUnauthenticated(t, env.V2(t, secret, "/send", sendToAlice("post-revoke")))
		wantUnauthenticated(t, env.V2(t, secret, "/send", sendToAlice("pre-revoke")))
		wantOK(t, askBalance(t, env, other))
		wantPaid(t, env.V2(t, other, "/send", sendToAlice("pre-revoke")), true) // keys are per faucet, not per API key
		env.Reconcile(t)
	})
}

// twoKeys is a send environment with alice and a faucet funded with
// 10,000 BTC, and two of the faucet's keys: k, whose secret is secret,
// and another, whose secret is other (the revocation tests).
func twoKeys(t *testing.T, eng storetest.Engine) (env *apptest.Env, f *drip.Faucet, k *drip.Key, secret, other string) {
	t.Helper()
	env = sendEnv(t, eng.Open(t), nil)
	f, _ = env.Faucet(t, map[string]int64{"BTC": 10_000})
	env.User(t, "alice")
	k, secret = mintKey(t, env, key.MintParams{FaucetID: f.ID})
	_, other = mintKey(t, env, key.MintParams{FaucetID: f.ID})
	return env, f, k, secret, other
}

// TestAuthBearerCredentials: every way of not presenting a live v2 key is
// 401 unauthenticated, including the faucet's v1 key (spec 9: v1 keys are
// the single-key model, v2 takes scoped keys).
func TestAuthBearerCredentials(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, v1Key := env.Faucet(t, map[string]int64{"BTC": 10_000})
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		changeLast := func(s string) string {
			if s[len(s)-1] == 'a' {
				return s[:len(s)-1] + "b"
			}
			return s[:len(s)-1] + "a"
		}
		tests := []struct {
			name          string
			authorization string // the header; "" leaves it out
		}{
			{"no header", ""},
			{"empty bearer", "Bearer "},
			{"basic scheme", "Basic " + secret},
			{"key without a scheme", secret},
			{"unknown key", "Bearer drip_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
			{"key with its last character changed", "Bearer " + changeLast(secret)},
			{"v1 key", "Bearer " + v1Key},
			{"overlong key", "Bearer " + secret + strings.Repeat("x", 200)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h := http.Header{}
				if tt.authorization != "" {
					h.Set("Authorization", tt.authorization)
				}
				wantUnauthenticated(t, env.V2Do(t, http.MethodPost, "", "/balance", `{"currency":"BTC"}`, h))
				wantUnauthenticated(t, env.V2Do(t, http.MethodPost, "", "/send", `{"idempotency_key":"x","to":"a","amount":1,"currency":"BTC"}`, h))
			})
		}
		// The scheme is case-insensitive (RFC 7235).
		h := http.Header{"Authorization": {"bearer " + secret}}
		wantOK(t, env.V2Do(t, http.MethodPost, "", "/balance", `{"currency":"BTC"}`, h))
		// The v1 key still works on v1.
		if r := env.Post(t, "/getbalance", url.Values{"api_key": {v1Key}, "currency": {"BTC"}}); r.Status() != 200 {
			t.Errorf("v1 getbalance with the v1 key: %s", r.Raw)
		}
		env.Reconcile(t)
	})
}

// TestAuthScope: a key lacking the path's scope is 403 insufficient_scope,
// which v1 has no status for (D34, drip's v1 table).
func TestAuthScope(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		alice := env.User(t, "alice")
		_, readOnly := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead}})
		_, sendOnly := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}})

		r := env.V2(t, readOnly, "/send", sendToAlice("scoped"))
		wantError(t, r, http.StatusForbidden, "insufficient_scope")
		wantV1Status(t, r, nil)
		r = askBalance(t, env, sendOnly)
		wantError(t, r, http.StatusForbidden, "insufficient_scope")
		wantV1Status(t, r, nil)
		wantPaid(t, env.V2(t, sendOnly, "/send", sendToAlice("scoped")), false)
		wantOK(t, askBalance(t, env, readOnly))
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 100 {
			t.Errorf("recipient balance %d, want 100 (only the send-scoped key paid)", got)
		}
		env.Reconcile(t)
	})
}

// TestAuthKeyIPWhitelist: a key with an IP whitelist admits only callers in
// it (D14); the test server's caller is 127.0.0.1. X-Forwarded-For from an
// untrusted peer changes nothing.
func TestAuthKeyIPWhitelist(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		tests := []struct {
			name    string
			list    []string
			allowed bool
		}{
			{"another network", []string{"10.0.0.0/8"}, false},
			{"another address", []string{"127.0.0.2/32"}, false},
			{"IPv6 loopback only", []string{"::1/128"}, false},
			{"several without the caller", []string{"192.0.2.0/24", "2001:db8::/32"}, false},
			{"loopback network", []string{"127.0.0.0/8"}, true},
			{"the caller's address", []string{"127.0.0.1/32"}, true},
			{"among others", []string{"10.0.0.0/8", "127.0.0.1/32"}, true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var prefixes []netip.Prefix
				for _, s := range tt.list {
					prefixes = append(prefixes, netip.MustParsePrefix(s))
				}
				_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, IPWhitelist: prefixes})
				idem := "ip-" + tt.name
				if !tt.allowed {
					wantForbidden(t, askBalance(t, env, secret))
					wantForbidden(t, env.V2(t, secret, "/send", sendToAlice(idem)))
					spoofed := http.Header{"X-Forwarded-For": {prefixes[0].Addr().String()}}
					wantForbidden(t, env.V2Do(t, http.MethodPost, secret, "/balance", `{"currency":"BTC"}`, spoofed))
					return
				}
				wantOK(t, askBalance(t, env, secret))
				wantPaid(t, env.V2(t, secret, "/send", sendToAlice(idem)), false)
			})
		}
		// A revoked or expired key is 401 before its whitelist is looked at.
		k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, ExpiresIn: time.Hour,
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
		wantForbidden(t, askBalance(t, env, secret))
		if _, err := env.App.Keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		wantUnauthenticated(t, askBalance(t, env, secret))
		env.Reconcile(t)
	})
}

// TestAuthFaucetIPWhitelist: the faucet's own IP whitelist applies to its v2
// keys too (D34): outside it 403, inside or emptied 200.
func TestAuthFaucetIPWhitelist(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		set := func(list ...string) {
			t.Helper()
			var prefixes []netip.Prefix
			for _, s := range list {
				prefixes = append(prefixes, netip.MustParsePrefix(s))
			}
			if _, _, err := env.App.Faucets.SetIPWhitelist(context.Background(), f.ID, prefixes); err != nil {
				t.Fatalf("set faucet whitelist: %v", err)
			}
		}

		set("10.0.0.0/8")
		wantForbidden(t, askBalance(t, env, secret))
		wantForbidden(t, env.V2(t, secret, "/send", sendToAlice("faucet-ip")))
		if got := env.Balance(t, f.AccountID, "BTC"); got != 10_000 {
			t.Errorf("faucet balance %d, want 10000 (nothing paid)", got)
		}
		set("10.0.0.0/8", "127.0.0.0/8")
		wantOK(t, askBalance(t, env, secret))
		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("faucet-ip")), false)
		set("192.0.2.1/32")
		wantForbidden(t, askBalance(t, env, secret))
		set()
		wantOK(t, askBalance(t, env, secret))
		env.Reconcile(t)
	})
}

// TestAuthOwnerSuspended: the keys of a suspended owner's faucet are 403
// (D34) and nothing is paid; reactivation restores them.
func TestAuthOwnerSuspended(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		g, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		_, otherOwner := mintKey(t, env, key.MintParams{FaucetID: g.ID})
		owner := &drip.User{ID: f.OwnerID}

		if err := env.App.Users.SetStatus(context.Background(), owner, drip.UserSuspended); err != nil {
			t.Fatalf("suspend: %v", err)
		}
		wantForbidden(t, askBalance(t, env, secret))
		wantForbidden(t, env.V2(t, secret, "/send", sendToAlice("suspended")))
		if got := env.Balance(t, f.AccountID, "BTC"); got != 10_000 {
			t.Errorf("faucet balance %d, want 10000 (nothing paid)", got)
		}
		wantOK(t, askBalance(t, env, otherOwner))
		if err := env.App.Users.SetStatus(context.Background(), owner, drip.UserActive); err != nil {
			t.Fatalf("reactivate: %v", err)
		}
		wantOK(t, askBalance(t, env, secret))
		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("suspended")), false)
		env.Reconcile(t)
	})
}

// TestAuthRequestRate: each key has its own token bucket (D40). With a
// burst of 5, a key's 6th immediate request is 429 rate_limited with
// Retry-After and v1_status 459; another key of the same faucet, and the
// faucet's v1 key, have buckets of their own; the bucket refills with time.
// rate_limit_remaining is the bucket's level after the request (D24).
func TestAuthRequestRate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := apptest.New(t, eng.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 5}})
		f, v1Key := env.Faucet(t, map[string]int64{"BTC": 100_000})
		env.User(t, "alice")
		_, a := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		_, b := mintKey(t, env, key.MintParams{FaucetID: f.ID})

		for i := range 5 {
			d := wantPaid(t, env.V2(t, a, "/send", sendToAlice("rate-"+string(rune('a'+i)))), false)
			if want := float64(4 - i); d.RateLimitRemaining != want {
				t.Errorf("request %d: rate_limit_remaining %v, want %v", i+1, d.RateLimitRemaining, want)
			}
		}
		limited := func(r *apptest.V2Reply) {
			t.Helper()
			wantError(t, r, http.StatusTooManyRequests, "rate_limited")
			wantV1Status(t, r, intPtr(459))
			// One request refills in 1 s at 60 a minute; +1 for rounding up.
			if got := retryAfter(t, r); got < 1 || got > 2 {
				t.Errorf("Retry-After %d, want 1 or 2 seconds", got)
			}
		}
		limited(env.V2(t, a, "/send", sendToAlice("rate-f")))
		limited(askBalance(t, env, a)) // every path of the key shares its bucket
		if got := env.Balance(t, f.AccountID, "BTC"); got != 100_000-500 {
			t.Errorf("faucet balance %d, want %d (the 429s paid nothing)", got, 100_000-500)
		}

		for range 5 {
			wantOK(t, askBalance(t, env, b))
		}
		limited(askBalance(t, env, b))
		if r := env.Post(t, "/getbalance", url.Values{"api_key": {v1Key}, "currency": {"BTC"}}); r.Status() != 200 {
			t.Errorf("v1 key limited by the v2 keys' requests: %s", r.Raw)
		}

		env.Clock.Advance(time.Second)
		d := wantPaid(t, env.V2(t, a, "/send", sendToAlice("rate-f")), false)
		if d.RateLimitRemaining != 0 {
			t.Errorf("rate_limit_remaining %v after a 1 s refill, want 0", d.RateLimitRemaining)
		}
		limited(env.V2(t, a, "/send", sendToAlice("rate-g")))
		env.Reconcile(t)
	})
}

// TestAuthRevokedKeyFirstAfterWarmSends: a send takes the latest cache
// generation known without reading it, so the first request after a
// revocation, a send from memory, must still be refused: its payment's
// transaction finds the generation changed and the send is served again
// (D63, D14). Its idempotency key stays unbound and nothing is paid.
func TestAuthRevokedKeyFirstAfterWarmSends(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env, f, k, secret, other := twoKeys(t, eng)

		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("warm-1")), false)
		wantPaid(t, env.V2(t, secret, "/send", sendToAlice("warm-2")), false) // key and recipient from memory
		before, err := env.App.Store.BalanceGet(context.Background(), f.AccountID, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.App.Keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		wantUnauthenticated(t, env.V2(t, secret, "/send", sendToAlice("after-revoke")))
		if after, _ := env.App.Store.BalanceGet(context.Background(), f.AccountID, "BTC"); after != before {
			t.Errorf("faucet balance %d after the revoked key's send, want %d", after, before)
		}
		wantPaid(t, env.V2(t, other, "/send", sendToAlice("after-revoke")), false) // the key was never bound
		env.Reconcile(t)
	})
}

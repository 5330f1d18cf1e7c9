// Tests of v2 authentication and authorization (spec 5 v2, 8; DESIGN D14,
// D34, D40): Bearer keys that are missing, unknown, expired or revoked are
// 401 with WWW-Authenticate; a key lacking the scope, a caller outside the
// key's or the faucet's IP whitelist and a suspended owner are 403; the
// request rate of each key is 429 with Retry-After. Every error carries
// the v1_status of drip's one table (internal/drip/error.go).
//
// Helpers carry the prefix auth (and reuse the snd helpers of
// send_test.go) so they cannot clash with the other test files.
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

// authBalance asks /balance with a key (read scope) and returns the reply.
func authBalance(t *testing.T, env *apptest.Env, secret string) *apptest.V2Reply {
	t.Helper()
	return env.V2(t, secret, "/balance", map[string]string{"currency": "BTC"})
}

// authOK checks a reply is 200.
func authOK(t *testing.T, r *apptest.V2Reply) {
	t.Helper()
	if r.HTTPStatus != http.StatusOK || !r.Envelope.Success {
		t.Fatalf("HTTP %d, want 200: %s", r.HTTPStatus, r.Raw)
	}
}

// authUnauthenticated checks a reply is 401 unauthenticated with a Bearer
// challenge and v1_status 403 (v1's "api_key invalid or missing").
func authUnauthenticated(t *testing.T, r *apptest.V2Reply) {
	t.Helper()
	sndRefused(t, r, http.StatusUnauthorized, "unauthenticated")
	if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
		t.Errorf("WWW-Authenticate %q, want a Bearer challenge (RFC 6750)", h)
	}
	sndV1Status(t, r, sndInt(403))
	if r.Envelope.Data != nil && string(r.Envelope.Data) != "null" {
		t.Errorf("an error reply has data %s", r.Envelope.Data)
	}
}

// authForbidden checks a reply is 403 forbidden with v1_status 401 (v1's
// "IP not whitelisted, or owner account suspended").
func authForbidden(t *testing.T, r *apptest.V2Reply) {
	t.Helper()
	sndRefused(t, r, http.StatusForbidden, "forbidden")
	if h := r.Header.Get("WWW-Authenticate"); h != "" {
		t.Errorf("a 403 carries WWW-Authenticate %q", h)
	}
	sndV1Status(t, r, sndInt(401))
}

func authSend(idem string) sndBody {
	return sndBody{IdempotencyKey: idem, To: "alice", Amount: 100, Currency: "BTC"}
}

// TestAuthExpiredKey: a key minted to live an hour works for the hour and
// is 401 from its expiry on, for every path (D14).
func TestAuthExpiredKey(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID, ExpiresIn: time.Hour})
		_, lasting := sndMint(t, env, key.MintParams{FaucetID: f.ID})

		authOK(t, authBalance(t, env, secret))
		env.Clock.Advance(time.Hour - time.Second)
		authOK(t, authBalance(t, env, secret))
		sndPaid(t, env.V2(t, secret, "/send", authSend("before-expiry")), false)
		env.Clock.Advance(time.Second)
		authUnauthenticated(t, authBalance(t, env, secret))
		authUnauthenticated(t, env.V2(t, secret, "/send", authSend("after-expiry")))
		// Not even a replay of a payout the key made before it expired.
		authUnauthenticated(t, env.V2(t, secret, "/send", authSend("before-expiry")))
		env.Clock.Advance(24 * time.Hour)
		authUnauthenticated(t, authBalance(t, env, secret))
		authOK(t, authBalance(t, env, lasting))
		env.Reconcile(t)
	})
}

// TestAuthRevokedKey: a revoked key is 401 at once (D14); the faucet's
// other keys keep working.
func TestAuthRevokedKey(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		k, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID})
		_, other := sndMint(t, env, key.MintParams{FaucetID: f.ID})

		authOK(t, authBalance(t, env, secret))
		sndPaid(t, env.V2(t, secret, "/send", authSend("pre-revoke")), false)
		if _, err := env.App.Keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		authUnauthenticated(t, authBalance(t, env, secret))
		authUnauthenticated(t, env.V2(t, secret, "/send", authSend("post-revoke")))
		authUnauthenticated(t, env.V2(t, secret, "/send", authSend("pre-revoke")))
		authOK(t, authBalance(t, env, other))
		sndPaid(t, env.V2(t, other, "/send", authSend("pre-revoke")), true) // keys are per faucet, not per API key
		env.Reconcile(t)
	})
}

// TestAuthBearerCredentials: every way of not presenting a live v2 key is
// 401 unauthenticated, including the faucet's v1 key (spec 9: v1 keys are
// the single-key model, v2 takes scoped keys).
func TestAuthBearerCredentials(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, v1Key := env.Faucet(t, map[string]int64{"BTC": 10_000})
		_, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID})
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
				authUnauthenticated(t, env.V2Do(t, http.MethodPost, "", "/balance", `{"currency":"BTC"}`, h))
				authUnauthenticated(t, env.V2Do(t, http.MethodPost, "", "/send", `{"idempotency_key":"x","to":"a","amount":1,"currency":"BTC"}`, h))
			})
		}
		// The scheme is case-insensitive (RFC 7235).
		h := http.Header{"Authorization": {"bearer " + secret}}
		authOK(t, env.V2Do(t, http.MethodPost, "", "/balance", `{"currency":"BTC"}`, h))
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
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		alice := env.User(t, "alice")
		_, readOnly := sndMint(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead}})
		_, sendOnly := sndMint(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}})

		r := env.V2(t, readOnly, "/send", authSend("scoped"))
		sndRefused(t, r, http.StatusForbidden, "insufficient_scope")
		sndV1Status(t, r, nil)
		r = authBalance(t, env, sendOnly)
		sndRefused(t, r, http.StatusForbidden, "insufficient_scope")
		sndV1Status(t, r, nil)
		sndPaid(t, env.V2(t, sendOnly, "/send", authSend("scoped")), false)
		authOK(t, authBalance(t, env, readOnly))
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
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
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
				_, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID, IPWhitelist: prefixes})
				idem := "ip-" + tt.name
				if !tt.allowed {
					authForbidden(t, authBalance(t, env, secret))
					authForbidden(t, env.V2(t, secret, "/send", authSend(idem)))
					spoofed := http.Header{"X-Forwarded-For": {prefixes[0].Addr().String()}}
					authForbidden(t, env.V2Do(t, http.MethodPost, secret, "/balance", `{"currency":"BTC"}`, spoofed))
					return
				}
				authOK(t, authBalance(t, env, secret))
				sndPaid(t, env.V2(t, secret, "/send", authSend(idem)), false)
			})
		}
		// A revoked or expired key is 401 before its whitelist is looked at.
		k, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID, ExpiresIn: time.Hour,
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
		authForbidden(t, authBalance(t, env, secret))
		if _, err := env.App.Keys.Revoke(context.Background(), k.ID); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		authUnauthenticated(t, authBalance(t, env, secret))
		env.Reconcile(t)
	})
}

// TestAuthFaucetIPWhitelist: the faucet's own IP whitelist applies to its v2
// keys too (D34): outside it 403, inside or emptied 200.
func TestAuthFaucetIPWhitelist(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID})
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
		authForbidden(t, authBalance(t, env, secret))
		authForbidden(t, env.V2(t, secret, "/send", authSend("faucet-ip")))
		if got := env.Balance(t, f.AccountID, "BTC"); got != 10_000 {
			t.Errorf("faucet balance %d, want 10000 (nothing paid)", got)
		}
		set("10.0.0.0/8", "127.0.0.0/8")
		authOK(t, authBalance(t, env, secret))
		sndPaid(t, env.V2(t, secret, "/send", authSend("faucet-ip")), false)
		set("192.0.2.1/32")
		authForbidden(t, authBalance(t, env, secret))
		set()
		authOK(t, authBalance(t, env, secret))
		env.Reconcile(t)
	})
}

// TestAuthOwnerSuspended: the keys of a suspended owner's faucet are 403
// (D34) and nothing is paid; reactivation restores them.
func TestAuthOwnerSuspended(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := sndEnv(t, eng, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		g, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "alice")
		_, secret := sndMint(t, env, key.MintParams{FaucetID: f.ID})
		_, otherOwner := sndMint(t, env, key.MintParams{FaucetID: g.ID})
		owner := &drip.User{ID: f.OwnerID}

		if err := env.App.Users.SetStatus(context.Background(), owner, drip.UserSuspended); err != nil {
			t.Fatalf("suspend: %v", err)
		}
		authForbidden(t, authBalance(t, env, secret))
		authForbidden(t, env.V2(t, secret, "/send", authSend("suspended")))
		if got := env.Balance(t, f.AccountID, "BTC"); got != 10_000 {
			t.Errorf("faucet balance %d, want 10000 (nothing paid)", got)
		}
		authOK(t, authBalance(t, env, otherOwner))
		if err := env.App.Users.SetStatus(context.Background(), owner, drip.UserActive); err != nil {
			t.Fatalf("reactivate: %v", err)
		}
		authOK(t, authBalance(t, env, secret))
		sndPaid(t, env.V2(t, secret, "/send", authSend("suspended")), false)
		env.Reconcile(t)
	})
}

// TestAuthRequestRate: each key has its own token bucket (D40). With a
// burst of 5, a key's 6th immediate request is 429 rate_limited with
// Retry-After and v1_status 459; another key of the same faucet, and the
// faucet's v1 key, have buckets of their own; the bucket refills with time.
// rate_limit_remaining is the bucket's level after the request (D24).
func TestAuthRequestRate(t *testing.T) {
	sndRun(t, func(t *testing.T, eng storetest.Engine) {
		env := apptest.New(t, eng.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 5}})
		f, v1Key := env.Faucet(t, map[string]int64{"BTC": 100_000})
		env.User(t, "alice")
		_, a := sndMint(t, env, key.MintParams{FaucetID: f.ID})
		_, b := sndMint(t, env, key.MintParams{FaucetID: f.ID})

		for i := range 5 {
			d := sndPaid(t, env.V2(t, a, "/send", authSend("rate-"+string(rune('a'+i)))), false)
			if want := float64(4 - i); d.RateLimitRemaining != want {
				t.Errorf("request %d: rate_limit_remaining %v, want %v", i+1, d.RateLimitRemaining, want)
			}
		}
		limited := func(r *apptest.V2Reply) {
			t.Helper()
			sndRefused(t, r, http.StatusTooManyRequests, "rate_limited")
			sndV1Status(t, r, sndInt(459))
			// One request refills in 1 s at 60 a minute; +1 for rounding up.
			if got := sndRetryAfter(t, r); got < 1 || got > 2 {
				t.Errorf("Retry-After %d, want 1 or 2 seconds", got)
			}
		}
		limited(env.V2(t, a, "/send", authSend("rate-f")))
		limited(authBalance(t, env, a)) // every path of the key shares its bucket
		if got := env.Balance(t, f.AccountID, "BTC"); got != 100_000-500 {
			t.Errorf("faucet balance %d, want %d (the 429s paid nothing)", got, 100_000-500)
		}

		for range 5 {
			authOK(t, authBalance(t, env, b))
		}
		limited(authBalance(t, env, b))
		if r := env.Post(t, "/getbalance", url.Values{"api_key": {v1Key}, "currency": {"BTC"}}); r.Status() != 200 {
			t.Errorf("v1 key limited by the v2 keys' requests: %s", r.Raw)
		}

		env.Clock.Advance(time.Second)
		d := sndPaid(t, env.V2(t, a, "/send", authSend("rate-f")), false)
		if d.RateLimitRemaining != 0 {
			t.Errorf("rate_limit_remaining %v after a 1 s refill, want 0", d.RateLimitRemaining)
		}
		limited(env.V2(t, a, "/send", authSend("rate-g")))
		env.Reconcile(t)
	})
}

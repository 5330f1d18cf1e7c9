package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

var listTools = rpc("tools/list", map[string]any{})

// wantRefused fails the test unless r is a refusal before any tool ran:
// the HTTP status, the WWW-Authenticate challenge ("" for none), and a
// JSON-RPC error body answering request 1 with drip's error code and a
// message.
func wantRefused(t testing.TB, r rawReply, status int, code, challenge string) {
	t.Helper()
	if r.status != status {
		t.Errorf("HTTP %d, want %d: %s", r.status, status, r.body)
		return
	}
	if got := r.header.Get("WWW-Authenticate"); got != challenge {
		t.Errorf("WWW-Authenticate %q, want %q", got, challenge)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	rep := decodeRPC(t, r)
	if rep.Error == nil || rep.Error.Data.Code != code || rep.Error.Message == "" || !strings.Contains(string(r.body), `"id":1`) {
		t.Errorf("body %s: want a JSON-RPC error to id 1 with data.code %q and a message", r.body, code)
	}
}

// TestAuthRefusals: the tool server authorizes a v2 key of scope read or
// manage as v2 does (spec 5, D14, D34): no key, an unknown, revoked or
// expired key, or the faucet's v1 key are 401 with a Bearer challenge; a
// key with neither scope is 403; so are a key used outside its IP
// whitelist or its faucet's, a suspended owner's key, and a request from a
// foreign web page (Origin). Nothing else is served but POST.
func TestAuthRefusals(t *testing.T) {
	run(t, envOptions{origins: []string{"https://assistant.example"}}, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, v1Key := e.Faucet(t, map[string]int64{"BTC": 10_000})
		read := e.Key(t, f, drip.ScopeRead)
		revokedKey, revoked := e.mint(t, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead}})
		if _, err := e.App.Keys.Revoke(ctx, revokedKey.ID); err != nil {
			t.Fatal(err)
		}
		_, expired := e.mint(t, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead}, ExpiresIn: time.Hour})
		_, elsewhere := e.mint(t, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeManage},
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}})
		fenced, _ := e.Faucet(t, nil)
		fencedKey := e.Key(t, fenced, drip.ScopeRead)
		if _, _, err := e.App.Faucets.SetIPWhitelist(ctx, fenced.ID, []netip.Prefix{netip.MustParsePrefix("198.51.100.7/32")}); err != nil {
			t.Fatal(err)
		}
		suspended, _ := e.Faucet(t, nil)
		suspendedKey := e.Key(t, suspended, drip.ScopeRead, drip.ScopeManage)
		if err := e.App.Users.SetStatus(ctx, &drip.User{ID: suspended.OwnerID}, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)

		const (
			challenge = `Bearer realm="drip"`
			invalid   = `Bearer realm="drip", error="invalid_token"`
			scope     = `Bearer realm="drip", error="insufficient_scope", scope="read manage"`
		)
		for _, c := range []struct {
			name      string
			key       string
			header    map[string]string
			status    int
			code      string
			challenge string
		}{
			{"no key", "", nil, http.StatusUnauthorized, "unauthenticated", challenge},
			{"not a Bearer header", "", map[string]string{"Authorization": "Basic " + read}, http.StatusUnauthorized, "unauthenticated", challenge},
			{"unknown key", "drip_nosuchkey", nil, http.StatusUnauthorized, "unauthenticated", invalid},
			{"the faucet's v1 key", v1Key, nil, http.StatusUnauthorized, "unauthenticated", invalid},
			{"revoked key", revoked, nil, http.StatusUnauthorized, "unauthenticated", invalid},
			{"expired key", expired, nil, http.StatusUnauthorized, "unauthenticated", invalid},
			{"send-only key", e.Key(t, f, drip.ScopeSend), nil, http.StatusForbidden, "insufficient_scope", scope},
			{"admin-only key", e.Key(t, f, drip.ScopeAdmin), nil, http.StatusForbidden, "insufficient_scope", scope},
			{"send and admin key", e.Key(t, f, drip.ScopeSend, drip.ScopeAdmin), nil, http.StatusForbidden, "insufficient_scope", scope},
			{"key outside its IP whitelist", elsewhere, nil, http.StatusForbidden, "forbidden", ""},
			{"key outside its faucet's IP whitelist", fencedKey, nil, http.StatusForbidden, "forbidden", ""},
			{"suspended owner", suspendedKey, nil, http.StatusForbidden, "forbidden", ""},
			{"foreign Origin", read, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, "forbidden", ""},
			{"foreign Origin on the same host, other port", read, map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden, "forbidden", ""},
			{"opaque Origin", read, map[string]string{"Origin": "null"}, http.StatusForbidden, "forbidden", ""},
			{"foreign Origin without a key", "", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, "forbidden", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantRefused(t, e.post(t, c.key, listTools, c.header), c.status, c.code, c.challenge)
			})
		}
		t.Run("GET", func(t *testing.T) {
			r := e.send(t, http.MethodGet, read, "", nil)
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
				t.Errorf("HTTP %d, Allow %q: want 405 and POST", r.status, r.header.Get("Allow"))
			}
		})
		for _, c := range []struct {
			name   string
			header map[string]string
		}{
			{"no Origin", nil},
			{"the service's own origin", map[string]string{"Origin": e.Server.URL}},
			{"an allowed origin", map[string]string{"Origin": "https://assistant.example"}},
		} {
			t.Run("served with "+c.name, func(t *testing.T) {
				if r := e.post(t, read, listTools, c.header); r.status != http.StatusOK || decodeRPC(t, r).Error != nil {
					t.Errorf("HTTP %d: %s", r.status, r.body)
				}
			})
		}
	})
}

// TestAuthRefusalsReachTheClient: the SDK's client reports why it was
// refused, so an owner setting up an assistant sees what to fix.
func TestAuthRefusalsReachTheClient(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		for _, c := range []struct {
			key  string
			want string
		}{
			{"", "Missing key"},
			{"drip_nosuchkey", "Invalid key"},
			{e.Key(t, f, drip.ScopeSend), "neither the read nor the manage scope"},
		} {
			if _, err := e.dial(t, c.key, ""); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("connect with %q: error %v, want one saying %q", c.key, err, c.want)
			}
		}
	})
}

// TestAuthRequestRate: each HTTP request to the tool server takes from the
// key's request-rate bucket (D40), as a v2 request does; past the burst it
// is 429 with Retry-After. A manage-only key is charged once per request
// too, and the buckets are per key.
func TestAuthRequestRate(t *testing.T) {
	run(t, envOptions{rate: ratelimit.Config{PerMinute: 60, Burst: 3}}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		for _, c := range []struct {
			scope drip.Scope
			v2    string // a v2 path of the scope
		}{{drip.ScopeRead, "/balances"}, {drip.ScopeManage, "/ip-whitelist"}} {
			k := e.Key(t, f, c.scope)
			for i := range 3 {
				if r := e.post(t, k, listTools, nil); r.status != http.StatusOK {
					t.Fatalf("%s: request %d: HTTP %d: %s", c.scope, i+1, r.status, r.body)
				}
			}
			r := e.post(t, k, listTools, nil)
			wantRefused(t, r, http.StatusTooManyRequests, "rate_limited", "")
			if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 2 {
				t.Errorf("%s: Retry-After %q, want 1 or 2 seconds", c.scope, r.header.Get("Retry-After"))
			}
			// v2 shares the bucket: the key is limited there too.
			if v := e.V2(t, k, c.v2, nil); v.HTTPStatus != http.StatusTooManyRequests {
				t.Errorf("%s: v2 after the tool server took the burst: HTTP %d", c.scope, v.HTTPStatus)
			}
		}
		// A fresh key's bucket is full; get_ratelimits reports it after
		// taking its own request.
		k := e.Key(t, f, drip.ScopeRead)
		r := e.post(t, k, rpc("tools/call", map[string]any{"name": "get_ratelimits"}), nil)
		var res struct {
			StructuredContent struct {
				RequestRate map[string]float64 `json:"request_rate"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal(decodeRPC(t, r).Result, &res); err != nil {
			t.Fatalf("get_ratelimits: %v: %s", err, r.body)
		}
		if diff := cmp.Diff(map[string]float64{"per_minute": 60, "burst": 3, "remaining": 2}, res.StructuredContent.RequestRate); diff != "" {
			t.Errorf("request_rate (-want +got):\n%s", diff)
		}
	})
}

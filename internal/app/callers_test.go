package app_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestCallerIPLimit: beside each key's request rate, each caller IP has
// one of its own (D29), with the default rate, counted before the key is
// looked at: a caller guessing keys, or rotating the keys of many
// faucets, is slowed (v1 459, v2 429, the tool server 429), while another
// IP is not.
func TestCallerIPLimit(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			// The test's requests come through a trusted proxy, which
			// names the caller in X-Forwarded-For.
			env := apptest.New(t, eng.Open(t), apptest.Options{Handler: app.HandlerOptions{
				TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
			from := func(ip string) map[string]string {
				return map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": ip}
			}

			t.Run("guessing v1 keys", func(t *testing.T) {
				const tries = 150
				ip := "203.0.113.1"
				var refusedKey, limited, firstLimited int
				for i := range tries {
					body := url.Values{"api_key": {fmt.Sprintf("guess%040d", i)}, "currency": {"BTC"}}.Encode()
					switch s := env.DoWithHeader(t, "/getbalance", strings.NewReader(body), from(ip)).Status(); s {
					case 403:
						refusedKey++
					case 459:
						if limited == 0 {
							firstLimited = i
						}
						limited++
					default:
						t.Fatalf("try %d: status %d", i, s)
					}
				}
				t.Logf("%d guessed keys from one IP: %d refused as invalid (403), %d rate limited (459), the first at try %d",
					tries, refusedKey, limited, firstLimited+1)
				// 600 requests of burst, 11 for each refused key: 54 guesses
				// leave 6, which pay for 6 more guesses (the 10 they would
				// add cannot be taken); the 61st is refused.
				if refusedKey != 60 || limited != tries-60 {
					t.Errorf("got %d × 403 and %d × 459, want 60 and %d", refusedKey, limited, tries-60)
				}
				// A real faucet's key from another IP is untouched.
				f, key := env.Faucet(t, map[string]int64{"BTC": 1000})
				body := url.Values{"api_key": {key}, "currency": {"BTC"}}.Encode()
				if s := env.DoWithHeader(t, "/getbalance", strings.NewReader(body), from("203.0.113.2")).Status(); s != 200 {
					t.Errorf("faucet %d from another IP: status %d, want 200", f.ID, s)
				}
			})

			t.Run("rotating the keys of many faucets", func(t *testing.T) {
				ip := "198.51.100.9"
				var v1Keys []string
				for range 10 {
					_, key := env.Faucet(t, nil)
					v1Keys = append(v1Keys, key)
				}
				// Each key's own bucket holds 120, ten keys 1200; the IP's
				// 600 runs out first.
				var ok, limited int
				for i := 0; limited == 0 && i < 1200; i++ {
					body := url.Values{"api_key": {v1Keys[i%len(v1Keys)]}, "currency": {"BTC"}}.Encode()
					r := env.DoWithHeader(t, "/getbalance", strings.NewReader(body), from(ip))
					switch r.Status() {
					case 200:
						ok++
					case 459:
						limited++
						if !strings.Contains(r.Raw, "IP address") {
							t.Errorf("459 without saying it is the IP's limit: %s", r.Raw)
						}
					default:
						t.Fatalf("status %d: %s", r.Status(), r.Raw)
					}
				}
				t.Logf("10 faucets' keys from one IP: %d answered, then rate limited (459)", ok)
				if ok != 600 || limited != 1 {
					t.Errorf("%d answered before the IP's limit, want 600 (its burst)", ok)
				}

				// The same IP is refused on v2 (429, Retry-After) and by
				// the tool server (429), with or without a valid key.
				f, _ := env.Faucet(t, nil)
				k := env.Key(t, f, drip.ScopeRead)
				h := http.Header{"X-Forwarded-For": {ip}}
				r := env.V2Do(t, http.MethodPost, k, "/balances", nil, h)
				if r.HTTPStatus != http.StatusTooManyRequests || r.Code() != string(drip.CodeRateLimited) || r.Header.Get("Retry-After") == "" {
					t.Errorf("v2 from the limited IP: %d %s, Retry-After %q", r.HTTPStatus, r.Raw, r.Header.Get("Retry-After"))
				}
				req, _ := http.NewRequest(http.MethodPost, env.Server.URL+mcpserver.Path,
					strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
				req.Header.Set("Authorization", "Bearer nonsense")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("X-Forwarded-For", ip)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusTooManyRequests {
					t.Errorf("tool server from the limited IP: %d, want 429", resp.StatusCode)
				}
			})
		})
	}
}

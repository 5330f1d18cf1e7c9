package apiv2_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
)

// TestV2RefusesRepeatedParameters: a parameter given twice is refused with
// 400 malformed_request naming it (issue 9 item 5): a member repeated in a
// JSON object at any depth, an object inside a list included, and a query
// parameter repeated in a GET. Nothing is paid or changed, and the same
// bodies without the repeat are served.
func TestV2RefusesRepeatedParameters(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		k := allScopesKey(t, env, fx.f)
		limit := func(extra string) string {
			return `{"currency":"BTC","per":"recipient","window_seconds":3600,"max_count":10` + extra + `}`
		}
		for _, c := range []struct {
			name, method, path, body string
			says                     []string // what the message names
		}{
			{"an amount in a send", "POST", "/send", sendJSON("1000", `,"amount":1`), []string{`"amount"`, "request body"}},
			{"a recipient in a send", "POST", "/send", sendJSON("1000", `,"to":"alice"`), []string{`"to"`}},
			{"an idempotency_key in a send", "POST", "/send", sendJSON("1000", `,"idempotency_key":"other"`), []string{`"idempotency_key"`}},
			{"a repeat of the same value", "POST", "/balance", `{"currency":"BTC","currency":"BTC"}`, []string{`"currency"`}},
			{"a name written with an escape", "POST", "/balance", `{"currency":"BTC","\u0063urrency":"DOGE"}`, []string{`"currency"`}},
			{"a member of a ratelimits item", "POST", "/ratelimits/set", `{"ratelimits":[` + limit("") + `,` + limit(`,"max_count":1`) + `]}`,
				[]string{`"max_count"`, "ratelimits[1]"}},
			{"a coin of thresholds", "POST", "/low-balance-notification/toggle", `{"thresholds":{"BTC":5,"DOGE":1,"BTC":6}}`,
				[]string{`"BTC"`, "thresholds"}},
			{"the list itself", "POST", "/ratelimits/set", `{"ratelimits":[],"ratelimits":[` + limit("") + `]}`, []string{`"ratelimits"`}},
			{"a query parameter", "GET", "/payouts?count=1&count=2", "", []string{`"count"`}},
			{"a query parameter with the same value", "GET", "/balance?currency=BTC&currency=BTC", "", []string{`"currency"`}},
		} {
			t.Run(c.name, func(t *testing.T) {
				var body any
				if c.body != "" {
					body = c.body
				}
				r := env.V2Do(t, c.method, k, c.path, body, nil)
				wantError(t, r, http.StatusBadRequest, "malformed_request")
				for _, s := range c.says {
					if !strings.Contains(r.Envelope.Message, s) {
						t.Errorf("message %q does not say %s", r.Envelope.Message, s)
					}
				}
			})
		}
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000: a refused body paid", got)
		}
		wantData(t, env.V2(t, fx.read, "/ratelimits", nil),
			`{"request_rate":{"per_minute":60,"burst":120,"remaining":119},"ratelimits":[]}`)

		t.Run("the same names in different objects are no repeat", func(t *testing.T) {
			r := env.V2(t, k, "/ratelimits/set", `{"ratelimits":[`+limit("")+`,{"currency":"DOGE","per":"ip","window_seconds":60,"max_count":2}]}`)
			wantOK(t, r)
		})
		t.Run("bodies and queries without a repeat are served", func(t *testing.T) {
			wantOK(t, env.V2(t, k, "/send", sendJSON("1000", "")))
			wantOK(t, env.V2(t, k, "/balance", `{"currency":"BTC"}`))
			wantOK(t, env.V2Do(t, http.MethodGet, k, "/payouts?count=1&currency=BTC", nil, nil))
		})
		t.Run("nesting too deep to walk is malformed", func(t *testing.T) {
			deep := `{"ratelimits":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + `}`
			wantError(t, env.V2(t, k, "/ratelimits/set", deep), http.StatusBadRequest, "malformed_request")
		})
	})
}

// Tests of request bodies no client should send (D33, D34: never 500 for
// a client's mistake). Each is refused with a 4xx envelope naming the
// problem, on a few representative paths, and nothing is paid or changed.
// The helpers are those of helpers_test.go.
package apiv2_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
)

// inputCase is a body a path must refuse with status and code.
type inputCase struct {
	name, path, body string
	status           int
	code             string
}

// TestV2RefusesBadInput: malformed, mistyped, oversized or out-of-range
// bodies are refused with a clear 4xx, never a 500, and change nothing.
func TestV2RefusesBadInput(t *testing.T) {
	const malformed, invalid, badAmount = "malformed_request", "invalid", "invalid_amount"
	big := strings.Repeat("a", 300<<10)
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		before := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, before)

		var cases []inputCase
		add := func(status int, code string, list ...[3]string) {
			for _, c := range list {
				cases = append(cases, inputCase{name: c[0], path: c[1], body: c[2], status: status, code: code})
			}
		}
		add(400, malformed,
			// Not JSON.
			[3]string{"unterminated object", "/send", `{"to":`},
			[3]string{"unquoted name", "/payouts", `{count: 2}`},
			[3]string{"single quotes", "/ip-whitelist/set", `{'ip_whitelist':[]}`},
			[3]string{"trailing comma", "/faucet/update", siteJSON(`,`)},
			[3]string{"lone brace", "/balances", `{`},
			[3]string{"form encoding", "/send", `idempotency_key=k&to=bob&amount=1000&currency=BTC`},
			// JSON, but not an object.
			[3]string{"an empty array", "/send", `[]`},
			[3]string{"an array of the object", "/send", `[` + sendJSON("1000", "") + `]`},
			[3]string{"an array of addresses", "/ip-whitelist/set", `["127.0.0.1"]`},
			[3]string{"a string", "/payouts", `"count"`},
			[3]string{"a number", "/balances", `42`},
			[3]string{"a boolean", "/anti-fraud/toggle", `true`},
			// Data after the object.
			[3]string{"two objects", "/payouts", `{"count":2} {"count":3}`},
			[3]string{"a letter after the object", "/balances", `{}x`},
			[3]string{"a bracket after the object", "/send", sendJSON("1000", "") + `]`},
			[3]string{"half an object after the object", "/faucet/update", siteJSON("") + `{`},
			// Over 256 KiB (D34 has no 413: 400 malformed_request).
			[3]string{"a body over 256 KiB", "/send", sendJSON("1000", `,"referral":"`+big+`"`)},
			[3]string{"a list over 256 KiB", "/anti-fraud/rules/update", `{"trust_rank":0,"whitelist":["` +
				strings.Repeat(strings.Repeat("w", 300)+`","`, 999) + `w"]}`},
			[3]string{"whitespace over 256 KiB", "/balances", `{}` + strings.Repeat(" ", 300<<10)},
			// Not UTF-8.
			[3]string{"invalid UTF-8 in to", "/send", `{"idempotency_key":"k1","to":"bob` + "\xff" + `","amount":1000,"currency":"BTC"}`},
			[3]string{"a cut UTF-8 sequence", "/balance", `{"currency":"BTC` + "\xc3" + `"}`},
			[3]string{"an encoded surrogate", "/faucet/update", strings.Replace(siteJSON(""), `"faucet_description":""`, `"faucet_description":"`+"\xed\xa0\x80"+`"`, 1)},
			[3]string{"invalid UTF-8 in a name", "/payouts", `{"co` + "\xff" + `unt":2}`},
		)
		add(400, invalid,
			// Wrong types.
			[3]string{"amount as an object", "/send", sendJSON(`{"value":1000}`, "")},
			[3]string{"amount as a list", "/send", sendJSON(`[1000]`, "")},
			[3]string{"amount as a boolean", "/send", sendJSON(`true`, "")},
			[3]string{"to as a number", "/send", `{"idempotency_key":"k2","to":42,"amount":1000,"currency":"BTC"}`},
			[3]string{"currency as a list", "/send", `{"idempotency_key":"k3","to":"bob","amount":1000,"currency":["BTC"]}`},
			[3]string{"idempotency_key as a number", "/send", `{"idempotency_key":7,"to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"count as a string", "/payouts", `{"count":"5"}`},
			[3]string{"count as a fraction", "/payouts", `{"count":1.5}`},
			[3]string{"count as an exponent", "/payouts", `{"count":1e1}`},
			[3]string{"page as a string", "/stats/users", `{"coin":"BTC","page":"2"}`},
			[3]string{"ip_whitelist as a string", "/ip-whitelist/set", `{"ip_whitelist":"127.0.0.1"}`},
			[3]string{"ip_whitelist of numbers", "/ip-whitelist/set", `{"ip_whitelist":[2130706433]}`},
			[3]string{"timer_minutes as a string", "/faucet/update", strings.Replace(siteJSON(""), `"timer_minutes":5`, `"timer_minutes":"5"`, 1)},
			[3]string{"currencies_selected as a string", "/faucet/update", siteJSON(`,"currencies_selected":"BTC"`)},
			[3]string{"trust_rank as a string", "/anti-fraud/rules/update", `{"trust_rank":"40"}`},
			[3]string{"trust_rank as a fraction", "/anti-fraud/rules/update", `{"trust_rank":40.5}`},
			[3]string{"whitelist as a string", "/anti-fraud/rules/update", `{"trust_rank":0,"whitelist":"alice"}`},
			[3]string{"enabled as a string", "/anti-fraud/toggle", `{"enabled":"false"}`},
			[3]string{"thresholds as a list", "/low-balance-notification/toggle", `{"thresholds":["BTC"]}`},
			[3]string{"a threshold as a string", "/low-balance-notification/toggle", `{"thresholds":{"BTC":"5"}}`},
			[3]string{"ratelimits as an object", "/ratelimits/set", `{"ratelimits":{"per":"faucet"}}`},
			// Unknown fields.
			[3]string{"an unknown field on send", "/send", sendJSON("1000", `,"memo":"hi"`)},
			[3]string{"a field of a path without fields", "/balances", `{"currency":"BTC"}`},
			[3]string{"an id on the faucet read", "/faucet", `{"faucet_id":1}`},
			[3]string{"limit for count", "/payouts", `{"limit":5}`},
			[3]string{"a field name in another case", "/balance", `{"Currency":"BTC"}`},
			[3]string{"a send field in upper case", "/send", `{"IDEMPOTENCY_KEY":"k","to":"bob","amount":1,"currency":"BTC"}`},
			[3]string{"an unknown setting", "/faucet/update", siteJSON(`,"faucet_id":1`)},
			[3]string{"an unknown limit member", "/ratelimits/set", `{"ratelimits":[{"currency":"BTC","per":"faucet","window_seconds":60,"max_count":1,"burst":5}]}`},
			// Empty bodies where fields are required.
			[3]string{"empty send", "/send", ``},
			[3]string{"whitespace send", "/send", " \r\n\t "},
			[3]string{"empty object send", "/send", `{}`},
			[3]string{"empty check-address", "/check-address", ``},
			[3]string{"empty stats/users", "/stats/users", ``},
			[3]string{"empty transactions", "/transactions", ``},
			[3]string{"empty faucet/update", "/faucet/update", ``},
			[3]string{"empty ratelimits/set", "/ratelimits/set", ``},
			[3]string{"empty ip-whitelist/set", "/ip-whitelist/set", ``},
			[3]string{"empty anti-fraud/rules/update", "/anti-fraud/rules/update", ``},
			[3]string{"empty faucet/create", "/faucet/create", ``},
			[3]string{"empty approval-cost", "/approval-cost", ``},
			[3]string{"empty faucet/request-approval", "/faucet/request-approval", ``},
			// Idempotency keys: 1-255 printable ASCII (D35).
			[3]string{"idempotency_key of 256", "/send", `{"idempotency_key":"` + strings.Repeat("k", 256) + `","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key empty", "/send", `{"idempotency_key":"","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key with BEL", "/send", `{"idempotency_key":"k\u0007","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key with a tab", "/send", `{"idempotency_key":"k\tk","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key with a newline", "/send", `{"idempotency_key":"k\nk","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key with DEL", "/send", `{"idempotency_key":"k\u007f","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key with NUL", "/send", `{"idempotency_key":"k\u0000","to":"bob","amount":1000,"currency":"BTC"}`},
			[3]string{"idempotency_key not ASCII", "/send", `{"idempotency_key":"clé","to":"bob","amount":1000,"currency":"BTC"}`},
		)
		// Amounts: a positive base-10 integer that fits int64 (D22).
		for _, a := range []string{
			`99999999999999999999`, `"99999999999999999999"`, `9223372036854775808`, `-9223372036854775809`,
			`-5`, `"-5"`, `0`, `"0"`, `1e3`, `"1e3"`, `1E3`, `1.5`, `"1.5"`, `1000.0`, `""`, `null`,
			`"0x10"`, `"1_000"`, `" "`,
		} {
			add(400, badAmount, [3]string{"amount " + a, "/send", sendJSON(a, "")})
		}
		add(400, badAmount, [3]string{"no amount", "/send", `{"idempotency_key":"k7","to":"bob","currency":"BTC"}`})

		t.Run("bodies", func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.path+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					r := env.V2(t, allScopesKey(t, env, fx.f), c.path, c.body)
					wantError(t, r, c.status, c.code)
				})
			}
		})

		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000: a refused body paid", got)
		}
		if got := len(payouts(t, env, fx.f)); got != 0 {
			t.Errorf("%d payouts, want 0", got)
		}
		if got := len(ownerFaucets(t, env, fx.f)); got != 1 {
			t.Errorf("owner has %d faucets, want 1", got)
		}
		after := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, after)
		if diff := cmp.Diff(decodeJSON(t, string(before.Envelope.Data)), decodeJSON(t, string(after.Envelope.Data))); diff != "" {
			t.Errorf("refused bodies changed the faucet (-before +after):\n%s", diff)
		}
	})
}

// TestV2AcceptsInputAtItsBounds: what lies just inside the limits the
// refusals above enforce is accepted.
func TestV2AcceptsInputAtItsBounds(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		k := allScopesKey(t, env, fx.f)
		t.Run("an idempotency_key of 255 printable characters", func(t *testing.T) {
			idemKey := strings.Repeat("~", 200) + strings.Repeat(" !", 27) + "z"
			if len(idemKey) != 255 {
				t.Fatalf("key of %d", len(idemKey))
			}
			wantOK(t, env.V2(t, k, "/send", map[string]any{"idempotency_key": idemKey, "to": "bob", "amount": 1000, "currency": "BTC"}))
		})
		t.Run("the largest int64 amount is an amount", func(t *testing.T) {
			wantError(t, env.V2(t, k, "/send", sendJSON("9223372036854775807", "")), http.StatusConflict, "insufficient_balance")
		})
		t.Run("an amount as a string of digits", func(t *testing.T) {
			wantOK(t, env.V2(t, k, "/send", sendJSON(`"1000"`, "")))
		})
		t.Run("whitespace around the object", func(t *testing.T) {
			wantOK(t, env.V2(t, k, "/payouts", " \n\t{\"count\":1}\r\n "))
		})
		t.Run("an empty body where nothing is required", func(t *testing.T) {
			wantOK(t, env.V2(t, k, "/balances", ""))
			wantOK(t, env.V2(t, k, "/payouts", ""))
		})
		t.Run("a JSON body labelled as a form", func(t *testing.T) {
			r := env.V2Do(t, http.MethodPost, k, "/balance", `{"currency":"BTC"}`,
				http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
			wantData(t, r, `{"currency":"BTC","balance":998000,"balance_bitcoin":0.00998}`)
		})
		t.Run("1000 list entries just under 256 KiB", func(t *testing.T) {
			list := make([]string, 1000)
			for i := range list {
				list[i] = fmt.Sprintf("%03d", i) + strings.Repeat("w", 247)
			}
			body := jsonText(t, map[string]any{"trust_rank": 0, "blacklist": list})
			if len(body) <= 250_000 || len(body) >= 256<<10 {
				t.Fatalf("body of %d bytes", len(body))
			}
			r := env.V2(t, k, "/anti-fraud/rules/update", body)
			wantOK(t, r)
			var d struct {
				Blacklist []string `json:"blacklist"`
			}
			r.Data(t, &d)
			if diff := cmp.Diff(list, d.Blacklist); diff != "" {
				t.Errorf("blacklist (-want +got):\n%s", diff)
			}
		})
	})
}

// TestV2RefusesNULInStrings: a NUL byte in any string of a body is a
// client's mistake: 400, on every engine alike, and nothing is stored or
// paid. (v1 strips NULs from its form values; a v2 body is JSON, where a
// NUL can only be written on purpose, as \u0000.) The error code may be
// the field's own or a general one.
func TestV2RefusesNULInStrings(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		before := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, before)
		general := []string{"invalid", "malformed_request"}
		for _, c := range []struct {
			name, path, body string
			own              string // the code of the field's own check, if any
		}{
			{"in referral", "/send", sendJSON("1000", `,"referral":"a\u0000b"`), ""},
			{"in ip_address", "/send", sendJSON("1000", `,"ip_address":"203.0.113.7\u0000"`), ""},
			{"after a recipient", "/send", `{"idempotency_key":"n1","to":"bob\u0000","amount":1000,"currency":"BTC"}`, "recipient_not_payable"},
			{"alone as a recipient", "/send", `{"idempotency_key":"n2","to":"\u0000","amount":1000,"currency":"BTC"}`, "recipient_not_payable"},
			{"in a send's currency", "/send", `{"idempotency_key":"n3","to":"bob","amount":1000,"currency":"BTC\u0000"}`, "invalid_currency"},
			{"in an idempotency_key", "/send", `{"idempotency_key":"n4\u0000","to":"bob","amount":1000,"currency":"BTC"}`, ""},
			{"after an address", "/check-address", `{"address":"bob\u0000"}`, "recipient_not_payable"},
			{"after a currency", "/balance", `{"currency":"BTC\u0000"}`, "invalid_currency"},
			{"in faucet_name", "/faucet/update", strings.Replace(siteJSON(""), `"Moon"`, `"Mo\u0000on"`, 1), ""},
			{"in faucet_description", "/faucet/update", strings.Replace(siteJSON(""), `"faucet_description":""`, `"faucet_description":"a\u0000b"`, 1), ""},
			{"in a whitelist entry", "/anti-fraud/rules/update", `{"trust_rank":0,"whitelist":["al\u0000ice"]}`, ""},
			{"in a blacklist entry", "/anti-fraud/rules/update", `{"trust_rank":0,"blacklist":["\u0000"]}`, ""},
			{"in a new faucet's name", "/faucet/create", `{"faucet_name":"N\u0000","faucet_domain":"n.example.com","faucet_url":"https://n.example.com/"}`, ""},
			{"in a threshold's coin", "/low-balance-notification/toggle", `{"thresholds":{"BTC\u0000":5}}`, ""},
		} {
			t.Run(c.path+"/"+c.name, func(t *testing.T) {
				r := env.V2(t, allScopesKey(t, env, fx.f), c.path, c.body)
				if r.HTTPStatus != http.StatusBadRequest || !(slices.Contains(general, r.Code()) || r.Code() == c.own) {
					t.Errorf("HTTP %d %q, want 400 %q or one of %q: %s", r.HTTPStatus, r.Code(), c.own, general, r.Raw)
				}
			})
		}
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000: a body with a NUL paid", got)
		}
		if got := len(ownerFaucets(t, env, fx.f)); got != 1 {
			t.Errorf("owner has %d faucets, want 1", got)
		}
		after := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, after)
		if diff := cmp.Diff(decodeJSON(t, string(before.Envelope.Data)), decodeJSON(t, string(after.Envelope.Data))); diff != "" {
			t.Errorf("bodies with a NUL changed the faucet (-before +after):\n%s", diff)
		}
	})
}

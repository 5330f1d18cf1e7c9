package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mcpserver"
)

// TestWarnings: a manage call that weakens a protection (anti-fraud off,
// trust_rank lowered, negative_rank raised, blacklist entries removed,
// whitelist entries added, the IP whitelist emptied or opened to every
// IPv4 or IPv6 address, send limits removed) carries a warning
// field saying what, and a text line; a call that keeps or strengthens
// them carries neither. The calls run in order, each from the state the
// one before left.
func TestWarnings(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		mustV2(t, e, k, "/anti-fraud/rules/update", map[string]any{"trust_rank": 50, "negative_rank": 10,
			"whitelist": []string{"alice"}, "blacklist": []string{"mallory", "eve"}})
		mustV2(t, e, k, "/ip-whitelist/set", map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}})
		cs := e.connect(t, k)
		limit := func(window int) map[string]any {
			return map[string]any{"per": "ip", "window_seconds": window, "max_count": 5}
		}
		rules := func(trust int, more map[string]any) map[string]any {
			args := map[string]any{"trust_rank": trust}
			for k, v := range more {
				args[k] = v
			}
			return args
		}
		for _, c := range []struct {
			name string
			tool string
			args map[string]any
			want []string // what the warning says; nil: no warning
		}{
			{"raising trust_rank", "update_anti_fraud_rules", rules(60, nil), nil},
			{"the same rules again", "update_anti_fraud_rules", rules(60, nil), nil},
			{"lowering trust_rank", "update_anti_fraud_rules", rules(40, nil), []string{"trust_rank was lowered from 60 to 40"}},
			{"lowering negative_rank", "update_anti_fraud_rules", rules(40, map[string]any{"negative_rank": 5}), nil},
			{"raising negative_rank", "update_anti_fraud_rules", rules(40, map[string]any{"negative_rank": 30}),
				[]string{"negative_rank was raised from 5 to 30"}},
			{"adding to the blacklist", "update_anti_fraud_rules", rules(40, map[string]any{"blacklist": []string{"mallory", "eve", "trudy"}}), nil},
			{"the blacklist in another case", "update_anti_fraud_rules", rules(40, map[string]any{"blacklist": []string{"Mallory", "EVE", "trudy"}}), nil},
			{"removing from the blacklist", "update_anti_fraud_rules", rules(40, map[string]any{"blacklist": []string{"Mallory"}}),
				[]string{"removed from the blacklist", "EVE, trudy"}},
			{"emptying the whitelist", "update_anti_fraud_rules", rules(40, map[string]any{"whitelist": []string{}}), nil},
			{"adding to the whitelist", "update_anti_fraud_rules", rules(40, map[string]any{"whitelist": []string{"bob"}}),
				[]string{"added to the whitelist", "bob"}},
			{"several at once", "update_anti_fraud_rules", rules(0, map[string]any{"negative_rank": 100, "whitelist": []string{"bob", "carol"},
				"blacklist": []string{}}), []string{"trust_rank was lowered from 40 to 0", "negative_rank was raised from 30 to 100",
				"removed from the blacklist, so they can be paid again: Mallory", "added to the whitelist, so they skip the rank checks: carol"}},
			{"anti-fraud off", "toggle_anti_fraud", map[string]any{"enabled": false}, []string{"anti-fraud rank checks were turned off"}},
			{"anti-fraud off again", "toggle_anti_fraud", map[string]any{"enabled": false}, nil},
			{"anti-fraud flipped on", "toggle_anti_fraud", nil, nil},
			{"anti-fraud flipped off", "toggle_anti_fraud", nil, []string{"anti-fraud rank checks were turned off"}},
			{"anti-fraud on", "toggle_anti_fraud", map[string]any{"enabled": true}, nil},
			{"narrowing the IP whitelist", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.1", "::1"}}, nil},
			{"emptying the IP whitelist", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{}}, []string{"IP whitelist was emptied"}},
			{"the IP whitelist empty again", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{}}, nil},
			{"setting an IP whitelist", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}}, nil},
			{"admitting every IPv4 address", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"0.0.0.0/0", "::1"}},
				[]string{"the IP whitelist now holds 0.0.0.0/0: the faucet's keys work from any IPv4 address"}},
			{"keeping 0.0.0.0/0", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"0.0.0.0/0", "::1", "198.51.100.7"}}, nil},
			{"admitting every IPv6 address", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::/0"}},
				[]string{"the IP whitelist now holds ::/0: the faucet's keys work from any IPv6 address"}},
			{"narrowing the IP whitelist again", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}}, nil},
			{"setting send limits", "set_ratelimits", map[string]any{"ratelimits": []any{limit(60), limit(3600)}}, nil},
			{"adding a send limit", "set_ratelimits", map[string]any{"ratelimits": []any{limit(60), limit(3600), limit(86400)}}, nil},
			{"replacing a send limit", "set_ratelimits", map[string]any{"ratelimits": []any{limit(60), limit(3600), limit(600)}}, nil},
			{"removing a send limit", "set_ratelimits", map[string]any{"ratelimits": []any{limit(60), limit(3600)}},
				[]string{"send limits were removed, from 3 to 2"}},
			{"removing every send limit", "set_ratelimits", map[string]any{"ratelimits": []any{}}, []string{"every send limit was removed (there were 2)"}},
			{"no send limits again", "set_ratelimits", map[string]any{"ratelimits": []any{}}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				res := call(t, cs, c.tool, c.args)
				wantOK(t, c.tool, res)
				warning, warned := structured(t, res)["warning"].(string)
				var lines []string
				for _, s := range texts(t, res) {
					if strings.HasPrefix(s, "Warning: ") {
						lines = append(lines, s)
					}
				}
				if c.want == nil {
					if warned || len(lines) > 0 {
						t.Errorf("a warning on a call that weakens nothing: %q, lines %q", warning, lines)
					}
					return
				}
				if len(lines) != 1 || lines[0] != "Warning: "+warning {
					t.Errorf("text lines %q, want one saying Warning: %q", lines, warning)
				}
				for _, w := range c.want {
					if !strings.Contains(warning, w) {
						t.Errorf("warning %q, want it to say %q", warning, w)
					}
				}
			})
		}
		if r := e.V2(t, k, "/anti-fraud/rules", nil); !strings.Contains(r.Raw, `"whitelist":["bob","carol"]`) {
			t.Errorf("the rules the calls left: %s", r.Raw)
		}
	})
}

// TestWarningsFromTheFaucetAsChanged: a call's warning compares the faucet
// as the call's own transaction found it with what it left, not the copy
// its authorization read: when another call (here through v2) changed the
// faucet in between, a change that undoes it still warns.
func TestWarningsFromTheFaucetAsChanged(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		mustV2(t, e, k, "/anti-fraud/toggle", map[string]any{"enabled": false})
		mustV2(t, e, k, "/anti-fraud/rules/update", map[string]any{"trust_rank": 50})
		// The tool server's caller, authorized now: anti-fraud off, trust_rank 50.
		c, err := e.App.Payouts.AuthorizeV2(t.Context(), k, netip.MustParseAddr("127.0.0.1"), drip.ScopeManage)
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []struct {
			name    string
			v2      string // the change made through v2 after the authorization
			v2Body  map[string]any
			tool    string
			args    map[string]any
			warning string
		}{
			{"anti-fraud turned on, then off", "/anti-fraud/toggle", map[string]any{"enabled": true},
				"toggle_anti_fraud", map[string]any{"enabled": false}, "anti-fraud rank checks were turned off"},
			{"trust_rank raised to 90, then set to 60", "/anti-fraud/rules/update", map[string]any{"trust_rank": 90},
				"update_anti_fraud_rules", map[string]any{"trust_rank": 60}, "trust_rank was lowered from 90 to 60"},
		} {
			mustV2(t, e, k, step.v2, step.v2Body)
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, mcpserver.Path, strings.NewReader(rpc("tools/call", map[string]any{"name": step.tool, "arguments": step.args})))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			e.tools.ServeAuthorized(w, r, c)
			var res struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
			}
			if err := json.Unmarshal(decodeRPC(t, rawReply{status: w.Code, body: w.Body.Bytes()}).Result, &res); err != nil || res.IsError {
				t.Fatalf("%s: %v: %s", step.name, err, w.Body)
			}
			if warning, _ := res.StructuredContent["warning"].(string); !strings.Contains(warning, step.warning) {
				t.Errorf("%s: warning %q, want it to say %q", step.name, warning, step.warning)
			}
		}
	})
}

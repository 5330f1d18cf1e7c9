package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mcpserver"
)

// The tools of spec 4.3, in its order.
var (
	readTools = []string{"get_faucet", "get_balances", "get_balance", "get_payouts", "get_currencies",
		"check_address", "get_daily_stats", "get_user_stats", "get_transactions", "get_ratelimits",
		"get_low_balance_notification"}
	manageTools = []string{"get_ip_whitelist", "set_ip_whitelist", "get_anti_fraud", "toggle_anti_fraud",
		"update_anti_fraud_rules", "update_faucet_settings", "set_ratelimits", "toggle_low_balance_notification"}
	allTools = append(slices.Clone(readTools), manageTools...)
)

// toolNames lists the tools the session is offered, sorted.
func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func sorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

// TestToolsListedByScope: a key sees in tools/list the tools it may call:
// the read tools for a read key, all 19 for a key with manage, at every
// protocol version served; none of them sends, withdraws, mints keys or
// registers webhooks.
func TestToolsListedByScope(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		for _, c := range []struct {
			name   string
			scopes []drip.Scope
			want   []string
		}{
			{"read", []drip.Scope{drip.ScopeRead}, readTools},
			{"manage", []drip.Scope{drip.ScopeManage}, manageTools}, // D16: exactly its v2 paths' scope
			{"read and manage", []drip.Scope{drip.ScopeRead, drip.ScopeManage}, allTools},
			{"every scope, send and admin included", drip.Scopes, allTools},
		} {
			t.Run(c.name, func(t *testing.T) {
				key := e.Key(t, f, c.scopes...)
				for _, version := range mcpserver.ProtocolVersions() {
					cs, err := e.dial(t, key, version)
					if err != nil {
						t.Fatalf("connect at %s: %v", version, err)
					}
					if got := cs.InitializeResult().ProtocolVersion; got != version {
						t.Errorf("asked for %s, negotiated %s", version, got)
					}
					if diff := cmp.Diff(sorted(c.want), toolNames(t, cs)); diff != "" {
						t.Errorf("tools at %s (-want +got):\n%s", version, diff)
					}
				}
			})
		}
	})
}

// v2Call is the v2 path, and its body, that answers with the same data as
// a tool called with args.
type v2Call struct {
	tool string
	args map[string]any
	path string
	// drop removes what differs between two calls by nature (the request
	// rate left to the key) from both replies.
	drop func(any)
}

// dropRemaining removes request_rate.remaining, which each call spends.
func dropRemaining(v any) {
	if rr, ok := v.(map[string]any)["request_rate"].(map[string]any); ok {
		delete(rr, "remaining")
	}
}

// TestToolsAnswerAsV2: each tool, called with the SDK's client, answers
// with the data the v2 path of the same operation answers, field by field;
// the JSON text content carries the same numbers as written (D1). A manage
// tool is called first, then its v2 path with the same body, which finds
// the state the tool left and must answer the same.
func TestToolsAnswerAsV2(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 100_000_000, "DOGE": 50})
		e.User(t, "bob")
		e.User(t, "alice")
		key := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		send, admin := e.Key(t, f, drip.ScopeSend), e.Key(t, f, drip.ScopeAdmin)
		// A history for the reads: an alert to trip, a limit, payouts and a
		// listing request.
		mustV2(t, e, key, "/low-balance-notification/toggle", map[string]any{"enabled": true, "thresholds": map[string]int64{"BTC": 99_999_500}})
		mustV2(t, e, key, "/ratelimits/set", map[string]any{"ratelimits": []any{
			map[string]any{"currency": "BTC", "per": "recipient", "window_seconds": 3600, "max_count": 50}}})
		mustV2(t, e, key, "/faucet/update", map[string]any{"faucet_name": "Drops", "faucet_domain": "drops.example.com",
			"faucet_url": "https://drops.example.com/", "faucet_description": "A faucet.", "timer_minutes": 30,
			"currencies_selected": []string{"DOGE", "BTC"}})
		for i, to := range []string{"bob", "alice@example.com", "bob"} {
			mustV2(t, e, send, "/send", map[string]any{"idempotency_key": fmt.Sprintf("p%d", i), "to": to,
				"amount": 1000 + i, "currency": "BTC", "ip_address": "203.0.113.7", "referral": "spring"})
			e.Clock.Advance(time.Minute)
		}
		if err := e.App.Listing.SetCost(context.Background(), "BTC", 5000); err != nil {
			t.Fatal(err)
		}
		mustV2(t, e, admin, "/faucet/request-approval", map[string]any{"coin": "BTC"})

		cs := e.connect(t, key)
		calls := []v2Call{
			{tool: "get_faucet", path: "/faucet"},
			{tool: "get_balances", path: "/balances"},
			{tool: "get_balance", args: map[string]any{"currency": "DOGE"}, path: "/balance"},
			{tool: "get_balance", path: "/balance"}, // the first selected coin
			{tool: "get_payouts", args: map[string]any{"count": 2, "currency": "BTC"}, path: "/payouts"},
			{tool: "get_payouts", path: "/payouts"},
			{tool: "get_currencies", path: "/currencies"},
			{tool: "check_address", args: map[string]any{"address": "bob", "currency": "BTC"}, path: "/check-address"},
			{tool: "get_daily_stats", path: "/stats/daily"},
			{tool: "get_user_stats", args: map[string]any{"coin": "BTC"}, path: "/stats/users"},
			{tool: "get_transactions", args: map[string]any{"coin": "BTC", "page": 1}, path: "/transactions"},
			{tool: "get_ratelimits", path: "/ratelimits", drop: dropRemaining},
			{tool: "get_low_balance_notification", path: "/low-balance-notification"},

			{tool: "get_ip_whitelist", path: "/ip-whitelist"},
			{tool: "set_ip_whitelist", args: map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}}, path: "/ip-whitelist/set"},
			{tool: "get_anti_fraud", path: "/anti-fraud/rules"},
			{tool: "toggle_anti_fraud", args: map[string]any{"enabled": true}, path: "/anti-fraud/toggle"},
			{tool: "update_anti_fraud_rules", args: map[string]any{"trust_rank": 10, "negative_rank": 50, "blacklist": []string{"mallory"}},
				path: "/anti-fraud/rules/update"},
			{tool: "update_faucet_settings", args: map[string]any{"faucet_name": "Drops 2", "faucet_domain": "drops.example.com",
				"faucet_url": "https://drops.example.com/claim", "faucet_description": "", "timer_minutes": 5,
				"categories_selected": []string{"bitcoin", "games"}}, path: "/faucet/update"},
			{tool: "set_ratelimits", args: map[string]any{"ratelimits": []any{
				map[string]any{"per": "ip", "window_seconds": 86400, "max_amount": 100000},
				map[string]any{"currency": "DOGE", "per": "faucet", "window_seconds": 60, "max_count": 10, "max_amount": 5}}},
				path: "/ratelimits/set", drop: dropRemaining},
			{tool: "toggle_low_balance_notification", args: map[string]any{"enabled": true, "thresholds": map[string]int64{"BTC": 0, "DOGE": 10}},
				path: "/low-balance-notification/toggle"},
		}
		covered := map[string]bool{}
		for _, c := range calls {
			covered[c.tool] = true
			t.Run(c.tool, func(t *testing.T) {
				res := call(t, cs, c.tool, c.args)
				wantOK(t, c.tool, res)
				if _, warned := structured(t, res)["warning"]; warned {
					t.Errorf("%s: a warning on a call that weakens nothing: %q", c.tool, texts(t, res))
				}
				var body any
				if c.args != nil {
					body = c.args
				}
				r := e.V2(t, key, c.path, body)
				if r.HTTPStatus != 200 {
					t.Fatalf("v2 %s: HTTP %d: %s", c.path, r.HTTPStatus, r.Raw)
				}
				// The text: the JSON last, after what a change did, which v2 says too.
				all := texts(t, res)
				wantTexts := 1
				if slices.Contains(manageTools, c.tool) && !strings.HasPrefix(c.tool, "get_") {
					wantTexts = 2
					if all[0] != r.Envelope.Message {
						t.Errorf("%s: text %q, want v2's message %q", c.tool, all[0], r.Envelope.Message)
					}
				}
				if len(all) != wantTexts {
					t.Errorf("%s: %d text contents %q, want %d", c.tool, len(all), all, wantTexts)
				}
				sc, err := json.Marshal(res.StructuredContent)
				if err != nil {
					t.Fatal(err)
				}
				text := []byte(all[len(all)-1])
				for _, exact := range []bool{false, true} {
					want, got := jsonOf(t, r.Envelope.Data, exact), jsonOf(t, sc, exact)
					if exact {
						got = jsonOf(t, text, true)
					}
					if c.drop != nil {
						c.drop(want)
						c.drop(got)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s (exact numbers %v) against v2 %s (-v2 +tool):\n%s", c.tool, exact, c.path, diff)
					}
				}
			})
		}
		for _, name := range allTools {
			if !covered[name] {
				t.Errorf("%s is not compared with v2", name)
			}
		}
	})
}

// mustV2 POSTs a v2 call that must succeed.
func mustV2(t testing.TB, e *env, key, path string, body any) {
	t.Helper()
	if r := e.V2(t, key, path, body); r.HTTPStatus != 200 {
		t.Fatalf("v2 %s: HTTP %d: %s", path, r.HTTPStatus, r.Raw)
	}
}

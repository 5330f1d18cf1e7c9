package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
)

// auditEntry is an entry of v2 /audit.
type auditEntry struct {
	KeyID     int64           `json:"key_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	CreatedAt string          `json:"created_at"`
}

// TestAuditOfManageCalls: every manage call through the tool server,
// successful or refused, is recorded with the key, the tool, the arguments
// and what came of it, and the owner reads it at v2 /audit; read tools are
// not recorded.
func TestAuditOfManageCalls(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10_000})
		k, secret := e.mint(t, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead, drip.ScopeManage}})
		other, otherSecret := e.mint(t, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeManage}})
		cs, cs2 := e.connect(t, secret), e.connect(t, otherSecret)

		call(t, cs, "get_balances", nil)
		call(t, cs, "get_faucet", nil)
		wantOK(t, "set_ip_whitelist", call(t, cs, "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}}))
		wantToolError(t, "update_anti_fraud_rules", call(t, cs, "update_anti_fraud_rules", map[string]any{"trust_rank": 101}))
		wantOK(t, "toggle_anti_fraud", call(t, cs2, "toggle_anti_fraud", map[string]any{"enabled": false}))
		wantOK(t, "get_anti_fraud", call(t, cs2, "get_anti_fraud", nil))
		wantToolError(t, "set_ratelimits", call(t, cs2, "set_ratelimits", map[string]any{"ratelimits": []any{
			map[string]any{"per": "ip", "window_seconds": 60}}}))
		wantOK(t, "update_faucet_settings", call(t, cs, "update_faucet_settings", map[string]any{"faucet_name": "Audited",
			"faucet_domain": "audited.example.com", "faucet_url": "https://audited.example.com/", "faucet_description": "", "timer_minutes": 9}))

		r := e.V2(t, secret, "/audit", nil)
		if r.HTTPStatus != 200 {
			t.Fatalf("v2 /audit: HTTP %d: %s", r.HTTPStatus, r.Raw)
		}
		var data struct {
			Entries []auditEntry `json:"entries"`
		}
		r.Data(t, &data)
		stamp := e.Clock.Now().UTC().Format("2006-01-02T15:04:05Z")
		want := []auditEntry{ // newest first
			{KeyID: k.ID, Tool: "update_faucet_settings", Arguments: json.RawMessage(`{"faucet_description":"","faucet_domain":"audited.example.com","faucet_name":"Audited","faucet_url":"https://audited.example.com/","timer_minutes":9}`),
				Result: "Faucet settings updated."},
			{KeyID: other.ID, Tool: "set_ratelimits", Arguments: json.RawMessage(`{"ratelimits":[{"per":"ip","window_seconds":60}]}`),
				Result: "Invalid arguments: each of ratelimits[] needs max_count or max_amount. The tool's input schema says what it takes.", IsError: true},
			{KeyID: other.ID, Tool: "get_anti_fraud", Arguments: json.RawMessage(`{}`), Result: "OK"},
			{KeyID: other.ID, Tool: "toggle_anti_fraud", Arguments: json.RawMessage(`{"enabled":false}`),
				Result: "Anti-fraud rank checks disabled; the blacklist still applies. Warning: This call weakened the faucet's protection: " +
					"anti-fraud rank checks were turned off: recipients of any rank are paid unless blacklisted."},
			{KeyID: k.ID, Tool: "update_anti_fraud_rules", Arguments: json.RawMessage(`{"trust_rank":101}`),
				Result: "Invalid arguments: trust_rank must be at most 100. The tool's input schema says what it takes.", IsError: true},
			{KeyID: k.ID, Tool: "set_ip_whitelist", Arguments: json.RawMessage(`{"ip_whitelist":["127.0.0.0/8","::1"]}`),
				Result: "IP whitelist updated."},
		}
		for i := range want {
			want[i].CreatedAt = stamp
		}
		if diff := cmp.Diff(want, data.Entries, cmp.Comparer(sameJSON)); diff != "" {
			t.Errorf("audit entries (-want +got):\n%s", diff)
		}
	})
}

// sameJSON compares JSON texts by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

// TestAuditKeepsNoUnknownArguments: the audit log, which every read key of
// the faucet reads at v2 /audit, keeps a call's arguments as the tool
// decoded them, or, when they broke the input schema, only the fields the
// schema knows (at any depth) with their values: a field no tool takes is
// dropped whole, whatever a client put in it.
func TestAuditKeepsNoUnknownArguments(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		cs := e.connect(t, k)
		const secret = "drip_SECRET"
		for _, c := range []struct {
			tool string
			args any
		}{
			{"toggle_anti_fraud", map[string]any{"enabled": true, "api_key": secret}},
			{"set_ratelimits", map[string]any{"ratelimits": []any{map[string]any{"per": "ip", "window_seconds": 60, "max_count": 1, "note": secret}}}},
			{"update_anti_fraud_rules", map[string]any{"trust_rank": "high", "token": map[string]any{"value": secret}}},
			{"toggle_low_balance_notification", map[string]any{"thresholds": map[string]any{"BTC": 5}, "password": secret}},
		} {
			wantToolError(t, c.tool, call(t, cs, c.tool, c.args))
		}
		wantOK(t, "set_ip_whitelist", call(t, cs, "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"127.0.0.1", "::1"}}))

		r := e.V2(t, k, "/audit", nil)
		if r.HTTPStatus != 200 {
			t.Fatalf("v2 /audit: HTTP %d: %s", r.HTTPStatus, r.Raw)
		}
		if strings.Contains(r.Raw, secret) {
			t.Errorf("v2 /audit shows what the unknown arguments held: %s", r.Raw)
		}
		var data struct {
			Entries []auditEntry `json:"entries"`
		}
		r.Data(t, &data)
		var got []json.RawMessage
		for _, e := range data.Entries {
			got = append(got, e.Arguments)
		}
		want := []json.RawMessage{ // newest first
			json.RawMessage(`{"ip_whitelist":["127.0.0.1","::1"]}`),
			json.RawMessage(`{"thresholds":{"BTC":5}}`),
			json.RawMessage(`{"trust_rank":"high"}`),
			json.RawMessage(`{"ratelimits":[{"per":"ip","window_seconds":60,"max_count":1}]}`),
			json.RawMessage(`{"enabled":true}`),
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(sameJSON)); diff != "" {
			t.Errorf("audit arguments (-want +got):\n%s", diff)
		}
	})
}

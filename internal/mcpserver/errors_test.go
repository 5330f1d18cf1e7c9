package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mcpserver"
)

// TestReadKeyCannotCallManageTools: a read key calling a manage tool gets
// the JSON-RPC error of an unknown tool (-32602), as for any tool it is not
// offered, saying the tool needs the manage scope; a tool error (isError)
// would say the tool exists for the key and invite retries. Nothing
// changes and nothing is recorded.
func TestReadKeyCannotCallManageTools(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		read := e.Key(t, f, drip.ScopeRead)
		cs := e.connect(t, read)
		args := map[string]map[string]any{
			"set_ip_whitelist":                {"ip_whitelist": []string{"203.0.113.7"}},
			"toggle_anti_fraud":               {"enabled": false},
			"update_anti_fraud_rules":         {"trust_rank": 0, "whitelist": []string{"mallory"}},
			"update_faucet_settings":          {"faucet_name": "Taken", "faucet_domain": "taken.example.com", "faucet_url": "https://taken.example.com/", "faucet_description": "", "timer_minutes": 1},
			"set_ratelimits":                  {"ratelimits": []any{}},
			"toggle_low_balance_notification": {"enabled": true},
		}
		for _, name := range manageTools {
			res, err := callErr(cs, name, args[name])
			if err == nil {
				t.Errorf("%s with a read key: a result (isError %v: %q), want a JSON-RPC error", name, res.IsError, texts(t, res))
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, `unknown tool "`+name+`"`) || !strings.Contains(msg, "manage scope") {
				t.Errorf("%s with a read key: error %q, want an unknown tool needing the manage scope", name, msg)
			}
		}
		// Raw: the JSON-RPC error code.
		r := e.post(t, read, rpc("tools/call", map[string]any{"name": "toggle_anti_fraud", "arguments": map[string]any{"enabled": false}}), nil)
		if rep := decodeRPC(t, r); rep.Error == nil || rep.Error.Code != -32602 {
			t.Errorf("raw call: %s, want JSON-RPC error -32602", r.body)
		}
		after, err := e.App.Faucets.Get(t.Context(), f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !after.Rules.AntiFraud || len(after.IPWhitelist) != 0 || after.Name != f.Name || after.LowBalance.Enabled {
			t.Errorf("the faucet changed: %+v", after)
		}
		if list, err := e.App.Audit.List(t.Context(), f.ID, 200); err != nil || len(list) != 0 {
			t.Errorf("audit entries %v (%v), want none", list, err)
		}
	})
}

// TestToolErrors: business failures and arguments that break a tool's
// input schema are tool results with isError and a message naming what to
// correct; nothing is changed by them.
func TestToolErrors(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10_000})
		e.User(t, "bob")
		cs := e.connect(t, e.Key(t, f, drip.ScopeRead, drip.ScopeManage))
		faucetBefore := call(t, cs, "get_faucet", nil)
		for _, c := range []struct {
			name string
			tool string
			args any
			want []string
		}{
			// Business failures: the services' own messages (D25).
			{"unknown coin", "get_balance", map[string]any{"currency": "XYZ"}, []string{"Invalid currency"}},
			{"unknown coin for payouts", "get_payouts", map[string]any{"currency": "XYZ"}, []string{"Invalid currency"}},
			{"unknown coin for a page", "get_transactions", map[string]any{"coin": "XYZ"}, []string{"Invalid coin"}},
			{"not a payable user", "check_address", map[string]any{"address": "nobody", "currency": "BTC"}, nil},
			{"URL off the domain", "update_faucet_settings", map[string]any{"faucet_name": "X", "faucet_domain": "x.example.com",
				"faucet_url": "https://elsewhere.example.com/", "faucet_description": "", "timer_minutes": 5}, []string{"URL"}},
			{"inactive coin selected", "update_faucet_settings", map[string]any{"faucet_name": "X", "faucet_domain": "x.example.com",
				"faucet_url": "https://x.example.com/", "faucet_description": "", "timer_minutes": 5, "currencies_selected": []string{"XYZ"}},
				[]string{"currencies_selected", "XYZ"}},
			{"a threshold for no coin", "toggle_low_balance_notification", map[string]any{"thresholds": map[string]int64{"XYZ": 5}}, []string{"XYZ"}},

			// Malformed arguments: the input schema, in words.
			{"count above its range", "get_payouts", map[string]any{"count": 500}, []string{"count must be at most 100"}},
			// Refused by the services before the schema said these (issue 10 item 2).
			{"page out of range", "get_user_stats", map[string]any{"coin": "BTC", "page": 2_000_000}, []string{"page must be at most 1000000"}},
			{"a limit with neither maximum", "set_ratelimits", map[string]any{"ratelimits": []any{
				map[string]any{"per": "ip", "window_seconds": 60}}}, []string{"each of ratelimits[] needs max_count or max_amount"}},
			{"not an IP", "set_ip_whitelist", map[string]any{"ip_whitelist": []string{"localhost"}}, []string{"ip_whitelist[] is not in the form"}},
			{"a blank list entry", "update_anti_fraud_rules", map[string]any{"trust_rank": 0, "blacklist": []string{"  "}}, []string{"blacklist[] is not in the form"}},
			{"a coin symbol too long", "get_balance", map[string]any{"currency": "bitcoinbitcoin"}, []string{"currency is not in the form"}},
			{"an unknown coin in lower case", "get_balance", map[string]any{"currency": "xyz"}, []string{"Invalid currency"}},
			{"count of the wrong type", "get_payouts", map[string]any{"count": "ten"}, []string{"count must be a whole number"}},
			{"count not whole", "get_payouts", map[string]any{"count": 1.5}, []string{"count must be a whole number"}},
			{"a required argument missing", "get_user_stats", map[string]any{}, []string{"missing coin"}},
			{"an unknown argument", "get_balances", map[string]any{"coin": "BTC"}, []string{"unknown argument coin"}},
			{"an argument in the wrong case", "get_balance", map[string]any{"Currency": "BTC"}, []string{"unknown argument Currency"}},
			{"a rank above 100", "update_anti_fraud_rules", map[string]any{"trust_rank": 101}, []string{"trust_rank must be at most 100"}},
			{"trust_rank missing", "update_anti_fraud_rules", map[string]any{"negative_rank": 5}, []string{"missing trust_rank"}},
			{"a limit per nothing", "set_ratelimits", map[string]any{"ratelimits": []any{
				map[string]any{"per": "galaxy", "window_seconds": 60, "max_count": 1}}}, []string{"ratelimits[].per must be one of faucet, recipient, ip"}},
			{"a limit without a window", "set_ratelimits", map[string]any{"ratelimits": []any{
				map[string]any{"per": "ip", "max_count": 1}}}, []string{"each of ratelimits[] needs window_seconds"}},
			{"ratelimits not a list", "set_ratelimits", map[string]any{"ratelimits": "none"}, []string{"ratelimits must be a list"}},
			{"a null list", "set_ip_whitelist", map[string]any{"ip_whitelist": nil}, []string{"ip_whitelist must be a list"}},
			{"enabled as text", "toggle_anti_fraud", map[string]any{"enabled": "no"}, []string{"enabled must be true or false"}},
			{"a negative threshold", "toggle_low_balance_notification", map[string]any{"thresholds": map[string]int64{"BTC": -1}}, []string{"thresholds.<key> must be at least 0"}},
			{"an unknown category", "update_faucet_settings", map[string]any{"faucet_name": "X", "faucet_domain": "x.example.com",
				"faucet_url": "https://x.example.com/", "faucet_description": "", "timer_minutes": 5, "categories_selected": []string{"casino"}},
				[]string{"categories_selected[] must be one of bitcoin"}},
			{"a timer out of range", "update_faucet_settings", map[string]any{"faucet_name": "X", "faucet_domain": "x.example.com",
				"faucet_url": "https://x.example.com/", "faucet_description": "", "timer_minutes": 0}, []string{"timer_minutes must be at least 1"}},
			{"an empty name", "update_faucet_settings", map[string]any{"faucet_name": "", "faucet_domain": "x.example.com",
				"faucet_url": "https://x.example.com/", "faucet_description": "", "timer_minutes": 5}, []string{"faucet_name must not be empty"}},
			{"a NUL character", "update_faucet_settings", map[string]any{"faucet_name": "X\x00Y", "faucet_domain": "x.example.com",
				"faucet_url": "https://x.example.com/", "faucet_description": "", "timer_minutes": 5}, []string{"NUL"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantToolError(t, c.tool, call(t, cs, c.tool, c.args), c.want...)
			})
		}
		t.Run("arguments that are not an object", func(t *testing.T) {
			k := e.Key(t, f, drip.ScopeRead)
			r := e.post(t, k, rpc("tools/call", map[string]any{"name": "get_payouts", "arguments": []int{1}}), nil)
			var res struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(decodeRPC(t, r).Result, &res); err != nil || !res.IsError || len(res.Content) != 1 ||
				!strings.Contains(res.Content[0].Text, "a JSON object is expected") {
				t.Errorf("HTTP %d: %s", r.status, r.body)
			}
		})
		faucetAfter := call(t, cs, "get_faucet", nil)
		if diff := cmp.Diff(faucetBefore.StructuredContent, faucetAfter.StructuredContent); diff != "" {
			t.Errorf("refused calls changed the faucet (-before +after):\n%s", diff)
		}
	})
}

// TestProtocolErrors: what is not a well-formed call of a listed tool is a
// JSON-RPC error. The SDK answers some of it with a JSON-RPC error itself;
// what it refuses in plain text (a body that is no JSON, no JSON-RPC 2.0
// request, an unknown method) is HTTP 400 with a JSON-RPC error too: a
// parse error or invalid request to id null, as its id cannot be told, or
// method not found to the request's id.
func TestProtocolErrors(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		cs := e.connect(t, k)
		if _, err := callErr(cs, "send_payout", map[string]any{"to": "bob"}); err == nil || !strings.Contains(err.Error(), `unknown tool "send_payout"`) {
			t.Errorf("an unknown tool: %v, want a JSON-RPC unknown tool error", err)
		}
		for _, c := range []struct {
			name    string
			body    string
			version string // MCP-Protocol-Version; "" for none
			status  int    // HTTP status; 0: 200
			code    int    // JSON-RPC error code
			id      string // the JSON-RPC id answered
			message string // what the message says
		}{
			{"an unknown tool", rpc("tools/call", map[string]any{"name": "withdraw"}), "", 0, -32602, "1", "withdraw"},
			{"a call without a tool name", rpc("tools/call", map[string]any{}), "", 0, -32602, "1", ""},
			{"params that are not an object", rpc("tools/call", "get_faucet"), "", 0, -32602, "1", ""},
			{"an unknown method", rpc("tools/frobnicate", map[string]any{}), "", 400, -32601, "1", `Method not found: "tools/frobnicate"`},
			{"an unknown method at 2025-11-25", rpc("tools/frobnicate", map[string]any{}), "2025-11-25", 400, -32601, "1", `Method not found: "tools/frobnicate"`},
			{"a body that is not JSON", `{"jsonrpc":"2.0","id":1,"method":`, "", 400, -32700, "null", "Parse error"},
			{"an empty body", ``, "", 400, -32700, "null", "Parse error"},
			{"another JSON-RPC version", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, "", 400, -32600, "null", `"jsonrpc": "2.0"`},
			{"no JSON-RPC version", `{"id":1,"method":"tools/list"}`, "", 400, -32600, "null", `"jsonrpc": "2.0"`},
			{"not an object", `"tools/list"`, "", 400, -32600, "null", "request object"},
			{"an id that is an object", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "", 400, -32600, "null", "string or number id"},
			{"a call without its params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, "", 400, -32600, "7", `missing required "params"`},
			{"a request without an id", `{"jsonrpc":"2.0","method":"tools/list"}`, "", 400, -32600, "null", `missing id`},
			{"an unserved protocol version", listTools, "2024-11-05", 400, -32600, "1", "Unsupported protocol version"},
		} {
			t.Run(c.name, func(t *testing.T) {
				header := map[string]string{}
				if c.version != "" {
					header["MCP-Protocol-Version"] = c.version
				}
				r := e.post(t, k, c.body, header)
				if want := max(c.status, http.StatusOK); r.status != want {
					t.Errorf("HTTP %d, want %d: %s", r.status, want, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				var rep struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Error   *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(r.body, &rep); err != nil {
					t.Fatalf("not a JSON-RPC response: %v: %s", err, r.body)
				}
				if rep.JSONRPC != "2.0" || rep.Error == nil || rep.Error.Code != c.code || string(rep.ID) != c.id ||
					!strings.Contains(rep.Error.Message, c.message) {
					t.Errorf("%s: want a JSON-RPC error %d to id %s saying %q", r.body, c.code, c.id, c.message)
				}
			})
		}
	})
}

// TestBatchesAreRefused: a JSON-RPC batch (an array of calls) is HTTP 400
// with a JSON-RPC invalid request error and runs none of its calls: under
// the one authorization of its HTTP request, every call of a batch would
// run for one request of the key's rate. It is refused under every
// protocol version, also those under which the SDK takes batches
// (2025-03-26, and no version header).
func TestBatchesAreRefused(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead, drip.ScopeManage)
		var calls []string
		for i := range 50 {
			calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"toggle_anti_fraud","arguments":{}}}`, i+1))
		}
		batch := "[" + strings.Join(calls, ",") + "]"
		const want = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Batches are not accepted: send one JSON-RPC request per HTTP request."}}`
		for _, c := range []struct {
			name, version, body string
		}{
			{"no version header", "", batch},
			{"2025-03-26", "2025-03-26", batch},
			{"2025-06-18", "2025-06-18", batch},
			{"after white space", "", " \n\t" + batch},
			{"of one call", "2025-03-26", "[" + calls[0] + "]"},
		} {
			t.Run(c.name, func(t *testing.T) {
				header := map[string]string{}
				if c.version != "" {
					header["MCP-Protocol-Version"] = c.version
				}
				r := e.post(t, k, c.body, header)
				if r.status != http.StatusBadRequest || r.header.Get("Content-Type") != "application/json" || !sameJSON(r.body, []byte(want)) {
					t.Errorf("HTTP %d, %s: %.300s\nwant HTTP 400, application/json: %s", r.status, r.header.Get("Content-Type"), r.body, want)
				}
			})
		}
		after, err := e.App.Faucets.Get(t.Context(), f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !after.Rules.AntiFraud {
			t.Errorf("anti-fraud was toggled off: a call of a batch ran")
		}
		if list, err := e.App.Audit.List(t.Context(), f.ID, 200); err != nil || len(list) != 0 {
			t.Errorf("%d audit entries (%v), want none: calls of a batch ran", len(list), err)
		}
	})
}

// TestToolPanic: a tool whose code panics answers its call with a tool
// error saying "Internal error." and nothing of the panic; the panic is
// logged with the tool's name and its stack, a manage tool's call is
// recorded in the audit log as failed, and the server goes on serving.
func TestToolPanic(t *testing.T) {
	var logged logtest.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	boom := func() { panic("boom: the tool's secret state") }
	handler := func(d mcpserver.Deps) *mcpserver.Handler { return mcpserver.NewWithTool(d, "explode", true, boom) }
	run(t, envOptions{log: log, handler: handler}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		cs := e.connect(t, e.Key(t, f, drip.ScopeRead, drip.ScopeManage))
		for range 2 {
			res := call(t, cs, "explode", nil)
			wantToolError(t, "explode", res, "Internal error.")
			if got := strings.Join(texts(t, res), " "); got != "Internal error." {
				t.Errorf("result %q, want only Internal error.", got)
			}
		}
		wantOK(t, "get_faucet after the panics", call(t, cs, "get_faucet", nil))
		list, err := e.App.Audit.List(t.Context(), f.ID, 200)
		if err != nil || len(list) != 2 || list[0].Tool != "explode" || !list[0].IsError || list[0].Result != "Internal error." {
			t.Errorf("audit entries %+v (%v), want the 2 failed calls of explode", list, err)
		}
		out := logged.String()
		for _, want := range []string{`"tool":"explode"`, "boom: the tool's secret state", "goroutine"} {
			if !strings.Contains(out, want) {
				t.Errorf("the log does not say %q:\n%s", want, out)
			}
		}
	})
}

package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mcpserver"
)

// TestStructuredContentIsExact: amounts in whole coins are written in
// structuredContent as v2 writes them, exact decimals from the integer
// (D1): 50 satoshis is 0.0000005, not 5e-07.
func TestStructuredContentIsExact(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"DOGE": 50, "BTC": 123_456_789_012})
		k := e.Key(t, f, drip.ScopeRead)
		for coin, want := range map[string]string{"DOGE": "0.0000005", "BTC": "1234.56789012"} {
			r := e.post(t, k, rpc("tools/call", map[string]any{"name": "get_balance", "arguments": map[string]any{"currency": coin}}), nil)
			var res struct {
				StructuredContent struct {
					BalanceBitcoin json.RawMessage `json:"balance_bitcoin"`
				} `json:"structuredContent"`
			}
			if err := json.Unmarshal(decodeRPC(t, r).Result, &res); err != nil {
				t.Fatalf("%s: %v: %s", coin, err, r.body)
			}
			if got := string(res.StructuredContent.BalanceBitcoin); got != want {
				t.Errorf("%s: balance_bitcoin %s, want %s: %s", coin, got, want, r.body)
			}
		}
	})
}

// TestProtocolVersions: the initialize handshake answers each version from
// 2025-03-26 to 2025-11-25 with itself; 2024-11-05, not served, with the
// newest handshake version; a request naming an unserved version in its
// MCP-Protocol-Version header is 400. (2026-07-28, which has no handshake,
// is negotiated by the SDK's client in TestToolsListedByScope.)
func TestProtocolVersions(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead)
		initialize := func(version string) string {
			t.Helper()
			r := e.post(t, k, rpc("initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "test", "version": "1"}}), nil)
			var res struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if err := json.Unmarshal(decodeRPC(t, r).Result, &res); err != nil {
				t.Fatalf("initialize %s: %v: %s", version, err, r.body)
			}
			return res.ProtocolVersion
		}
		got := map[string]string{}
		for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
			got[v] = initialize(v)
		}
		want := map[string]string{"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26", "2024-11-05": "2025-11-25"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("negotiated versions (-want +got):\n%s", diff)
		}
		if r := e.post(t, k, listTools, map[string]string{"MCP-Protocol-Version": "2024-11-05"}); r.status != http.StatusBadRequest {
			t.Errorf("MCP-Protocol-Version 2024-11-05: HTTP %d, want 400: %s", r.status, r.body)
		}
		for _, v := range mcpserver.ProtocolVersions()[1:] { // 2026-07-28 requests carry their version in _meta too
			if r := e.post(t, k, listTools, map[string]string{"MCP-Protocol-Version": v}); r.status != http.StatusOK {
				t.Errorf("MCP-Protocol-Version %s: HTTP %d: %s", v, r.status, r.body)
			}
		}
	})
}

// TestToolsListIsPrivate: tools/list differs by key (a read key is not
// shown the manage tools), so its result says cacheScope "private": no
// cache shared between users may keep it.
func TestToolsListIsPrivate(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		for _, k := range []string{e.Key(t, f, drip.ScopeRead), e.Key(t, f, drip.ScopeRead, drip.ScopeManage)} {
			r := e.post(t, k, listTools, nil)
			var res struct {
				CacheScope string `json:"cacheScope"`
				Tools      []any  `json:"tools"`
			}
			if err := json.Unmarshal(decodeRPC(t, r).Result, &res); err != nil || len(res.Tools) == 0 {
				t.Fatalf("tools/list: %v: %s", err, r.body)
			}
			if res.CacheScope != "private" {
				t.Errorf("tools/list of a key with %d tools: cacheScope %q, want private", len(res.Tools), res.CacheScope)
			}
		}
	})
}

package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
)

// TestHTTPRefusalsAreJSONRPC: every refusal of the tool server's HTTP
// layer is a JSON-RPC error body (issue 9 item 6), also those the SDK
// answers in plain text before any JSON-RPC is read: a body over 256 KiB
// (413), a Content-Type that is not JSON (415), an Accept header without
// the types the transport needs (400). Each keeps its HTTP status.
func TestHTTPRefusalsAreJSONRPC(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, nil)
		k := e.Key(t, f, drip.ScopeRead)
		pad := strings.Repeat("x", 300<<10)
		for _, c := range []struct {
			name    string
			key     string
			body    string
			header  map[string]string
			status  int
			code    int
			id      string // the JSON-RPC id answered
			message string // what the message says
		}{
			{"a body of 300 KiB that is no JSON", k, pad, nil, http.StatusRequestEntityTooLarge, -32600, "null", "256 KiB"},
			{"a request of 300 KiB", k, rpc("tools/list", map[string]any{"pad": pad}), nil, http.StatusRequestEntityTooLarge, -32600, "null", "256 KiB"},
			{"a request of 300 KiB without a key", "", rpc("tools/list", map[string]any{"pad": pad}), nil, http.StatusUnauthorized, -32000, "null", "key"},
			{"a form Content-Type", k, listTools, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, -32600, "1", "Content-Type must be 'application/json'"},
			{"no Accept", k, listTools, map[string]string{"Accept": ""}, http.StatusBadRequest, -32600, "1", "Accept must contain"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := e.post(t, c.key, c.body, c.header)
				if r.status != c.status {
					t.Errorf("HTTP %d, want %d: %.300s", r.status, c.status, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				var rep struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"` // "null" for null, empty when missing
					Error   *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(r.body, &rep); err != nil {
					t.Fatalf("not JSON: %v: %.300s", err, r.body)
				}
				if rep.JSONRPC != "2.0" || string(rep.ID) != c.id || rep.Error == nil ||
					rep.Error.Code != c.code || !strings.Contains(rep.Error.Message, c.message) {
					t.Errorf("%s\nwant a JSON-RPC 2.0 error %d to id %s saying %q", r.body, c.code, c.id, c.message)
				}
			})
		}
	})
}

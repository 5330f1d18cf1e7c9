package mcpserver

import (
	"context"
	"net/http"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
)

// testResult is the result of NewWithTool's tool.
type testResult struct {
	OK bool `json:"ok" jsonschema:"true"`
}

// NewWithTool is New serving one more tool, name (a manage tool if manage
// says so), whose call runs fn: the seam of tests of what the tool wrapper
// does around a tool's own code.
func NewWithTool(d Deps, name string, manage bool, fn func()) *Handler {
	return newHandler(d, func(h *Handler) []tool {
		scope, annotations := drip.ScopeRead, readAnnotations(name)
		if manage {
			scope, annotations = drip.ScopeManage, manageAnnotations(name, false, false, true)
		}
		op := operation.Define(name, scope, func(context.Context, *payout.Caller, operation.NoParams) (testResult, string, error) {
			fn()
			return testResult{OK: true}, "OK", nil
		})
		return []tool{newTool(h, row{name: name, op: op, title: name, description: "A tool of the tests.", annotations: annotations})}
	})
}

// ServeAuthorized serves r as ServeHTTP does once it has authorized r's key
// as c: the seam of tests that need the caller's copy of its faucet older
// than the faucet, as when the faucet changes between a request's
// authorization and its tool call.
func (h *Handler) ServeAuthorized(w http.ResponseWriter, r *http.Request, c *payout.Caller) {
	h.mcp.ServeHTTP(w, r.WithContext(withCaller(r.Context(), c)))
}

// Package apiv2 serves the v2 interface at /api/v2 (spec 4.2, D32-D39):
// JSON bodies, Bearer keys with scopes, standard HTTP statuses, and the
// envelope {success, status, message, data, error}. It is a table of paths
// over the operations of package operation, which the tool server serves
// too, and the transport around it: methods, authorization, decoding and
// the envelope. openapi.json describes every request and reply.
package apiv2

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/requestlog"
	"github.com/dripfaucet/drip/internal/version"
)

// Prefix is where v2 is mounted.
const Prefix = "/api/v2"

// OpenAPIPath serves the OpenAPI 3.1 document of v2 (D39).
const OpenAPIPath = Prefix + "/openapi.json"

//go:embed openapi.json
var openAPI []byte

// OpenAPI is the OpenAPI 3.1 document of v2 (D39).
func OpenAPI() []byte { return openAPI }

// Deps are what v2 is built on.
type Deps struct {
	Ops     *operation.Service
	Payouts *payout.Service // authorizes keys
	Log     *slog.Logger
	Now     func() time.Time
	// ClientIP tells the caller's address (server.ClientIP). Required.
	ClientIP func(*http.Request) netip.Addr
}

// Handler serves v2.
type Handler struct {
	Deps
	routes map[string]*operation.Op
	docs   func() ([]byte, error) // the page at DocsPath, rendered once
}

// New returns the v2 handler; mount it at Prefix + "/".
func New(d Deps) *Handler {
	if d.ClientIP == nil {
		panic("apiv2: Deps.ClientIP is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Handler{Deps: d, routes: Routes(d.Ops), docs: sync.OnceValues(func() ([]byte, error) { return RenderDocs(openAPI) })}
}

// Paths are every path v2 answers, its documents included.
func (h *Handler) Paths() []string {
	out := []string{OpenAPIPath, DocsPath}
	for p := range h.routes {
		out = append(out, Prefix+p)
	}
	slices.Sort(out)
	return out
}

// Routes is v2's table: each path of spec 4.2 and the operation it runs,
// which says the scope it needs. A read-scope path also takes GET (D33).
func Routes(ops *operation.Service) map[string]*operation.Op {
	return map[string]*operation.Op{
		"/balance":                  ops.Balance,
		"/balances":                 ops.Balances,
		"/currencies":               ops.Currencies,
		"/check-address":            ops.CheckAddress,
		"/payouts":                  ops.Payouts,
		"/faucet":                   ops.Faucet,
		"/stats/daily":              ops.DailyStats,
		"/stats/users":              ops.UserStats,
		"/transactions":             ops.Transactions,
		"/ratelimits":               ops.RateLimits,
		"/low-balance-notification": ops.LowBalanceNotification,
		"/audit":                    ops.Audit, // manage calls made through the tool server
		"/events":                   ops.Events,

		"/faucet/update":                   ops.UpdateFaucet,
		"/ratelimits/set":                  ops.SetRateLimits,
		"/ip-whitelist":                    ops.IPWhitelist,
		"/ip-whitelist/set":                ops.SetIPWhitelist,
		"/low-balance-notification/toggle": ops.ToggleLowBalanceNotification,
		"/anti-fraud/rules":                ops.AntiFraudRules,
		"/anti-fraud/toggle":               ops.ToggleAntiFraud,
		"/anti-fraud/rules/update":         ops.UpdateAntiFraudRules,

		"/send": ops.Send,

		"/send/batch": ops.SendBatch, // D61

		"/faucet/create":           ops.CreateFaucet,
		"/approval-cost":           ops.ApprovalCost,
		"/faucet/request-approval": ops.RequestApproval,
	}
}

// takesGET tells whether a path's operation also takes GET: the reads of
// the read scope (D33).
func takesGET(op *operation.Op) bool { return op.Scope() == drip.ScopeRead }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	if r.URL.Path == OpenAPIPath {
		h.serveOpenAPI(w, r)
		return
	}
	if r.URL.Path == DocsPath {
		h.serveDocs(w, r)
		return
	}
	op, known := h.routes[path]
	if !known {
		h.fail(w, r, drip.Errorf(drip.CodeNotFound, "Unknown path %s: see %s.", r.URL.Path, OpenAPIPath))
		return
	}
	allow := "POST"
	if takesGET(op) {
		allow = "GET, POST"
	}
	if r.Method != http.MethodPost && !(takesGET(op) && r.Method == http.MethodGet) {
		w.Header().Set("Allow", allow)
		h.fail(w, r, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: use %s.", r.Method, allow))
		return
	}
	secret := key.Bearer(r)
	requestlog.SetKey(r.Context(), secret)
	// One generation of the cache serves the whole request; a single
	// send's is checked by its payment's transaction (D63). Not a batch of
	// sends: some of its payments could be paid while others found the
	// generation changed.
	type reply struct {
		data    any
		message string
	}
	var in *input // read once, should the request be served twice
	out, err := payout.Serve(r.Context(), path == "/send", func(ctx context.Context) (reply, error) {
		c, err := h.Payouts.AuthorizeV2(ctx, secret, h.ClientIP(r), op.Scope())
		if err != nil {
			return reply{}, err
		}
		if in == nil {
			if in, err = readInput(w, r, bodyLimit(op, h.Ops)); err != nil {
				return reply{}, err
			}
		}
		data, message, err := op.Call(ctx, c, in.decode)
		return reply{data, message}, err
	})
	data, message := out.data, out.message
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if b, ok := data.(operation.SendBatchData); ok {
		h.itemErrors(r, b.Items)
	}
	if s, ok := data.(interface{ Replayed() bool }); ok && s.Replayed() {
		w.Header().Set("Idempotent-Replayed", "true") // D35
	}
	if c, ok := data.(interface{ Record() any }); ok {
		data = c.Record() // a change's warning is the tool server's (spec 4.3)
	}
	h.write(w, http.StatusOK, envelope{Success: true, Status: http.StatusOK, Message: message, Data: data})
}

func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.fail(w, r, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: use GET.", r.Method))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI)
}

// envelope is every v2 reply (D32).
type envelope struct {
	Success bool       `json:"success"`
	Status  int        `json:"status"`
	Message string     `json:"message"`
	Data    any        `json:"data"`
	Error   *errorInfo `json:"error,omitempty"`
}

type errorInfo = operation.ItemError

// httpStatus is the one table of v2 statuses (D34). A code not in it is
// not the client's doing: 500, logged.
var httpStatus = map[drip.Code]int{
	drip.CodeInvalid:           http.StatusBadRequest,
	drip.CodeMalformed:         http.StatusBadRequest,
	drip.CodeInvalidCurrency:   http.StatusBadRequest,
	drip.CodeInvalidAmount:     http.StatusBadRequest,
	drip.CodeRecipientUnknown:  http.StatusBadRequest,
	drip.CodeUnauthenticated:   http.StatusUnauthorized,
	drip.CodeForbidden:         http.StatusForbidden,
	drip.CodeInsufficientScope: http.StatusForbidden,
	drip.CodeRecipientRefused:  http.StatusForbidden,
	drip.CodeNotFound:          http.StatusNotFound,
	drip.CodeMethodNotAllowed:  http.StatusMethodNotAllowed,
	drip.CodeInsufficientFunds: http.StatusConflict,
	drip.CodeIdempotencyReuse:  http.StatusConflict,
	drip.CodeConflict:          http.StatusConflict,
	drip.CodeRateLimited:       http.StatusTooManyRequests,
	drip.CodeSendLimit:         http.StatusTooManyRequests,
	drip.CodeClaimerRateLimit:  http.StatusTooManyRequests,
	drip.CodeDailyCap:          http.StatusTooManyRequests,
	drip.CodePriceUnavailable:  http.StatusServiceUnavailable,
	drip.CodeUnavailable:       http.StatusServiceUnavailable,
	drip.CodeOutcomeUnknown:    http.StatusServiceUnavailable,
}

// Status is the HTTP status v2 answers an error code with (D34).
func Status(code drip.Code) int {
	if s, ok := httpStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, info := h.refusal(r, err)
	code := info.Code
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="drip"`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(h.retryAfter(err, code)))
	}
	h.write(w, status, envelope{Status: status, Message: drip.ErrorMessage(err), Error: info})
}

// refusal is the status and error member v2 answers err with (D32, D34),
// logging a fault once.
func (h *Handler) refusal(r *http.Request, err error) (int, *errorInfo) {
	code := drip.ErrorCode(err)
	status := Status(code)
	if status == http.StatusInternalServerError {
		code = drip.CodeInternal
	}
	if code.Fault() {
		h.Log.ErrorContext(r.Context(), "v2 request failed", "path", r.URL.Path, "code", code, "err", err)
	}
	info := &errorInfo{Code: code}
	if s, ok := drip.V1Status(err); ok && status != http.StatusInternalServerError {
		info.V1Status = &s
	}
	return status, info
}

// itemErrors fills in the status, message and error of each batch item
// that was not paid, as /send would have answered it (D61).
func (h *Handler) itemErrors(r *http.Request, items []operation.BatchItem) {
	for i := range items {
		it := &items[i]
		if err := it.Err(); err != nil {
			it.Status, it.Error = h.refusal(r, err)
			it.Message = drip.ErrorMessage(err)
		}
	}
}

// retryAfter is the Retry-After of a 429 or 503, in whole seconds.
func (h *Handler) retryAfter(err error, code drip.Code) int {
	var e *drip.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return int(e.RetryAfter.Seconds()) + 1
	}
	if code == drip.CodeDailyCap { // the cap resets at 00:00 UTC (D36)
		now := h.Now().UTC()
		return int(now.Truncate(24*time.Hour).Add(24*time.Hour).Sub(now).Seconds()) + 1
	}
	return 60
}

func (h *Handler) write(w http.ResponseWriter, status int, e envelope) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Drip-Version", version.String())
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

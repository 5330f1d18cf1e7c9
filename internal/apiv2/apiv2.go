// Package apiv2 serves the v2 interface at /api/v2 (spec 4.2, D32-D39):
// JSON bodies, Bearer keys with scopes, standard HTTP statuses, and the
// envelope {success, status, message, data, error}. Handlers decode, call
// the services v1 and the tool server use too, and encode; the rules live
// in the services. openapi.json describes every reply.
package apiv2

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

// Prefix is where v2 is mounted.
const Prefix = "/api/v2"

// OpenAPIPath serves the OpenAPI 3.1 document of v2 (D39).
const OpenAPIPath = Prefix + "/openapi.json"

//go:embed openapi.json
var openAPI []byte

// OpenAPI is the OpenAPI 3.1 document of v2 (D39).
func OpenAPI() []byte { return openAPI }

// Deps are the services v2 calls.
type Deps struct {
	Payouts *payout.Service
	Faucets *faucet.Service
	Coins   *coin.Catalog
	Listing *listing.Service
	Audit   *audit.Service
	Rate    ratelimit.Config // the request rate of every key (D40), reported by /ratelimits
	Log     *slog.Logger
	Now     func() time.Time
	// ClientIP tells the caller's address (server.ClientIP). Required.
	ClientIP func(*http.Request) netip.Addr
}

// Handler serves v2.
type Handler struct {
	Deps
	routes map[string]route
}

// route is one v2 path: the scope it needs, whether it reads (and so also
// takes GET, D33), and its operation.
type route struct {
	scope drip.Scope
	read  bool
	op    op
}

// op runs an operation for an authorized caller. It returns the reply's
// data and message; in carries the request's parameters.
type op func(ctx context.Context, c *payout.Caller, in *input) (data any, message string, err error)

// New returns the v2 handler; mount it at Prefix + "/".
func New(d Deps) *Handler {
	if d.ClientIP == nil {
		panic("apiv2: Deps.ClientIP is required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	h := &Handler{Deps: d}
	read := func(o op) route { return route{scope: drip.ScopeRead, read: true, op: o} }
	manage := func(o op) route { return route{scope: drip.ScopeManage, op: o} }
	h.routes = map[string]route{
		"/balance":                  read(h.balance),
		"/balances":                 read(h.balances),
		"/currencies":               read(h.currencies),
		"/check-address":            read(h.checkAddress),
		"/payouts":                  read(h.payouts),
		"/faucet":                   read(h.faucet),
		"/stats/daily":              read(h.statsDaily),
		"/stats/users":              read(h.statsUsers),
		"/transactions":             read(h.transactions),
		"/ratelimits":               read(h.rateLimits),
		"/low-balance-notification": read(h.lowBalance),
		"/audit":                    read(h.auditLog), // manage calls made through the tool server

		"/faucet/update":                   manage(h.updateFaucet),
		"/ratelimits/set":                  manage(h.setRateLimits),
		"/ip-whitelist":                    manage(h.ipWhitelist),
		"/ip-whitelist/set":                manage(h.setIPWhitelist),
		"/low-balance-notification/toggle": manage(h.toggleLowBalance),
		"/anti-fraud/rules":                manage(h.antiFraudRules),
		"/anti-fraud/toggle":               manage(h.toggleAntiFraud),
		"/anti-fraud/rules/update":         manage(h.updateAntiFraudRules),

		"/send": {scope: drip.ScopeSend, op: h.send},

		"/faucet/create":           {scope: drip.ScopeAdmin, op: h.createFaucet},
		"/approval-cost":           {scope: drip.ScopeAdmin, op: h.approvalCost},
		"/faucet/request-approval": {scope: drip.ScopeAdmin, op: h.requestApproval},
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	if r.URL.Path == OpenAPIPath {
		h.serveOpenAPI(w, r)
		return
	}
	rt, known := h.routes[path]
	if !known {
		h.fail(w, r, drip.Errorf(drip.CodeNotFound, "Unknown path %s: see %s.", r.URL.Path, OpenAPIPath))
		return
	}
	allow := "POST"
	if rt.read {
		allow = "GET, POST"
	}
	if r.Method != http.MethodPost && !(rt.read && r.Method == http.MethodGet) {
		w.Header().Set("Allow", allow)
		h.fail(w, r, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: use %s.", r.Method, allow))
		return
	}
	c, err := h.Payouts.AuthorizeV2(r.Context(), key.Bearer(r), h.ClientIP(r), rt.scope)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	in, err := readInput(w, r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	data, message, err := rt.op(r.Context(), c, in)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for k, v := range in.replyHeader {
		w.Header()[k] = v
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

type errorInfo struct {
	Code     drip.Code `json:"code"`
	V1Status *int      `json:"v1_status"`
}

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
	code := drip.ErrorCode(err)
	status := Status(code)
	if status == http.StatusInternalServerError {
		code = drip.CodeInternal
	}
	if code.Fault() {
		h.Log.ErrorContext(r.Context(), "v2 request failed", "path", r.URL.Path, "code", code, "err", err)
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="drip"`)
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(h.retryAfter(err, code)))
	}
	info := &errorInfo{Code: code}
	if s, ok := code.V1Status(); ok {
		info.V1Status = &s
	}
	h.write(w, status, envelope{Status: status, Message: drip.ErrorMessage(err), Error: info})
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
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

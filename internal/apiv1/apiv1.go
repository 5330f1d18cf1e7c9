// Package apiv1 serves the v1 interface at /api/v1 (spec 4.1, D20-D27):
// form-encoded POSTs authenticated by the faucet's api_key, replies always
// HTTP 200 with the outcome in the body's status. Handlers decode, call the
// payout service, and encode; the rules live in the service.
package apiv1

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/requestlog"
)

// Prefix is where v1 is mounted.
const Prefix = "/api/v1"

// dateLayout is D23: dd-mm-yy HH:MM:SS GMT, in UTC, as FaucetPay writes it.
const dateLayout = "02-01-06 15:04:05 GMT"

// Handler serves v1.
type Handler struct {
	svc      *payout.Service
	log      *slog.Logger
	clientIP func(*http.Request) netip.Addr
	ops      map[string]op
	onReply  func(path string, status int)
	rewards  *rewards // /payouts' encoded rewards
}

// op is one v1 operation, run for an authorized caller.
type op func(ctx context.Context, c *payout.Caller, p params) (any, error)

// Options adjust the handler.
type Options struct {
	// ClientIP tells the caller's address, checked against the faucet's IP
	// whitelist (server.ClientIP). Required.
	ClientIP func(*http.Request) netip.Addr
	// Replied, when set, is told the status in each reply's body and the
	// method's path (Paths), or "other" for an unknown one: v1 answers
	// HTTP 200 whatever happened, so only this tells outcomes apart
	// (metrics).
	Replied func(path string, status int)
}

// New returns the v1 handler; mount it at Prefix + "/".
func New(svc *payout.Service, log *slog.Logger, opts Options) *Handler {
	if opts.ClientIP == nil {
		panic("apiv1: Options.ClientIP is required")
	}
	h := &Handler{svc: svc, log: log, clientIP: opts.ClientIP, onReply: opts.Replied, rewards: newRewards()}
	h.ops = map[string]op{
		"/send":         h.send,
		"/checkaddress": h.checkAddress,
		"/getbalance":   h.getBalance,
		"/balance":      h.getBalance, // alias (D20)
		"/payouts":      h.payouts,
		"/currencies":   h.currencies,
	}
	return h
}

// Paths are the paths of v1's methods.
func (h *Handler) Paths() []string {
	out := make([]string, 0, len(h.ops))
	for name := range h.ops {
		out = append(out, Prefix+name)
	}
	slices.Sort(out)
	return out
}

type params struct{ url.Values }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// D21: 404 first, then 403, then what the service decides.
	method := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, Prefix), "/")
	op, known := h.ops[method]
	if !known {
		h.reply(w, r, nil, drip.Errorf(drip.CodeNotFound, "Unknown method."))
		return
	}
	if r.Method != http.MethodPost {
		h.reply(w, r, nil, drip.Errorf(drip.CodeNotFound, "Requests must be POST."))
		return
	}
	values, err := readParams(w, r)
	if err != nil {
		h.reply(w, r, nil, err)
		return
	}
	p := params{values}
	requestlog.SetKey(r.Context(), p.Get("api_key"))
	// One generation of the cache serves the request's key, faucet and
	// recipient; a send's is checked by its payment's transaction (D63).
	result, err := payout.Serve(r.Context(), method == "/send", func(ctx context.Context) (any, error) {
		caller, err := h.svc.AuthorizeV1(ctx, p.Get("api_key"), h.clientIP(r))
		if err != nil {
			return nil, err
		}
		return op(ctx, caller, p)
	})
	h.reply(w, r, result, err)
}

// errorReply is every v1 refusal: the envelope alone (spec 2.1).
type errorReply struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

func (h *Handler) reply(w http.ResponseWriter, r *http.Request, result any, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	status := 200
	if err != nil {
		code := drip.ErrorCode(err)
		if code.Fault() {
			h.log.ErrorContext(r.Context(), "v1 request failed", "path", r.URL.Path, "code", code, "err", err)
		}
		var ok bool
		if status, ok = drip.V1Status(err); !ok {
			// Not the client's doing and not in v1's table (a bug): v1 has
			// no status for it, so it gets v1's "retry later" (D58).
			status = 459
		}
		result = errorReply{Status: status, Message: drip.ErrorMessage(err)}
	}
	// HTTP 200, always (spec 2.1, D20)
	if b, ok := result.(encodedReply); ok {
		_, _ = w.Write(b)
	} else {
		_ = json.NewEncoder(w).Encode(result)
	}
	h.replied(r, status)
}

// replied tells the status in a reply's body, which the HTTP status never
// says (D20), to the access log and to the metrics.
func (h *Handler) replied(r *http.Request, status int) {
	requestlog.SetV1Status(r.Context(), status)
	if h.onReply != nil {
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, Prefix), "/")
		path := "other"
		if _, known := h.ops[name]; known {
			path = Prefix + name
		}
		h.onReply(path, status)
	}
}

// coins writes an amount of smallest units as an exact JSON number of whole coins (D1).
func coins(units int64) json.Number { return json.Number(drip.FormatCoins(units)) }

func (h *Handler) send(ctx context.Context, c *payout.Caller, p params) (any, error) {
	res, err := h.svc.Send(ctx, c, payout.SendRequest{
		To: p.Get("to"), Currency: p.Get("currency"), Amount: p.Get("amount"),
		IPAddress: p.Get("ip_address"), Referral: p.Get("referral"),
	})
	if err != nil {
		return nil, err
	}
	return sendBody(res), nil
}

type checkAddressReply struct {
	Status         int    `json:"status"`
	Message        string `json:"message"`
	PayoutUserHash string `json:"payout_user_hash"`
}

func (h *Handler) checkAddress(ctx context.Context, c *payout.Caller, p params) (any, error) {
	u, err := h.svc.CheckAddress(ctx, c, p.Get("address"), h.currency(p))
	if err != nil {
		return nil, err
	}
	return checkAddressReply{Status: 200, Message: "The address belongs to a registered user.", PayoutUserHash: u.PayoutUserHash}, nil
}

type balanceReply struct {
	Status         int         `json:"status"`
	Message        string      `json:"message"`
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"`
	BalanceBitcoin json.Number `json:"balance_bitcoin"`
}

func (h *Handler) getBalance(ctx context.Context, c *payout.Caller, p params) (any, error) {
	currency := h.currency(p)
	b, err := h.svc.Balance(ctx, c, currency)
	if err != nil {
		return nil, err
	}
	return balanceReply{Status: 200, Message: "OK", Currency: currency, Balance: b, BalanceBitcoin: coins(b)}, nil
}

// currency is the coin a read names, in upper case, or the deployment's
// default coin when it names none (D28): FaucetPay answers clients that
// omit it with its default coin, and libraries rely on it. A send always
// names its coin; a list of payouts without one is of every coin (spec
// 4.1).
func (h *Handler) currency(p params) string {
	if c := p.Get("currency"); c != "" {
		return drip.Symbol(c)
	}
	return h.svc.DefaultCoin()
}

func (h *Handler) payouts(ctx context.Context, c *payout.Caller, p params) (any, error) {
	list, err := h.svc.Payouts(ctx, c, p.Get("currency"), parseCount(p.Get("count")))
	if err != nil {
		return nil, err
	}
	return encodedReply(h.rewards.payoutsBody(list)), nil
}

type coinName struct {
	Name    string `json:"name"`
	Acronym string `json:"acronym"`
}

type currenciesReply struct {
	Status          int        `json:"status"`
	Message         string     `json:"message"`
	Currencies      []string   `json:"currencies"`
	CurrenciesNames []coinName `json:"currencies_names"`
}

func (h *Handler) currencies(ctx context.Context, c *payout.Caller, _ params) (any, error) {
	list, err := h.svc.Currencies(ctx, c)
	if err != nil {
		return nil, err
	}
	reply := currenciesReply{Status: 200, Message: "OK", Currencies: []string{}, CurrenciesNames: []coinName{}}
	for _, coin := range list {
		reply.Currencies = append(reply.Currencies, coin.Symbol)
		reply.CurrenciesNames = append(reply.CurrenciesNames, coinName{Name: coin.Name, Acronym: coin.Symbol})
	}
	return reply, nil
}

// parseCount reads the payouts count (D27): an integer, clamped to 1-100 by
// the service (integers too long for int64 clamp by their sign); anything
// else, or nothing, means the default 10.
func parseCount(s string) int {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	var numErr *strconv.NumError
	switch {
	case err == nil:
		return int(min(max(n, 0), 101))
	case errors.As(err, &numErr) && numErr.Err == strconv.ErrRange:
		if strings.HasPrefix(strings.TrimSpace(s), "-") {
			return 0
		}
		return 101
	default:
		return 10
	}
}

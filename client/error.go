package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Error is a refusal from drip: a v2 reply other than 200, or a v1 reply
// whose status is not 200 (v1 answers HTTP 200 always, spec 7.1).
type Error struct {
	// HTTPStatus is the reply's HTTP status: 400, 401, 403, 404, 405, 409,
	// 429 or 503 on v2 (spec 7.2, D34); always 200 on v1.
	HTTPStatus int
	// Code is v2's stable error code ("insufficient_balance", see the
	// Code constants); empty on v1, and when something other than drip
	// answered (a proxy's 502).
	Code string
	// V1Status is the v1 status of the same condition (402, 456, ...):
	// v1's outcome, or v2's error.v1_status; 0 where v1 has none.
	V1Status int
	// Message is drip's message, safe to show to the faucet's visitors.
	Message string
	// RetryAfter is when to try again, from the Retry-After header of a
	// v2 429 or 503; 0 when absent.
	RetryAfter time.Duration
	// Path is the path called ("/api/v2/send").
	Path string
}

func (e *Error) Error() string {
	switch {
	case e.Code != "":
		return fmt.Sprintf("drip %s: %d %s: %s", e.Path, e.HTTPStatus, e.Code, e.Message)
	case e.V1Status != 0 && e.HTTPStatus == http.StatusOK:
		return fmt.Sprintf("drip %s: status %d: %s", e.Path, e.V1Status, e.Message)
	default:
		return fmt.Sprintf("drip %s: HTTP %d: %s", e.Path, e.HTTPStatus, e.Message)
	}
}

// v2 error codes (D34): the Code of an Error.
const (
	CodeInvalid             = "invalid"               // 400: a field out of range or missing
	CodeMalformed           = "malformed_request"     // 400: not the JSON asked for
	CodeInvalidCurrency     = "invalid_currency"      // 400: not an active coin
	CodeInvalidAmount       = "invalid_amount"        // 400: not a positive whole number, or below the minimum
	CodeRecipientNotPayable = "recipient_not_payable" // 400: no such user, or not payable
	CodeUnauthenticated     = "unauthenticated"       // 401: missing, unknown, expired or revoked key
	CodeForbidden           = "forbidden"             // 403: IP not whitelisted, owner suspended
	CodeInsufficientScope   = "insufficient_scope"    // 403: the key lacks the path's scope
	CodeRecipientRefused    = "recipient_refused"     // 403: the owner's blacklist or anti-fraud rules
	CodeNotFound            = "not_found"             // 404
	CodeMethodNotAllowed    = "method_not_allowed"    // 405
	CodeInsufficientBalance = "insufficient_balance"  // 409
	CodeIdempotencyKeyReuse = "idempotency_key_reuse" // 409: the key paid a different request
	CodeConflict            = "conflict"              // 409: listing already requested
	CodeRateLimited         = "rate_limited"          // 429: request rate of the key or caller IP
	CodeSendLimitReached    = "send_limit_reached"    // 429: the owner's send limit
	CodeClaimerIPLimited    = "claimer_ip_limited"    // 429: the owner's per-claimer-IP limit
	CodeDailyUSDCapReached  = "daily_usd_cap_reached" // 429: the key's daily USD cap
	CodePriceUnavailable    = "price_unavailable"     // 503: a capped key's send needs a fresh price
	CodeUnavailable         = "unavailable"           // 503: nothing was done; retry
	CodeOutcomeUnknown      = "outcome_unknown"       // 503: may have happened; retry a send with the same key
	CodeInternal            = "internal"              // 500
)

// ErrorCode is the v2 code of err if it is (or wraps) an *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// SendError is a v2 Send that did not pay, or whose outcome is not known:
// it carries the idempotency key used, so the caller can retry later with
// it and never pay twice (D35). Err is the last attempt's error: an *Error
// (errors.As finds it), a transport error, or the context's error.
type SendError struct {
	IdempotencyKey string
	Attempts       int
	Err            error
}

func (e *SendError) Error() string {
	return fmt.Sprintf("send (idempotency key %q, %d attempts): %v", e.IdempotencyKey, e.Attempts, e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

package drip

import (
	"errors"
	"fmt"
	"time"
)

// Code is a stable, machine-readable error kind. Only the HTTP, MCP and web
// layers turn codes into statuses, each through one table.
type Code string

const (
	CodeInvalid           Code = "invalid"          // malformed or out-of-range input
	CodeUnauthenticated   Code = "unauthenticated"  // key missing or unknown
	CodeForbidden         Code = "forbidden"        // IP not whitelisted, owner suspended
	CodeRateLimited       Code = "rate_limited"     // request rate of the key exceeded (D40)
	CodeInvalidCurrency   Code = "invalid_currency" // not an active coin
	CodeInvalidAmount     Code = "invalid_amount"   // not a positive integer (D22)
	CodeRecipientUnknown  Code = "recipient_not_payable"
	CodeRecipientRefused  Code = "recipient_refused"  // owner's blacklist or anti-fraud (D42)
	CodeSendLimit         Code = "send_limit_reached" // owner send limit (D41)
	CodeClaimerRateLimit  Code = "claimer_ip_limited" // owner per-IP limit (D26)
	CodeInsufficientFunds Code = "insufficient_balance"
	CodeDailyCap          Code = "daily_usd_cap_reached" // a key's daily USD cap (D36)
	CodeIdempotencyReuse  Code = "idempotency_key_reuse" // same key, other request (D35)
	CodePriceUnavailable  Code = "price_unavailable"     // no fresh USD price (D36, D60)
	CodeInsufficientScope Code = "insufficient_scope"    // a v2 key lacks the path's scope
	CodeMalformed         Code = "malformed_request"     // a v2 body that is not the JSON asked for
	CodeMethodNotAllowed  Code = "method_not_allowed"
	CodeNotFound          Code = "not_found"
	CodeConflict          Code = "conflict"
	// CodeUnavailable: the database (or another dependency the request
	// needs) did not answer in time; nothing was done, retry later (D58).
	CodeUnavailable Code = "unavailable"
	// CodeOutcomeUnknown: a write was sent to the database but its outcome
	// could not be learned before the request's deadline (D6, D58). It may
	// have happened: a v2 send may be retried with the same idempotency key.
	CodeOutcomeUnknown Code = "outcome_unknown"
	CodeInternal       Code = "internal"
)

// v1Status is the one table of v1 outcome codes (spec 7.1). Webhook bodies
// carry the same code for a failed payout (D51), so it lives with the codes.
// CodeInvalid has none of its own: an invalid input is a v1 status only when
// the error says which of v1's checks it is (Error.V1Status).
var v1Status = map[Code]int{
	CodeUnauthenticated:   403,
	CodeForbidden:         401,
	CodeRateLimited:       459,
	CodeInvalidCurrency:   410,
	CodeInvalidAmount:     405,
	CodeRecipientUnknown:  456,
	CodeRecipientRefused:  457,
	CodeSendLimit:         450,
	CodeClaimerRateLimit:  459,
	CodeInsufficientFunds: 402,
	CodeNotFound:          404,
	// v1 has no outage status; 459 is its "retry later" (issue 9, D58):
	// FaucetPay clients show the message and the claim stays to retry.
	CodeUnavailable:    459,
	CodeOutcomeUnknown: 459,
}

// V1Status is the v1 status for the code. Codes v1 has no status for
// (conflict, internal) have none: v1 callers never see them as outcomes.
func (c Code) V1Status() (int, bool) {
	s, ok := v1Status[c]
	return s, ok
}

// Fault reports whether the code is the service's failure rather than an
// answer to the request: an internal error, or the database unavailable or
// silent on a write's outcome (D58). Interfaces log faults (through
// errlog, so an outage is a few lines) and tell the caller to retry.
func (c Code) Fault() bool {
	return c == CodeInternal || c == CodeUnavailable || c == CodeOutcomeUnknown
}

// Error is the application error: a stable code and a message that is safe
// to show to a faucet's visitors (D25). Messages never contain secrets.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, when set, is how long until the refused request could
	// succeed (a rate limit's refill), for interfaces that can say so.
	RetryAfter time.Duration
	// V1Status, when set, is the v1 status of the condition where the code
	// alone does not tell it: a missing coin is CodeInvalid, as v1 would
	// answer it 410.
	V1Status int
}

// WithV1Status sets the v1 status of e's condition and returns e.
func (e *Error) WithV1Status(status int) *Error {
	e.V1Status = status
	return e
}

// V1Status is the v1 status of err's condition (spec 7.1): the error's own,
// else its code's; false when v1 has none for it (a v2 body's shape, a
// conflict, a bug). v2 replies carry it as error.v1_status (D32), and
// payout.failed events as status (D51).
func V1Status(err error) (int, bool) {
	var e *Error
	if !errors.As(err, &e) {
		return 0, false
	}
	if e.V1Status != 0 {
		return e.V1Status, true
	}
	return e.Code.V1Status()
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, or CodeInternal when err carries none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the client-safe message of err; an error without a
// code is "Internal error." to the client (and is logged by the caller).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

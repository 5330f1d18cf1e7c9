package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// SendRequest is a v2 payout (spec 4.2).
type SendRequest struct {
	// IdempotencyKey names the logical payout: 1 to 255 printable ASCII
	// characters, unique per payout, reused on every retry (D35). Send
	// makes one when it is empty; a caller that may retry later, after
	// a crash, stores its own (NewIdempotencyKey) before sending.
	IdempotencyKey string `json:"idempotency_key"`
	To             string `json:"to"`     // email, username, wallet address or payout_user_hash
	Amount         int64  `json:"amount"` // smallest units
	Currency       string `json:"currency"`
	IPAddress      string `json:"ip_address,omitempty"` // the claimer's IP, recommended
	Referral       string `json:"referral,omitempty"`
	// DryRun runs every check and answers what the send would do, paying
	// nothing, binding no key and recording nothing (D62): a result
	// with DryRun set and no PayoutID, or the *Error the send would get.
	DryRun bool `json:"dry_run,omitempty"`
}

// SendResult is a paid send.
type SendResult struct {
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Currency           string      `json:"currency"`
	Balance            int64       `json:"balance"` // the faucet's, after the payout
	BalanceBitcoin     json.Number `json:"balance_bitcoin"`
	PayoutID           int64       `json:"payout_id"` // 0 in a dry run that would pay
	PayoutUserHash     string      `json:"payout_user_hash"`
	// DryRun is true when nothing was paid: the reply of a dry run, whose
	// Balance is the faucet's balance as it would be after the payout.
	DryRun bool `json:"dry_run"`

	// IdempotencyKey is the key the payout is bound to.
	IdempotencyKey string `json:"-"`
	// Replayed is true when the key had already paid: this reply is that
	// payout's, and nothing was paid now (header Idempotent-Replayed).
	Replayed bool `json:"-"`
	// Attempts is how many requests the send took.
	Attempts int `json:"-"`
}

// NewIdempotencyKey returns a fresh random idempotency key (128 bits from
// crypto/rand, in hex).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Send pays a registered user from the faucet's balance. It retries as the
// client's RetryPolicy says, every attempt with the same idempotency key,
// so the payout is made at most once whatever happens to the requests
// (D35). When it does not pay, or cannot tell, the error is a *SendError
// naming the key; retrying later with that key is safe.
func (c *Client) Send(ctx context.Context, r SendRequest) (*SendResult, error) {
	if r.IdempotencyKey == "" {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	body, err := marshal(r)
	if err != nil {
		return nil, err
	}
	var out SendResult
	h, attempts, err := c.retry.do(ctx, func() (http.Header, error) {
		out = SendResult{}
		return c.once(ctx, "/send", body, &out)
	})
	if err != nil {
		return nil, &SendError{IdempotencyKey: r.IdempotencyKey, Attempts: attempts, Err: err}
	}
	out.IdempotencyKey, out.Attempts = r.IdempotencyKey, attempts
	out.Replayed = h.Get("Idempotent-Replayed") == "true"
	return &out, nil
}

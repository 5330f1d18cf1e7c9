package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Webhooks (spec 6.1, D51): drip POSTs an event's body with the header
// X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed
// with the webhook's secret>. A receiver verifies the raw bytes before
// parsing them, and answers 401 when they do not verify.

// SignatureHeader is the header carrying a webhook body's signature.
const SignatureHeader = "X-Service-Signature"

// Webhook event names (spec 6.1).
const (
	EventPayoutSent   = "payout.sent"
	EventPayoutFailed = "payout.failed"
)

// ErrBadSignature is a webhook body whose signature does not verify: a
// receiver answers 401 and ignores the body.
var ErrBadSignature = errors.New("webhook signature does not verify")

// VerifyWebhook checks that signatureHeader (the X-Service-Signature
// header's value, "sha256=<hex>") is the HMAC-SHA256 of body keyed with
// secret, comparing in constant time. body must be the raw bytes received,
// before any JSON decoding. A mismatch, a malformed header or an empty
// secret is ErrBadSignature.
func VerifyWebhook(secret, body []byte, signatureHeader string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: empty secret", ErrBadSignature)
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(signatureHeader), "sha256=")
	if !ok {
		return fmt.Errorf("%w: header is not sha256=<hex>", ErrBadSignature)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: header is not sha256=<64 hex digits>", ErrBadSignature)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// SignWebhook is the X-Service-Signature value of body under secret, as
// drip sends it; a receiver's tests can sign bodies with it.
func SignWebhook(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// WebhookEvent is a webhook body (spec 2.8, D51). Receivers dedupe on ID:
// delivery is at least once.
type WebhookEvent struct {
	ID        string          `json:"id"`    // evt_...
	Event     string          `json:"event"` // EventPayoutSent or EventPayoutFailed
	FaucetID  int64           `json:"faucet_id"`
	CreatedAt int64           `json:"created_at"` // Unix seconds
	Data      json.RawMessage `json:"data"`       // PayoutSent or PayoutFailed
}

// Time is when the event happened.
func (e *WebhookEvent) Time() time.Time { return time.Unix(e.CreatedAt, 0).UTC() }

// PayoutSent is the data of a payout.sent event.
type PayoutSent struct {
	To             string `json:"to"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	PayoutID       string `json:"payout_id"` // a string in this body (spec 2.8)
	PayoutUserHash string `json:"payout_user_hash"`
	Message        string `json:"message"`
}

// PayoutFailed is the data of a payout.failed event (D51).
type PayoutFailed struct {
	To       string `json:"to"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Status   *int   `json:"status"` // the v1 status; nil where v1 has none
	Error    string `json:"error"`  // the v2 error code
	Message  string `json:"message"`
}

// PayoutSent decodes the data of a payout.sent event.
func (e *WebhookEvent) PayoutSent() (*PayoutSent, error) {
	return eventData[PayoutSent](e, EventPayoutSent)
}

// PayoutFailed decodes the data of a payout.failed event.
func (e *WebhookEvent) PayoutFailed() (*PayoutFailed, error) {
	return eventData[PayoutFailed](e, EventPayoutFailed)
}

func eventData[T any](e *WebhookEvent, event string) (*T, error) {
	if e.Event != event {
		return nil, fmt.Errorf("webhook event %s is not %s", e.Event, event)
	}
	var out T
	if err := json.Unmarshal(e.Data, &out); err != nil {
		return nil, fmt.Errorf("webhook %s data: %w", event, err)
	}
	return &out, nil
}

// ParseWebhook verifies body's signature (VerifyWebhook) and only then
// decodes it. An error wrapping ErrBadSignature is answered 401.
func ParseWebhook(secret, body []byte, signatureHeader string) (*WebhookEvent, error) {
	if err := VerifyWebhook(secret, body, signatureHeader); err != nil {
		return nil, err
	}
	var e WebhookEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("webhook body: %w", err)
	}
	if e.ID == "" || e.Event == "" || e.FaucetID == 0 || len(e.Data) == 0 {
		return nil, errors.New("webhook body: id, event, faucet_id and data are required")
	}
	return &e, nil
}

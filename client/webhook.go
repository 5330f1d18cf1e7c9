package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Webhooks (spec 6.1, D51): drip POSTs an event's body with two
// signatures over the same raw bytes, made with the endpoint's signing
// secret ("whsec_..."), shown to its owner once:
//
//   - X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed
//     with the secret string>; VerifySignature checks it;
//   - the Standard Webhooks headers webhook-id (the event's id),
//     webhook-timestamp (Unix seconds) and webhook-signature
//     (v1,<base64 HMAC-SHA256 of "id.timestamp.body", keyed with the
//     bytes of the secret's base64 part>); VerifyStandard checks them and
//     refuses an old or future timestamp, so a recorded delivery cannot be
//     replayed later. The standard's own libraries verify them too.
//
// A receiver verifies the raw bytes before parsing them, answers 401 when
// they do not verify, and dedupes on the event's id: a delivery may come
// more than once (D52).

// SignatureHeader is the header carrying a webhook body's signature.
const SignatureHeader = "X-Service-Signature"

// The Standard Webhooks headers of a delivery.
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// DefaultTolerance is how far a delivery's webhook-timestamp may be from
// the receiver's clock when VerifyStandard is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// Webhook event names (spec 6.1, D43).
const (
	EventPayoutSent   = "payout.sent"
	EventPayoutFailed = "payout.failed"
	EventLowBalance   = "faucet.low_balance"
)

// ErrBadSignature is a webhook body whose signature does not verify: a
// receiver answers 401 and ignores the body.
var ErrBadSignature = errors.New("webhook signature does not verify")

// ErrTimestamp is a delivery whose webhook-timestamp is outside the
// tolerance: too old (a replay) or too far ahead. It wraps ErrBadSignature.
var ErrTimestamp = fmt.Errorf("%w: timestamp outside the tolerance", ErrBadSignature)

// VerifySignature checks that header (the X-Service-Signature header's
// value, "sha256=<hex>") is the HMAC-SHA256 of body keyed with secret,
// the signing secret as drip showed it, comparing in constant time. body
// must be the raw bytes received, before any JSON decoding. A mismatch, a
// malformed header or an empty secret is ErrBadSignature.
func VerifySignature(secret string, body []byte, header string) error {
	return VerifyWebhook([]byte(secret), body, header)
}

// VerifyWebhook is VerifySignature with the secret as bytes.
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
	Event     string          `json:"event"` // EventPayoutSent, EventPayoutFailed or EventLowBalance
	FaucetID  int64           `json:"faucet_id"`
	CreatedAt int64           `json:"created_at"` // Unix seconds
	Data      json.RawMessage `json:"data"`       // PayoutSent, PayoutFailed or FaucetLowBalance
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

// FaucetLowBalance is the data of a faucet.low_balance event (D43): a
// payout took the faucet's balance of Currency below the owner's
// threshold.
type FaucetLowBalance struct {
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"` // after the payout
	BalanceBitcoin json.Number `json:"balance_bitcoin"`
	Threshold      int64       `json:"threshold"`
	Message        string      `json:"message"`
}

// PayoutSent decodes the data of a payout.sent event.
func (e *WebhookEvent) PayoutSent() (*PayoutSent, error) {
	return eventData[PayoutSent](e, EventPayoutSent)
}

// PayoutFailed decodes the data of a payout.failed event.
func (e *WebhookEvent) PayoutFailed() (*PayoutFailed, error) {
	return eventData[PayoutFailed](e, EventPayoutFailed)
}

// FaucetLowBalance decodes the data of a faucet.low_balance event.
func (e *WebhookEvent) FaucetLowBalance() (*FaucetLowBalance, error) {
	return eventData[FaucetLowBalance](e, EventLowBalance)
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

// VerifyStandard checks a delivery's Standard Webhooks headers in h:
// webhook-signature must hold, among its space-separated signatures, a
// "v1," one that is the base64 HMAC-SHA256 of "id.timestamp.body" keyed
// with secret's key (the bytes its base64 part after "whsec_" decodes
// to), compared in constant time; and webhook-timestamp must be within
// tolerance of now (DefaultTolerance when tolerance is 0 or less), so a
// delivery recorded and sent again later is refused. body must be the raw
// bytes received. Any failure wraps ErrBadSignature; a timestamp outside
// the tolerance is also ErrTimestamp.
func VerifyStandard(secret string, body []byte, h http.Header, now time.Time, tolerance time.Duration) error {
	id, ts, sigs := h.Get(StandardIDHeader), h.Get(StandardTimestampHeader), h.Get(StandardSignatureHeader)
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: %s, %s and %s are required", ErrBadSignature,
			StandardIDHeader, StandardTimestampHeader, StandardSignatureHeader)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s is not Unix seconds", ErrBadSignature, StandardTimestampHeader)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if at := time.Unix(sec, 0); now.Sub(at) > tolerance || at.Sub(now) > tolerance {
		return ErrTimestamp
	}
	want, err := standardMAC(secret, id, ts, body)
	if err != nil {
		return err
	}
	ok := false
	for _, s := range strings.Fields(sigs) {
		b64, isV1 := strings.CutPrefix(s, "v1,")
		if !isV1 {
			continue // another scheme, or a later version
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return ErrBadSignature
	}
	return nil
}

// SignStandard is the webhook-signature value drip sends with body, the
// event id id, at ts; a receiver's tests can sign deliveries with it.
func SignStandard(secret, id string, ts time.Time, body []byte) (string, error) {
	mac, err := standardMAC(secret, id, strconv.FormatInt(ts.Unix(), 10), body)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac), nil
}

func standardMAC(secret, id, ts string, body []byte) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("%w: the secret is not whsec_<base64>", ErrBadSignature)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return mac.Sum(nil), nil
}

package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/version"
)

// The headers of a delivery (D51, and the Standard Webhooks ones).
const (
	HeaderSignature = "X-Service-Signature"
	HeaderEvent     = "X-Service-Event"
	HeaderDelivery  = "X-Service-Delivery"

	HeaderStandardID        = "webhook-id"
	HeaderStandardTimestamp = "webhook-timestamp"
	HeaderStandardSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret, as in the Standard Webhooks
// form; the rest is the base64 (standard, padded) of the key bytes.
const SecretPrefix = "whsec_"

// secretBytes is how many random bytes a new secret has.
const secretBytes = 32

// ErrSecret is wrapped by the functions given a malformed secret; its
// message never shows the secret.
var ErrSecret = errors.New("webhook: malformed signing secret")

// NewSecret makes an endpoint's signing secret: "whsec_" and the base64
// of 32 random bytes. The owner sees it once; drip keeps it sealed.
func NewSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// standardKey is the key of the Standard Webhooks signature: the bytes
// the secret's base64 part decodes to. The standard's libraries accept
// keys of 24 to 64 bytes; so does this.
func standardKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("%w: it does not start with %s", ErrSecret, SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("%w: its key is not base64", ErrSecret)
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, fmt.Errorf("%w: its key has %d bytes, want 24 to 64", ErrSecret, len(key))
	}
	return key, nil
}

// Signature is the X-Service-Signature value of body (spec 6.1 rule 2):
// "sha256=" and the hex HMAC-SHA256 of the exact body bytes, keyed with
// the secret string as the owner was shown it.
func Signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// StandardSignature is the webhook-signature value of body sent with id
// at ts: "v1," and the base64 HMAC-SHA256 of "id.ts.body" (ts in Unix
// seconds), keyed with the secret's decoded key.
func StandardSignature(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := standardKey(secret)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// UserAgent is the User-Agent of deliveries: drip and its version.
func UserAgent() string {
	return "drip-webhook/" + version.String() + " (+https://github.com/dripfaucet/drip)"
}

// NewRequest is the POST of one delivery attempt of ev to rawURL: body
// (from Body(ev), the bytes both signatures cover) with its signatures,
// Content-Type application/json, the event's type, the delivery's id, the
// Standard Webhooks headers (webhook-id is the event's id, so a receiver
// deduping on either the header or the body's id dedupes alike) with the
// timestamp now, and drip's User-Agent.
//
// deliveryID names the delivery (one event to one endpoint) and is the
// same on every attempt; it is letters, digits, '_' and '-'. body must be
// ev's: its id and event are checked against ev, so one event's
// signature never covers another's body. The URL's scheme must be http or
// https; whether the address may be reached (D53) is for the endpoint's
// save check and the sending client's dialer, not for this function.
func NewRequest(ctx context.Context, rawURL, secret, deliveryID string, ev drip.Event, body []byte, now time.Time) (*http.Request, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("webhook: endpoint URL %q is not an http(s) URL", rawURL)
	}
	if !validDeliveryID(deliveryID) {
		return nil, fmt.Errorf("webhook: delivery id %q is not letters, digits, '_' and '-'", deliveryID)
	}
	var head struct {
		ID    string `json:"id"`
		Event string `json:"event"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID != ev.ID || head.Event != ev.Type || ev.ID == "" {
		return nil, fmt.Errorf("webhook: the body is not that of event %s", ev.ID)
	}
	standard, err := StandardSignature(secret, ev.ID, now, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent())
	h.Set(HeaderSignature, Signature(secret, body))
	h.Set(HeaderEvent, ev.Type)
	h.Set(HeaderDelivery, deliveryID)
	h.Set(HeaderStandardID, ev.ID) // names are case-insensitive: Webhook-Id on HTTP/1.1
	h.Set(HeaderStandardTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(HeaderStandardSignature, standard)
	return req, nil
}

func validDeliveryID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

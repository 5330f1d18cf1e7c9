package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerifyWebhook checks signatures computed here with crypto/hmac, as
// spec 6.1 defines them, against VerifyWebhook and ParseWebhook.
func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	secret := []byte("whsec_test")
	body := []byte(`{"id":"evt_0123456789abcdef01234567","event":"payout.sent","faucet_id":7,"created_at":1773500966,` +
		`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}}`)
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	good := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if SignWebhook(secret, body) != good {
		t.Fatalf("SignWebhook %s, want %s", SignWebhook(secret, body), good)
	}

	flipped := []byte(good) // its last hex digit changed
	if flipped[len(flipped)-1] == '0' {
		flipped[len(flipped)-1] = '1'
	} else {
		flipped[len(flipped)-1] = '0'
	}
	for _, tc := range []struct {
		name   string
		secret []byte
		body   []byte
		header string
		ok     bool
	}{
		{"signed body", secret, body, good, true},
		{"upper-case hex", secret, body, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), true},
		{"a byte of the body changed", secret, []byte(strings.Replace(string(body), "1000", "9000", 1)), good, false},
		{"body re-encoded (whitespace)", secret, []byte(strings.Replace(string(body), ",", ", ", 1)), good, false},
		{"another secret", []byte("whsec_other"), body, good, false},
		{"empty secret", nil, body, good, false},
		{"one hex digit changed", secret, body, string(flipped), false},
		{"no prefix", secret, body, strings.TrimPrefix(good, "sha256="), false},
		{"sha1 prefix", secret, body, "sha1=" + strings.TrimPrefix(good, "sha256="), false},
		{"truncated", secret, body, good[:len(good)-2], false},
		{"not hex", secret, body, "sha256=" + strings.Repeat("zz", 32), false},
		{"empty header", secret, body, "", false},
	} {
		err := VerifyWebhook(tc.secret, tc.body, tc.header)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrBadSignature)) {
			t.Errorf("%s: %v, want ok=%v (else ErrBadSignature)", tc.name, err, tc.ok)
		}
	}

	ev, err := ParseWebhook(secret, body, good)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_0123456789abcdef01234567" || ev.Event != EventPayoutSent || ev.FaucetID != 7 ||
		!ev.Time().Equal(time.Unix(1773500966, 0)) {
		t.Errorf("event %+v", ev)
	}
	sent, err := ev.PayoutSent()
	if err != nil || *sent != (PayoutSent{To: "bob", Amount: 1000, Currency: "BTC", PayoutID: "42", PayoutUserHash: "c54b46fd", Message: "Payout sent."}) {
		t.Errorf("PayoutSent: %+v, %v", sent, err)
	}
	if _, err := ev.PayoutFailed(); err == nil {
		t.Error("PayoutFailed of a payout.sent event: no error")
	}
	if _, err := ParseWebhook(secret, body, SignWebhook([]byte("other"), body)); !errors.Is(err, ErrBadSignature) {
		t.Errorf("ParseWebhook of a body signed with another secret: %v, want ErrBadSignature", err)
	}

	failed := []byte(`{"id":"evt_1","event":"payout.failed","faucet_id":7,"created_at":1773500966,` +
		`"data":{"to":"nobody","amount":1000,"currency":"BTC","status":456,"error":"recipient_not_payable","message":"No such user."}}`)
	ev, err = ParseWebhook(secret, failed, SignWebhook(secret, failed))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := ev.PayoutFailed()
	if err != nil || pf.Status == nil || *pf.Status != 456 || pf.Error != CodeRecipientNotPayable {
		t.Errorf("PayoutFailed: %+v, %v", pf, err)
	}
	if _, err := ParseWebhook(secret, []byte(`{}`), SignWebhook(secret, []byte(`{}`))); err == nil {
		t.Error("ParseWebhook of a signed empty object: no error")
	}
}

package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
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

// The signing secret and payout.sent body of the tests below, and their
// signatures as computed once with openssl, independently of Go:
//
//	printf '%s' "$body" | openssl dgst -sha256 -hmac "$secret"
//	printf '%s' "$id.$ts.$body" | openssl dgst -sha256 -mac HMAC \
//	  -macopt hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f -binary | base64
const (
	testSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // the bytes 0 to 31
	testBody   = `{"id":"evt_0123456789abcdef01234567","event":"payout.sent","faucet_id":7,"created_at":1773500966,` +
		`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}}`
	testID        = "evt_0123456789abcdef01234567"
	testTimestamp = 1773500966
	opensslHex    = "sha256=1f95745fe7a4dc39eea1061e426826096720ce17ca4387a69e5df559080d2e8b"
	opensslB64    = "v1,beccttwgHX4xGqhqN5C/vuWLtXhX6EmeGbid9zAq6KU="
)

// TestVerifySignature checks the string-secret form against the
// signature openssl computed.
func TestVerifySignature(t *testing.T) {
	t.Parallel()
	if err := VerifySignature(testSecret, []byte(testBody), opensslHex); err != nil {
		t.Errorf("openssl's signature: %v", err)
	}
	if got := SignWebhook([]byte(testSecret), []byte(testBody)); got != opensslHex {
		t.Errorf("SignWebhook = %s, openssl %s", got, opensslHex)
	}
	tampered := strings.Replace(testBody, `"amount":1000`, `"amount":9000`, 1)
	for _, tc := range []struct{ name, secret, body, header string }{
		{"tampered body", testSecret, tampered, opensslHex},
		{"wrong secret", testSecret + "x", testBody, opensslHex},
		{"secret without its prefix", strings.TrimPrefix(testSecret, "whsec_"), testBody, opensslHex},
		{"the standard signature in its place", testSecret, testBody, opensslB64},
	} {
		if err := VerifySignature(tc.secret, []byte(tc.body), tc.header); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", tc.name, err)
		}
	}
}

func standardHeader(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set(StandardIDHeader, id)
	h.Set(StandardTimestampHeader, strconv.FormatInt(ts, 10))
	h.Set(StandardSignatureHeader, sig)
	return h
}

// TestVerifyStandard checks the Standard Webhooks headers: openssl's
// signature and the standard's own published test vector verify; a
// tampered body, id or timestamp, another secret, and a timestamp outside
// the tolerance do not.
func TestVerifyStandard(t *testing.T) {
	t.Parallel()
	at := time.Unix(testTimestamp, 0)
	body := []byte(testBody)
	if sig, err := SignStandard(testSecret, testID, at, body); err != nil || sig != opensslB64 {
		t.Errorf("SignStandard = %s, %v; openssl %s", sig, err, opensslB64)
	}

	// The test vector of the standard's reference library
	// (standard-webhooks/libraries/go, TestWebhookSign).
	vector := standardHeader("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	if err := VerifyStandard("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", []byte(`{"test": 2432232314}`), vector,
		time.Unix(1614265330, 0), 0); err != nil {
		t.Errorf("the standard's test vector: %v", err)
	}

	other := "v1," + base64.StdEncoding.EncodeToString(make([]byte, 32))
	const tol = 5 * time.Minute
	for _, tc := range []struct {
		name   string
		secret string
		body   string
		h      http.Header
		now    time.Time
		err    error // nil, ErrBadSignature or ErrTimestamp
	}{
		{"as sent", testSecret, testBody, standardHeader(testID, testTimestamp, opensslB64), at, nil},
		{"received 5 minutes later", testSecret, testBody, standardHeader(testID, testTimestamp, opensslB64), at.Add(tol), nil},
		{"clock 5 minutes behind", testSecret, testBody, standardHeader(testID, testTimestamp, opensslB64), at.Add(-tol), nil},
		{"among several signatures", testSecret, testBody,
			standardHeader(testID, testTimestamp, other+" v2,"+strings.TrimPrefix(opensslB64, "v1,")+" "+opensslB64), at, nil},
		{"replayed 5 minutes and 1 second later", testSecret, testBody, standardHeader(testID, testTimestamp, opensslB64), at.Add(tol + time.Second), ErrTimestamp},
		{"from 5 minutes and 1 second ahead", testSecret, testBody, standardHeader(testID, testTimestamp, opensslB64), at.Add(-tol - time.Second), ErrTimestamp},
		{"timestamp changed to now", testSecret, testBody, standardHeader(testID, testTimestamp+60, opensslB64), at.Add(time.Minute), ErrBadSignature},
		{"id changed", testSecret, testBody, standardHeader("evt_1", testTimestamp, opensslB64), at, ErrBadSignature},
		{"tampered body", testSecret, strings.Replace(testBody, "bob", "eve", 1), standardHeader(testID, testTimestamp, opensslB64), at, ErrBadSignature},
		{"another secret", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)), testBody, standardHeader(testID, testTimestamp, opensslB64), at, ErrBadSignature},
		{"secret not base64", "whsec_!!", testBody, standardHeader(testID, testTimestamp, opensslB64), at, ErrBadSignature},
		{"only a v2 signature", testSecret, testBody, standardHeader(testID, testTimestamp, "v2,"+strings.TrimPrefix(opensslB64, "v1,")), at, ErrBadSignature},
		{"only other signatures", testSecret, testBody, standardHeader(testID, testTimestamp, other+" "+other), at, ErrBadSignature},
		{"timestamp not a number", testSecret, testBody, http.Header{"Webhook-Id": {testID}, "Webhook-Timestamp": {"soon"}, "Webhook-Signature": {opensslB64}}, at, ErrBadSignature},
		{"no id", testSecret, testBody, http.Header{"Webhook-Timestamp": {strconv.Itoa(testTimestamp)}, "Webhook-Signature": {opensslB64}}, at, ErrBadSignature},
		{"no signature", testSecret, testBody, http.Header{"Webhook-Id": {testID}, "Webhook-Timestamp": {strconv.Itoa(testTimestamp)}}, at, ErrBadSignature},
	} {
		err := VerifyStandard(tc.secret, []byte(tc.body), tc.h, tc.now, tol)
		switch {
		case tc.err == nil && err != nil:
			t.Errorf("%s: %v, want it to verify", tc.name, err)
		case tc.err != nil && !errors.Is(err, tc.err):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		case tc.err == ErrBadSignature && errors.Is(err, ErrTimestamp):
			t.Errorf("%s: refused for its timestamp, want for its signature", tc.name)
		}
	}
	if !errors.Is(ErrTimestamp, ErrBadSignature) {
		t.Error("ErrTimestamp does not wrap ErrBadSignature: a receiver testing for the latter would let it through")
	}
	// No tolerance given: DefaultTolerance.
	h := standardHeader(testID, testTimestamp, opensslB64)
	if err := VerifyStandard(testSecret, body, h, at.Add(DefaultTolerance+time.Second), 0); !errors.Is(err, ErrTimestamp) {
		t.Errorf("past DefaultTolerance with no tolerance given: %v, want ErrTimestamp", err)
	}
}

// TestWebhookLowBalance decodes a faucet.low_balance event.
func TestWebhookLowBalance(t *testing.T) {
	t.Parallel()
	body := []byte(`{"id":"evt_2","event":"faucet.low_balance","faucet_id":7,"created_at":1773500966,` +
		`"data":{"currency":"BTC","balance":400,"balance_bitcoin":0.000004,"threshold":500,"message":"Low."}}`)
	ev, err := ParseWebhook([]byte(testSecret), body, SignWebhook([]byte(testSecret), body))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := ev.FaucetLowBalance()
	if err != nil || *lb != (FaucetLowBalance{Currency: "BTC", Balance: 400, BalanceBitcoin: "0.000004", Threshold: 500, Message: "Low."}) {
		t.Errorf("FaucetLowBalance: %+v, %v", lb, err)
	}
	if _, err := ev.PayoutSent(); err == nil {
		t.Error("PayoutSent of a faucet.low_balance event: no error")
	}
}

package webhook_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/version"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The signing secret, event and body of these tests, and the body's
// signatures as computed once with openssl, independently of Go:
//
//	printf '%s' "$body" | openssl dgst -sha256 -hmac "$secret"
//	printf '%s' "$id.$ts.$body" | openssl dgst -sha256 -mac HMAC \
//	  -macopt hexkey:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f -binary | base64
const (
	testSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // the bytes 0 to 31
	testBody   = `{"id":"evt_0123456789abcdef01234567","event":"payout.sent","faucet_id":7,"created_at":1773500966,` +
		`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}}`
	opensslHex = "sha256=1f95745fe7a4dc39eea1061e426826096720ce17ca4387a69e5df559080d2e8b"
	opensslB64 = "v1,beccttwgHX4xGqhqN5C/vuWLtXhX6EmeGbid9zAq6KU="
)

var sentAt = time.Unix(1773500966, 0)

func sentEvent() drip.Event {
	return event(drip.EventPayoutSent,
		`{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}`)
}

// TestSignaturesMatchOpenSSL: both signatures are those openssl computed,
// and the Standard Webhooks one also matches the standard's published
// test vector (standard-webhooks/libraries/go, TestWebhookSign).
func TestSignaturesMatchOpenSSL(t *testing.T) {
	t.Parallel()
	if got := webhook.Signature(testSecret, []byte(testBody)); got != opensslHex {
		t.Errorf("Signature = %s, openssl %s", got, opensslHex)
	}
	got, err := webhook.StandardSignature(testSecret, "evt_0123456789abcdef01234567", sentAt, []byte(testBody))
	if err != nil || got != opensslB64 {
		t.Errorf("StandardSignature = %s, %v; openssl %s", got, err, opensslB64)
	}
	got, err = webhook.StandardSignature("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Errorf("the standard's test vector: %s, %v; want %s", got, err, want)
	}
}

// TestNewRequest: the request of one attempt carries the body as built,
// both signatures over it, and every header of D51 and the standard.
func TestNewRequest(t *testing.T) {
	t.Parallel()
	ev := sentEvent()
	body, err := webhook.Body(ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != testBody {
		t.Fatalf("body %s, want the signed test body", body)
	}
	req, err := webhook.NewRequest(t.Context(), "https://hooks.example.com/drip?src=1", testSecret, "dlv_42", ev, body, sentAt)
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPost || req.URL.String() != "https://hooks.example.com/drip?src=1" {
		t.Errorf("request %s %s", req.Method, req.URL)
	}
	want := map[string]string{
		"Content-Type":        "application/json",
		"X-Service-Signature": opensslHex,
		"X-Service-Event":     "payout.sent",
		"X-Service-Delivery":  "dlv_42",
		"webhook-id":          "evt_0123456789abcdef01234567",
		"webhook-timestamp":   "1773500966",
		"webhook-signature":   opensslB64,
	}
	for name, v := range want {
		if got := req.Header.Values(name); len(got) != 1 || got[0] != v {
			t.Errorf("header %s = %q, want %q", name, got, v)
		}
	}
	if ua := req.Header.Get("User-Agent"); !strings.HasPrefix(ua, "drip-webhook/"+version.String()+" ") {
		t.Errorf("User-Agent %q does not name drip and its version %s", ua, version.String())
	}
	if len(req.Header) != len(want)+1 {
		t.Errorf("headers %v: want exactly those checked", req.Header)
	}
	sent, _ := io.ReadAll(req.Body)
	if string(sent) != testBody || req.ContentLength != int64(len(testBody)) {
		t.Errorf("request body %q (length %d), want the signed body", sent, req.ContentLength)
	}
	if strings.Contains(req.Header.Get("X-Service-Signature")+req.Header.Get("webhook-signature"), strings.TrimPrefix(testSecret, "whsec_")) {
		t.Error("a header shows the secret")
	}
}

// TestNewRequestRefuses what would send a wrong or unverifiable delivery.
func TestNewRequestRefuses(t *testing.T) {
	t.Parallel()
	ev := sentEvent()
	body, _ := webhook.Body(ev)
	other := ev
	other.ID = "evt_ffffffffffffffffffffffff"
	failed := ev
	failed.Type = drip.EventPayoutFailed
	for _, tc := range []struct {
		name, url, secret, delivery string
		ev                          drip.Event
		body                        []byte
		secretErr                   bool
	}{
		{"not http", "ftp://hooks.example.com/", testSecret, "d1", ev, body, false},
		{"no host", "https:///drip", testSecret, "d1", ev, body, false},
		{"not a URL", "https://hooks example.com/%zz", testSecret, "d1", ev, body, false},
		{"no delivery id", "https://hooks.example.com/", testSecret, "", ev, body, false},
		{"a delivery id that could split a header", "https://hooks.example.com/", testSecret, "d1\r\nX-Evil: 1", ev, body, false},
		{"another event's body", "https://hooks.example.com/", testSecret, "d1", other, body, false},
		{"the body under another type", "https://hooks.example.com/", testSecret, "d1", failed, body, false},
		{"no body", "https://hooks.example.com/", testSecret, "d1", ev, nil, false},
		{"secret without whsec_", "https://hooks.example.com/", strings.TrimPrefix(testSecret, "whsec_"), "d1", ev, body, true},
		{"secret not base64", "https://hooks.example.com/", "whsec_not*base64", "d1", ev, body, true},
		{"secret of 8 bytes", "https://hooks.example.com/", "whsec_" + base64.StdEncoding.EncodeToString([]byte("8 bytes!")), "d1", ev, body, true},
	} {
		req, err := webhook.NewRequest(t.Context(), tc.url, tc.secret, tc.delivery, tc.ev, tc.body, sentAt)
		if err == nil || req != nil {
			t.Errorf("%s: request made", tc.name)
			continue
		}
		if tc.secretErr != errors.Is(err, webhook.ErrSecret) {
			t.Errorf("%s: %v; ErrSecret %v", tc.name, err, tc.secretErr)
		}
		if tc.secretErr && strings.Contains(err.Error(), strings.TrimPrefix(tc.secret, "whsec_")) {
			t.Errorf("%s: error %q shows the secret", tc.name, err)
		}
	}
}

// TestNewSecret: whsec_ and the base64 of 32 bytes, new each time, and
// usable by both signatures.
func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b {
		t.Errorf("two new secrets are equal: %s", a)
	}
	for _, s := range []string{a, b} {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, webhook.SecretPrefix))
		if !strings.HasPrefix(s, "whsec_") || err != nil || len(key) != 32 || bytes.Equal(key, make([]byte, 32)) {
			t.Errorf("secret %q: want whsec_ and the base64 of 32 random bytes (%v)", s, err)
		}
		if _, err := webhook.StandardSignature(s, "evt_1", sentAt, []byte("{}")); err != nil {
			t.Errorf("secret %q does not sign: %v", s, err)
		}
	}
}

// receiver is an endpoint that checks both header sets with the Go client
// package, as a receiver would, and keeps what it saw.
type receiver struct {
	secret string
	now    func() time.Time

	mu       sync.Mutex
	bodies   []string
	refusals []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	errHex := client.VerifySignature(rc.secret, body, r.Header.Get("X-Service-Signature"))
	errStd := client.VerifyStandard(rc.secret, body, r.Header, rc.now(), 5*time.Minute)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if errHex != nil || errStd != nil {
		rc.refusals = append(rc.refusals, "hex: "+errString(errHex)+"; standard: "+errString(errStd))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.bodies = append(rc.bodies, string(body))
	w.WriteHeader(http.StatusNoContent)
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestRoundTrip sends requests from NewRequest to a local receiver that
// verifies them with the client package: the genuine one verifies on both
// header sets; a tampered body, a tampered timestamp, a replay after the
// tolerance and another secret are refused, each by the checks it should
// fail.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	ev := sentEvent()
	body, err := webhook.Body(ev)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Truncate(time.Second)

	for _, tc := range []struct {
		name        string
		receiverKey string
		receivedAt  time.Time
		tamper      func(r *http.Request)
		status      int
		refusal     string // what the receiver's checks said, when refused
	}{
		{"as sent", secret, at.Add(2 * time.Second), nil, http.StatusNoContent, ""},
		{"a byte of the body changed", secret, at, func(r *http.Request) {
			altered := bytes.Replace(body, []byte(`"amount":1000`), []byte(`"amount":9000`), 1)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(altered)), int64(len(altered))
		}, http.StatusUnauthorized, "hex: webhook signature does not verify; standard: webhook signature does not verify"},
		{"timestamp moved a minute on", secret, at, func(r *http.Request) {
			r.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix()+60, 10))
		}, http.StatusUnauthorized, "hex: ok; standard: webhook signature does not verify"},
		{"replayed 6 minutes later", secret, at.Add(6 * time.Minute), nil, http.StatusUnauthorized,
			"hex: ok; standard: webhook signature does not verify: timestamp outside the tolerance"},
		{"receiver holds another secret", webhook.NewSecret(), at, nil, http.StatusUnauthorized,
			"hex: webhook signature does not verify; standard: webhook signature does not verify"},
	} {
		rc := &receiver{secret: tc.receiverKey, now: func() time.Time { return tc.receivedAt }}
		srv := httptest.NewServer(rc)
		req, err := webhook.NewRequest(t.Context(), srv.URL+"/hooks", secret, "dlv_1", ev, body, at)
		if err != nil {
			t.Fatal(err)
		}
		if tc.tamper != nil {
			tc.tamper(req)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != tc.status || !webhook.Success(resp.StatusCode) != (tc.status != http.StatusNoContent) {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		switch {
		case tc.refusal == "" && (len(rc.bodies) != 1 || rc.bodies[0] != string(body)):
			t.Errorf("%s: received %q, refused %q; want the body verified once", tc.name, rc.bodies, rc.refusals)
		case tc.refusal != "" && (len(rc.refusals) != 1 || rc.refusals[0] != tc.refusal || len(rc.bodies) != 0):
			t.Errorf("%s: refused %q, received %q; want refused as %q", tc.name, rc.refusals, rc.bodies, tc.refusal)
		}
	}
}

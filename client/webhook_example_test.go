package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/client"
)

// receiver is a webhook endpoint: it reads the raw body, verifies it
// before decoding anything, answers 401 when it does not verify, and
// handles each event once however often it is delivered.
type receiver struct {
	secret string // the endpoint's signing secret, shown once by drip

	mu   sync.Mutex
	seen map[string]bool // event ids handled; a table with a unique key in a real service
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)) // the raw bytes, as signed
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	// VerifyStandard also refuses a recorded delivery replayed later;
	// client.VerifySignature(rc.secret, body, r.Header.Get(client.SignatureHeader))
	// checks X-Service-Signature alone.
	if err := client.VerifyStandard(rc.secret, body, r.Header, time.Now(), client.DefaultTolerance); err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev client.WebhookEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	dup := rc.seen[ev.ID]
	rc.seen[ev.ID] = true
	rc.mu.Unlock()
	if dup { // delivered again (a lost reply, a resend): acknowledge, do nothing
		fmt.Println(ev.ID, "again: acknowledged, not handled twice")
		return
	}
	if sent, err := ev.PayoutSent(); err == nil {
		fmt.Printf("%s: %d %s paid to %s (payout %s)\n", ev.ID, sent.Amount, sent.Currency, sent.To, sent.PayoutID)
	}
	w.WriteHeader(http.StatusNoContent)
}

// A webhook receiver verifies the Standard Webhooks signature on the raw
// body (spec 6.1), answers 401 to a forged, altered or replayed delivery,
// and dedupes on the event id (D52: delivery is at least once).
func ExampleVerifyStandard() {
	secret := "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	srv := httptest.NewServer(&receiver{secret: secret, seen: map[string]bool{}})
	defer srv.Close()

	body := `{"id":"evt_1","event":"payout.sent","faucet_id":1,"created_at":1773500966,` +
		`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"1","payout_user_hash":"c54b","message":"Payout sent."}}`
	// deliver POSTs sent with the headers drip sends with body, signed
	// with key at ts.
	deliver := func(what, key, sent string, ts time.Time) {
		sig, err := client.SignStandard(key, "evt_1", ts, []byte(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(sent))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(client.StandardIDHeader, "evt_1")
		req.Header.Set(client.StandardTimestampHeader, strconv.FormatInt(ts.Unix(), 10))
		req.Header.Set(client.StandardSignatureHeader, sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(what+":", resp.StatusCode)
	}

	now := time.Now()
	deliver("delivered", secret, body, now)
	deliver("delivered again", secret, body, now.Add(time.Second))
	deliver("amount altered", secret, strings.Replace(body, "1000", "9000", 1), now)
	deliver("signed with another secret", "whsec_"+strings.Repeat("A", 43)+"=", body, now)
	deliver("replayed an hour later", secret, body, now.Add(-time.Hour))

	// Errors a handler can tell apart, if it wants to log why.
	err := client.VerifyStandard(secret, []byte(body), http.Header{}, now, 0)
	fmt.Println(errors.Is(err, client.ErrBadSignature))
	// Output:
	// evt_1: 1000 BTC paid to bob (payout 1)
	// delivered: 204
	// evt_1 again: acknowledged, not handled twice
	// delivered again: 200
	// amount altered: 401
	// signed with another secret: 401
	// replayed an hour later: 401
	// true
}

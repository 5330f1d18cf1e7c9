package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/user"
)

// A faucet pays a user who claimed. The first attempt meets a database
// that does not answer in time (drip says 503 unavailable, Retry-After
// 1); Send waits and tries again with the same idempotency key. Sending
// the same claim again pays nothing: drip answers the first payout.
func ExampleClient_Send() {
	baseURL, sendKey, stop := startDrip()
	defer stop()

	c, err := client.New(baseURL, sendKey)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// One key per claim, stored with the claim before sending, so that a
	// retry after a crash reuses it too.
	claim := client.SendRequest{IdempotencyKey: "claim-1001", To: "bob", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.7"}
	res, err := c.Send(ctx, claim)
	var refused *client.Error
	switch {
	case errors.As(err, &refused) && refused.Code == client.CodeInsufficientBalance:
		log.Fatal("the faucet needs a deposit")
	case err != nil:
		log.Fatal(err) // a *client.SendError: retry later with its IdempotencyKey
	}
	fmt.Printf("paid payout %d after %d attempts; balance %s BTC\n", res.PayoutID, res.Attempts, res.BalanceBitcoin)

	again, err := c.Send(ctx, claim)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the same claim again: payout %d, replayed %v\n", again.PayoutID, again.Replayed)
	// Output:
	// paid payout 1 after 2 attempts; balance 0.09999 BTC
	// the same claim again: payout 1, replayed true
}

// A webhook receiver verifies the raw body before reading it (spec 6.1).
func ExampleParseWebhook() {
	secret := []byte("whsec_example")
	receive := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		ev, err := client.ParseWebhook(secret, body, r.Header.Get(client.SignatureHeader))
		if errors.Is(err, client.ErrBadSignature) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		} else if err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		if ev.Event == client.EventPayoutSent {
			sent, err := ev.PayoutSent()
			if err != nil {
				http.Error(w, "bad event", http.StatusBadRequest)
				return
			}
			fmt.Printf("%s: %d %s to %s\n", ev.ID, sent.Amount, sent.Currency, sent.To)
		}
	}

	body := `{"id":"evt_1","event":"payout.sent","faucet_id":1,"created_at":1773500966,"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"1","payout_user_hash":"c54b","message":"Payout sent."}}`
	for _, signature := range []string{client.SignWebhook(secret, []byte(body)), client.SignWebhook([]byte("guess"), []byte(body))} {
		r := httptest.NewRequest(http.MethodPost, "/hooks/drip", strings.NewReader(body))
		r.Header.Set(client.SignatureHeader, signature)
		w := httptest.NewRecorder()
		receive(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// evt_1: 1000 BTC to bob
	// 200
	// 401
}

// startDrip runs drip on a temporary SQLite database with a faucet holding
// 0.1 BTC, a user bob, and a send key, and returns the server's URL, the
// key, and how to stop it. Its first send is answered as drip answers when
// its database stalls.
func startDrip() (baseURL, sendKey string, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "drip-example-")
	must(err)
	st, err := sqlite.Open(ctx, filepath.Join(dir, "drip.db"))
	must(err)
	a, err := app.New(ctx, st, app.Options{})
	must(err)
	owner, err := a.Users.Create(ctx, user.CreateParams{Username: "owner", Email: "owner@example.com", Verified: true})
	must(err)
	_, err = a.Users.Create(ctx, user.CreateParams{Username: "bob", Email: "bob@example.com", Verified: true})
	must(err)
	f, _, err := a.Faucets.Create(ctx, faucet.CreateParams{OwnerID: owner.ID, Name: "Example", Domain: "faucet.example.com", URL: "https://faucet.example.com/"})
	must(err)
	_, err = a.Ledger.Deposit(ctx, f, "BTC", 10_000_000)
	must(err)
	_, sendKey, err = a.Keys.Mint(ctx, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}})
	must(err)

	var sends atomic.Int64
	h := a.Handler(app.HandlerOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v2/send" && sends.Add(1) == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"success":false,"status":503,"message":"The service is busy; nothing was done. Retry in a few seconds.","data":null,"error":{"code":"unavailable","v1_status":459}}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return srv.URL, sendKey, func() {
		srv.Close()
		a.Close()
		st.Close()
		os.RemoveAll(dir)
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

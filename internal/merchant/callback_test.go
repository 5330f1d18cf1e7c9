package merchant_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// ipn is a merchant's callback handler on this machine: it keeps each
// callback's form and answers as told (200 when answer is nil).
type ipn struct {
	*httptest.Server
	mu     sync.Mutex
	got    []url.Values
	answer func(n int, w http.ResponseWriter)
}

func newIPN(t *testing.T) *ipn {
	h := &ipn{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		h.mu.Lock()
		h.got = append(h.got, form)
		n, answer := len(h.got), h.answer
		h.mu.Unlock()
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "not a form", http.StatusUnsupportedMediaType)
			return
		}
		if answer != nil {
			answer(n, w)
			return
		}
		w.Write([]byte("OK"))
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *ipn) forms() []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]url.Values(nil), h.got...)
}

// paidCheckout is a checkout of the shop paid by its buyer, with its
// callback to h, and a callback worker on the env's clock.
func paidCheckout(t *testing.T, eng storetest.Engine, h *ipn) (*apptest.Env, *merchant.Service, *merchant.CallbackWorker, *merchant.Checkout) {
	t.Helper()
	st := eng.Open(t)
	env := apptest.New(t, st, apptest.Options{})
	opts := safehttp.Options{AllowInsecure: true, Timeout: 300 * time.Millisecond}
	svc, err := merchant.New(t.Context(), merchant.Deps{Store: st, Users: env.App.Users, Coins: env.App.Coins,
		Prices: price.Static(map[string]decimal.Decimal{"BTC": decimal.RequireFromString("65000")}, "static", env.Clock.Now),
		HTTP:   opts, Now: env.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	env.User(t, "shop")
	buyer := env.User(t, "buyer")
	if _, err := env.App.Ledger.DepositTo(t.Context(), buyer.AccountID, "BTC", 1_000_000, nil); err != nil {
		t.Fatal(err)
	}
	c, err := svc.Create(t.Context(), form("callback_url", h.URL+"/ipn"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Quote(t.Context(), c.PublicID, "BTC"); err != nil {
		t.Fatal(err)
	}
	if c, err = svc.Pay(t.Context(), c.PublicID, buyer, "BTC", 30_754); err != nil {
		t.Fatal(err)
	}
	w := merchant.NewCallbackWorker(merchant.CallbackWorkerConfig{Store: st, Service: svc,
		Client: safehttp.NewClient(svc.ClientOptions()), Now: env.Clock.Now})
	return env, svc, w, c
}

// D55 with an injected clock: a receiver answering 500, timing out, 204
// (not 200) and then 200 gets exactly the attempts of the schedule, each
// logged; the seventh failure ends it; resend starts again.
func TestCallbackSchedule(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			h := newIPN(t)
			h.answer = func(n int, w http.ResponseWriter) {
				switch n {
				case 1:
					http.Error(w, "db down", http.StatusInternalServerError)
				case 2:
					time.Sleep(time.Second) // past the client's timeout
				case 3:
					w.WriteHeader(http.StatusNoContent) // a 2xx, but not 200
				default:
					w.Write([]byte("OK"))
				}
			}
			env, svc, w, c := paidCheckout(t, eng, h)
			run := func() int {
				t.Helper()
				n, err := w.RunOnce(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			gaps := []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute}
			for i, gap := range gaps {
				if n := run(); n != 1 {
					t.Fatalf("attempt %d: claimed %d", i+1, n)
				}
				env.Clock.Advance(gap - time.Second)
				if n := run(); n != 0 {
					t.Errorf("a second before the gap of %v ends: claimed %d", gap, n)
				}
				env.Clock.Advance(time.Second)
			}
			if n := run(); n != 1 {
				t.Fatal("fourth attempt not made")
			}
			_, d, attempts, err := svc.Callback(t.Context(), c.MerchantID, c.PublicID)
			if err != nil {
				t.Fatal(err)
			}
			if d.State != store.DeliveryDelivered || len(attempts) != 4 || attempts[2].Status != 204 || attempts[2].Error == "" || attempts[3].Status != 200 {
				t.Fatalf("after the 200: %+v, attempts %+v", d, attempts)
			}
			for _, a := range attempts {
				t.Logf("attempt %d at +%v: HTTP %d %s", a.N, a.At.Sub(attempts[0].At), a.Status, a.Error)
			}
			for i, want := range []time.Duration{0, 5 * time.Minute, 20 * time.Minute, 50 * time.Minute} {
				if got := attempts[i].At.Sub(attempts[0].At); got != want {
					t.Errorf("attempt %d made %v after the first, want %v (D55)", i+1, got, want)
				}
			}
			forms := h.forms()
			if len(forms) != 4 || forms[3].Get("token") == "" || forms[3].Get("transaction_id") != forms[0].Get("transaction_id") ||
				forms[3].Get("amount2") != "0.00030754" || forms[3].Get("custom") != "order-42" || forms[3].Get("exchange_rate") == "" {
				t.Errorf("callback forms %v", forms)
			}
			if v, err := svc.Verify(t.Context(), forms[3].Get("token")); err != nil || !v.Valid {
				t.Errorf("the callback's token does not verify: %+v, %v", v, err)
			}
			// Resend: one more attempt, the log's numbering kept.
			if err := svc.ResendCallback(t.Context(), c.MerchantID, c.PublicID); err != nil {
				t.Fatal(err)
			}
			if err := svc.ResendCallback(t.Context(), c.MerchantID, c.PublicID); err == nil {
				t.Error("resending a pending callback: no error")
			}
			if err := svc.ResendCallback(t.Context(), c.MerchantID+1, c.PublicID); err == nil {
				t.Error("another user resent the merchant's callback")
			}
			run()
			if _, _, attempts, _ := svc.Callback(t.Context(), c.MerchantID, c.PublicID); len(attempts) != 5 || attempts[4].N != 5 {
				t.Errorf("after the resend: %+v", attempts)
			}
		})
	}
}

// Seven failures end the callback; verifying the token before that
// stops the attempts (D55).
func TestCallbackEndsAfterSevenOrAtVerification(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			h := newIPN(t)
			h.answer = func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }
			env, svc, w, c := paidCheckout(t, eng, h)
			for i := range merchant.CallbackAttempts {
				if n, err := w.RunOnce(t.Context()); err != nil || n != 1 {
					t.Fatalf("attempt %d: %d, %v", i+1, n, err)
				}
				env.Clock.Advance(4 * time.Hour)
			}
			_, d, attempts, _ := svc.Callback(t.Context(), c.MerchantID, c.PublicID)
			if d.State != store.DeliveryFailed || len(attempts) != merchant.CallbackAttempts {
				t.Errorf("after seven failures: %+v, %d attempts", d, len(attempts))
			}
			if n, _ := w.RunOnce(t.Context()); n != 0 {
				t.Errorf("an eighth attempt was claimed")
			}

			// Another payment, verified after its first failed attempt.
			h2 := newIPN(t)
			h2.answer = h.answer
			env2, svc2, w2, c2 := paidCheckout(t, eng, h2)
			w2.RunOnce(t.Context())
			token := h2.forms()[0].Get("token")
			if v, err := svc2.Verify(t.Context(), token); err != nil || !v.Valid {
				t.Fatalf("verify: %+v, %v", v, err)
			}
			env2.Clock.Advance(time.Hour)
			if n, _ := w2.RunOnce(t.Context()); n != 0 {
				t.Errorf("a verified payment's callback was tried again")
			}
			if _, d, _, _ := svc2.Callback(t.Context(), c2.MerchantID, c2.PublicID); d.State != store.DeliveryDelivered {
				t.Errorf("after verification the callback is %s, want delivered", d.State)
			}
		})
	}
}

// Merchant callbacks under kill -9 (issue 13, D50, D55, D56): drip serve,
// the real binary, delivers the callbacks of checkouts paid while it runs
// to a merchant's receiver on this machine (--webhook-allow-insecure
// admits its http and loopback URL), and is killed again and again with
// callbacks in flight. The checkouts are created, quoted and paid through
// merchant.Service against the same database, from this process, as the
// hosted page would: paying writes the callback's outbox row in the
// payment's own transaction, so a payment committed before a crash has
// its callback pending after it, whichever side of the crash the payment
// fell on.
//
// The callback worker's claim holds its rows for the hidden
// --webhook-lease (it serves both kinds of the outbox), 3 s here, so the
// callbacks a killed server had claimed come back within the test.
//
// TestCallbackKill kills the server 8 times on each engine;
// DRIP_CALLBACK_KILLS sets another number:
//
//	DRIP_CALLBACK_KILLS=8 \
//	DRIP_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' \
//	go test -run TestCallbackKill -count=1 -v ./cmd/drip/
//
// Each engine logs a CALLBACK line: the checkouts paid, the kills and the
// callbacks in flight at each, the callbacks the receiver counted, the
// duplicates among them, the attempts drip recorded, and how the tokens
// were verified.
//
// TestCallbackVerifiedInFlight is a merchant's handler that verifies the
// token while its callback is in flight, then answers 500: the callback
// stays acknowledged (the record of that attempt found it no longer
// pending), and is not tried again.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

const (
	// callbackCheckouts is how many checkouts each run pays.
	callbackCheckouts = 300
	// callbackBuyers pay them in turn.
	callbackBuyers = 10
	// callbackPace is the least time between two payments: a share of
	// them (callbackCheckouts over the kills) takes about a second.
	callbackPace = 25 * time.Millisecond
	// callbackDelay is how long the merchant's receiver takes to answer,
	// so that callbacks are in flight when the server is killed.
	callbackDelay = 10 * time.Millisecond
	// callbackDeposit is each buyer's balance of each coin they pay with.
	callbackDeposit = 1_000 * 100_000_000
)

// callbackFields are the fields of a callback (spec 2.9, 6.2).
var callbackFields = []string{"token", "transaction_id", "merchant_username", "payer_username",
	"amount1", "currency1", "amount2", "currency2", "custom", "exchange_rate"}

// TestCallbackKill pays checkouts while drip serve delivers their
// callbacks, kills the server (SIGKILL) with callbacks in flight and
// starts it again, on each engine; after the last restart the callbacks'
// outbox drains. Promises (D50, D55, D56): a paid checkout's callback is
// committed with its payment and recorded only after it was made, so no
// crash loses one: every paid checkout's callback reaches the merchant at
// least once (one the crash cut before its record is made again: a
// duplicate, counted and logged), each with every field of the payment
// and the same fields every time; each token verifies exactly once
// (GET /merchant/get-payment/{token} when the server has the route, else
// merchant.Service.Verify on the database); the ledger reconciles, the
// merchant holding what the buyers paid.
func TestCallbackKill(t *testing.T) {
	kills := envCount(t, "DRIP_CALLBACK_KILLS", 8)
	onEachEngine(t, func(t *testing.T, engine faultEngine) {
		runCallbackKill(t, engine.name, engine.open(t), kills)
	})
}

func runCallbackKill(t *testing.T, engine string, db *faultDB, kills int) {
	began := time.Now()
	rc := startCallbackReceiver(t, callbackDelay)
	shop := newCallbackShop(t, db)
	node := startFaultNode(t, webhookServeArgs(db.serveArgs, "--webhook-lease", webhookTestLease.String())...)

	// The payments, from this process, while the server is killed and
	// started again: on SQLite through the same file (WAL, a busy
	// timeout), on PostgreSQL directly, not through the fault proxy.
	var (
		paid     []*callbackPaid
		inFlight []int64 // callbacks the receiver held at each kill
		payTook  time.Duration
	)
	db.use(t, func(st store.Store) {
		a := callbackApp(t, st)
		defer a.Close()
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		defer func() { stop(); <-done }() // also when a restart fails the test
		// The payments come in shares, one before each kill, paid at a
		// steady pace so that callbacks are in flight at every kill
		// however long a restart takes; a share goes on being paid while
		// the server is down.
		var allowed atomic.Int64
		go func() {
			defer close(done)
			start := time.Now()
			paid = shop.pay(ctx, t, a.Merchant, rc.srv.URL, &allowed)
			payTook = time.Since(start)
		}()
		for k := range kills {
			allowed.Store(int64(callbackCheckouts * (k + 1) / kills))
			time.Sleep(jitter(300*time.Millisecond, 1000*time.Millisecond))
			n := rc.waitInFlight(3 * time.Second)
			node.kill()
			inFlight = append(inFlight, n)
			node.start(t)
		}
		<-done
	})
	if t.Failed() {
		t.FailNow()
	}

	// The last restart is running: it delivers what is left, the claims
	// of the last killed process once their lease has run out.
	drained := waitOutboxDrained(t, node.base, "callbacks", drainWithin)
	verified := verifyCallbackTokens(t, db, node, rc)
	if node.proc != nil {
		node.stop(t)
	}
	c := checkCallbacks(t, db, shop, rc, paid)
	if rep := runAdmin(t, db.directArgs, "reconcile"); rep["ok"] != true {
		t.Errorf("drip admin reconcile: %v", rep)
	}
	var cannot []string
	for _, line := range node.errorLines(1 << 20) {
		if strings.Contains(line, "cannot be made") {
			cannot = append(cannot, line)
		}
	}
	if len(cannot) > 0 {
		t.Errorf("%d callbacks could not be made (failed at once); the first:\n  %s", len(cannot), strings.Join(cannot[:min(5, len(cannot))], "\n  "))
	}

	checkKillsCaught(t, "callbacks", inFlight, c.duplicates)
	if t.Failed() {
		if lines := node.errorLines(40); len(lines) > 0 {
			t.Logf("drip serve's error log lines (the first %d):\n%s", len(lines), strings.Join(lines, "\n"))
		}
	}
	t.Logf("CALLBACK %s/callback kill | checkouts paid %d in %s | kills %d, callbacks in flight at each %v | %s | tokens verified %s | drained %s after the final restart | run %s",
		engine, len(paid), payTook.Round(100*time.Millisecond), kills, inFlight, c, verified, drained.Round(100*time.Millisecond),
		time.Since(began).Round(100*time.Millisecond))
}

// callbackApp is the services over st, as drip serve builds them with
// --webhook-allow-insecure: the receiver's loopback http URL is admitted.
func callbackApp(t *testing.T, st store.Store) *app.App {
	t.Helper()
	a, err := app.New(context.Background(), st, app.Options{Webhooks: safehttp.Options{AllowInsecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// callbackShop is a merchant and the buyers who pay it, each funded in
// every coin they pay with.
type callbackShop struct {
	merchant *drip.User
	buyers   []*drip.User
}

// callbackCoins are the coins the buyers hold and pay with.
var callbackCoins = []string{"BTC", "DOGE"}

func newCallbackShop(t *testing.T, db *faultDB) *callbackShop {
	t.Helper()
	s := &callbackShop{}
	db.use(t, func(st store.Store) {
		ctx := context.Background()
		a := callbackApp(t, st)
		defer a.Close()
		var err error
		if s.merchant, err = a.Users.Create(ctx, user.CreateParams{Username: "shop", Email: "shop@example.com", Verified: true}); err != nil {
			t.Fatal(err)
		}
		for i := range callbackBuyers {
			name := fmt.Sprintf("buyer%02d", i)
			u, err := a.Users.Create(ctx, user.CreateParams{Username: name, Email: name + "@example.com", Verified: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, coin := range callbackCoins {
				if _, err := a.Ledger.DepositTo(ctx, u.AccountID, coin, callbackDeposit, nil); err != nil {
					t.Fatal(err)
				}
			}
			s.buyers = append(s.buyers, u)
		}
	})
	return s
}

// callbackPaid is a checkout the test paid, as Pay answered it.
type callbackPaid struct {
	checkout *store.Checkout
	buyer    *drip.User
}

// checkoutForm is the payment form of checkout i: priced in a coin and
// paid in it, priced in USD, or priced in one coin and paid in another;
// custom names the checkout and carries what a form encoding must keep.
func checkoutForm(i int, receiver string) (form url.Values, coin string) {
	form = url.Values{"merchant_username": {"shop"}, "item_description": {fmt.Sprintf("Ad slot #%d <b>premium</b>", i)},
		"custom": {fmt.Sprintf("order-%04d & x=1+1;ü %%20", i)}, "callback_url": {receiver + "/ipn?site=shop"},
		"success_url": {"https://shop.example.com/thanks"}, "cancel_url": {"https://shop.example.com/cart"}, "submit": {"Pay"}}
	switch i % 3 {
	case 0:
		form.Set("amount1", "0.00012345")
		form.Set("currency1", "btc")
		form.Set("currency2", "BTC")
		coin = "BTC"
	case 1:
		form.Set("amount1", "1.99")
		form.Set("currency1", "usd")
		form.Set("currency2", "doge")
		coin = "DOGE"
	default:
		form.Set("amount1", "250")
		form.Set("currency1", "DOGE")
		coin = "BTC" // the buyer's choice: currency2 left blank
	}
	return form, coin
}

// pay creates, quotes and pays callbackCheckouts checkouts, a buyer each
// in turn, one every callbackPace at most, checkout i once allowed is
// above i, and returns the paid ones. A payment that fails fails the
// test.
func (s *callbackShop) pay(ctx context.Context, t *testing.T, svc *merchant.Service, receiver string, allowed *atomic.Int64) []*callbackPaid {
	var (
		mu   sync.Mutex
		paid []*callbackPaid
		next atomic.Int64
		wg   sync.WaitGroup
	)
	pace := time.NewTicker(callbackPace)
	defer pace.Stop()
	for range 3 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < callbackCheckouts && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				for int64(i) >= allowed.Load() && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				select {
				case <-pace.C:
				case <-ctx.Done():
					return // the test ended early
				}
				buyer := s.buyers[i%len(s.buyers)]
				form, coin := checkoutForm(i, receiver)
				c, err := svc.Create(ctx, form)
				if err == nil {
					c, err = svc.Quote(ctx, c.PublicID, coin)
				}
				if err == nil {
					c, err = svc.Pay(ctx, c.PublicID, buyer, c.Quote.Coin, c.Quote.Amount)
				}
				if err != nil {
					t.Errorf("checkout %d: %v", i, err)
					continue
				}
				mu.Lock()
				paid = append(paid, &callbackPaid{checkout: c, buyer: buyer})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return paid
}

// callbackReceiver is a merchant's callback handler: it counts the
// callbacks of each token, checks that each has every field and that a
// callback made again carries the same ones, and answers 200 after its
// delay.
type callbackReceiver struct {
	srv      *httptest.Server
	delay    time.Duration
	inFlight atomic.Int64 // callbacks counted and not yet answered

	mu    sync.Mutex
	got   map[string]*callbackReceipt // by token
	total int                         // callbacks counted
	bad   []string                    // callbacks malformed, or unlike an earlier one of their token
}

// callbackReceipt is what the receiver got of one payment's callback.
type callbackReceipt struct {
	form  url.Values // the first
	n     int        // callbacks
	first time.Time
}

func startCallbackReceiver(t *testing.T, delay time.Duration) *callbackReceiver {
	rc := &callbackReceiver{delay: delay, got: map[string]*callbackReceipt{}}
	rc.srv = httptest.NewServer(rc)
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *callbackReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var problem string
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/ipn" || r.URL.Query().Get("site") != "shop":
		problem = fmt.Sprintf("%s %s, want POST /ipn?site=shop", r.Method, r.URL)
	case r.Header.Get("Content-Type") != "application/x-www-form-urlencoded":
		problem = fmt.Sprintf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the sender went away before the body was whole: nothing was delivered
	}
	form, err := url.ParseQuery(string(body))
	if problem == "" && err != nil {
		problem = fmt.Sprintf("the body is not a form: %v", err)
	}
	if problem == "" {
		for _, f := range callbackFields {
			if len(form[f]) != 1 || form.Get(f) == "" {
				problem = fmt.Sprintf("field %s is %q, want one value", f, form[f])
				break
			}
		}
	}
	if problem == "" && len(form) != len(callbackFields) {
		problem = fmt.Sprintf("%d fields, want the %d of spec 2.9", len(form), len(callbackFields))
	}
	token := form.Get("token")
	rc.mu.Lock()
	if problem == "" {
		rcpt := rc.got[token]
		if rcpt == nil {
			rcpt = &callbackReceipt{form: form, first: time.Now()}
			rc.got[token] = rcpt
		} else if !equalForms(rcpt.form, form) {
			problem = fmt.Sprintf("a callback of a token called back before, with other fields (first %v)", rcpt.form)
		}
		rcpt.n++
		rc.total++
	}
	if problem != "" {
		rc.bad = append(rc.bad, fmt.Sprintf("%s: %.400s", problem, body))
	}
	rc.mu.Unlock()
	if problem != "" {
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	rc.inFlight.Add(1)
	defer rc.inFlight.Add(-1)
	time.Sleep(rc.delay)
	io.WriteString(w, "OK")
}

func equalForms(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// waitInFlight waits, up to within, until the receiver holds a callback,
// and returns how many it holds.
func (rc *callbackReceiver) waitInFlight(within time.Duration) int64 {
	for deadline := time.Now().Add(within); ; time.Sleep(time.Millisecond) {
		if n := rc.inFlight.Load(); n > 0 || time.Now().After(deadline) {
			return n
		}
	}
}

// receipts is a copy of what the receiver got, by token.
func (rc *callbackReceiver) receipts() (map[string]callbackReceipt, int, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := make(map[string]callbackReceipt, len(rc.got))
	for token, r := range rc.got {
		got[token] = *r
	}
	return got, rc.total, slices.Clone(rc.bad)
}

// getPaymentPath is the route a merchant verifies a token at (D56).
const getPaymentPath = "/merchant/get-payment/"

// hasGetPayment reports whether drip serve at base has the verification
// route: a malformed token is answered valid: false in JSON.
func hasGetPayment(base string) bool {
	resp, err := (&http.Client{Timeout: clientTimeout}).Get(base + getPaymentPath + "not-a-token")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var p map[string]any
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&p) != nil {
		return false
	}
	valid, ok := p["valid"].(bool)
	return ok && !valid
}

// verifyCallbackTokens verifies the token of every callback received,
// twice at once and once more after, through the route when the server
// has it (it must be running), else through merchant.Service.Verify on
// the database (the server stopped first, for SQLite): exactly one of the
// three is valid, with the callback's fields (D56). It says how it
// verified and how many.
func verifyCallbackTokens(t *testing.T, db *faultDB, node *faultNode, rc *callbackReceiver) string {
	t.Helper()
	got, _, _ := rc.receipts()
	if !hasGetPayment(node.base) {
		node.stop(t)
		db.use(t, func(st store.Store) {
			a := callbackApp(t, st)
			defer a.Close()
			verifyAll(t, got, a.Merchant.Verify)
		})
		return fmt.Sprintf("%d through merchant.Service.Verify (drip serve has no %s route)", len(got), getPaymentPath)
	}
	hc := &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	verifyAll(t, got, func(ctx context.Context, token string) (*merchant.Payment, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, node.base+getPaymentPath+url.PathEscape(token), nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, raw)
		}
		var p merchant.Payment
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("%w: %s", err, raw)
		}
		return &p, nil
	})
	return fmt.Sprintf("%d through GET %s{token}", len(got), getPaymentPath)
}

// verifyAll verifies each token of got twice at once, then once more.
func verifyAll(t *testing.T, got map[string]callbackReceipt, verify func(ctx context.Context, token string) (*merchant.Payment, error)) {
	t.Helper()
	ctx := context.Background()
	tokens := make(chan string)
	var (
		mu       sync.Mutex
		problems []string
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for token := range tokens {
				form := got[token].form
				var answers [3]*merchant.Payment
				var errs [3]error
				var pair sync.WaitGroup
				for i := range 2 {
					pair.Go(func() { answers[i], errs[i] = verify(ctx, token) })
				}
				pair.Wait()
				answers[2], errs[2] = verify(ctx, token)
				var valid []*merchant.Payment
				problem := ""
				for i, p := range answers {
					switch {
					case errs[i] != nil:
						problem = fmt.Sprintf("verification %d: %v", i+1, errs[i])
					case p.Valid:
						valid = append(valid, p)
					case *p != merchant.Payment{}:
						problem = fmt.Sprintf("verification %d is not valid yet tells the payment: %+v", i+1, *p)
					}
				}
				switch {
				case problem != "":
				case len(valid) != 1:
					problem = fmt.Sprintf("%d of 3 verifications valid (two at once, then one), want exactly 1; the third valid: %t", len(valid), answers[2].Valid)
				case answers[2].Valid:
					problem = "the third verification, after two, was the valid one"
				default:
					p := valid[0]
					want := merchant.Payment{Valid: true, TransactionID: form.Get("transaction_id"), MerchantUsername: form.Get("merchant_username"),
						PayerUsername: form.Get("payer_username"), Amount1: form.Get("amount1"), Currency1: form.Get("currency1"),
						Amount2: form.Get("amount2"), Currency2: form.Get("currency2"), Custom: form.Get("custom")}
					if *p != want {
						problem = fmt.Sprintf("verified as %+v, the callback said %+v", *p, want)
					}
				}
				if problem != "" {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("token of %q: %s", form.Get("custom"), problem))
					mu.Unlock()
				}
			}
		})
	}
	for token := range got {
		tokens <- token
	}
	close(tokens)
	wg.Wait()
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Errorf("a token that did not verify exactly once %d times; the first:\n  %s", len(problems), strings.Join(problems[:min(5, len(problems))], "\n  "))
	}
}

// callbackCounts is what checkCallbacks found.
type callbackCounts struct {
	paid                 int // checkouts paid, as the database has them
	received             int // callbacks the receiver counted
	duplicates, dupPaid  int // callbacks past each payment's first, and the payments they were of
	most                 int // the most callbacks of one payment
	attempts, recordedOK int // attempts drip recorded, and the successful ones among them
}

func (c callbackCounts) String() string {
	return fmt.Sprintf("callbacks received %d for %d payments, duplicates %d on %d payments (at most %d of one) | attempts recorded %d, successful %d; made but never recorded %d",
		c.received, c.paid, c.duplicates, c.dupPaid, c.most, c.attempts, c.recordedOK, c.received-c.recordedOK)
}

// checkCallbacks reads the database directly, no drip serve running on
// it, and holds the receiver's counts and the test's payments to it: the
// payments Pay answered are the merchant's paid checkouts; each has its
// callback delivered, reached the receiver at least once with the
// payment's fields, and its token verified; nothing else reached it; the
// merchant and each buyer hold what the payments moved.
func checkCallbacks(t *testing.T, db *faultDB, shop *callbackShop, rc *callbackReceiver, paid []*callbackPaid) callbackCounts {
	t.Helper()
	got, total, bad := rc.receipts()
	report := func(what string, problems []string) {
		t.Helper()
		if len(problems) > 0 {
			slices.Sort(problems)
			t.Errorf("%s %d times; the first:\n  %s", what, len(problems), strings.Join(problems[:min(len(problems), 5)], "\n  "))
		}
	}
	report("a callback malformed or unlike its earlier ones", bad)
	byCustom := map[string]callbackReceipt{}
	for _, r := range got {
		byCustom[r.form.Get("custom")] = r
	}

	c := callbackCounts{received: total}
	db.use(t, func(st store.Store) {
		ctx := context.Background()
		var stored []store.Checkout
		for before := int64(0); ; {
			page, err := st.CheckoutList(ctx, &store.CheckoutListParams{MerchantID: shop.merchant.ID, BeforeID: before, Limit: 200})
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, page...)
			if len(page) < 200 {
				break
			}
			before = page[len(page)-1].ID
		}
		answered := map[string]*callbackPaid{}
		for _, p := range paid {
			answered[p.checkout.PublicID] = p
		}
		buyers := map[int64]*drip.User{}
		for _, b := range shop.buyers {
			buyers[b.ID] = b
		}

		var unpaid, lost, wrong, outbox, dups []string
		held := map[int64]map[string]int64{} // what each account should hold: the merchant's and the buyers'
		for _, b := range shop.buyers {
			held[b.AccountID] = map[string]int64{}
			for _, coin := range callbackCoins {
				held[b.AccountID][coin] = callbackDeposit
			}
		}
		held[shop.merchant.AccountID] = map[string]int64{}
		for _, k := range stored {
			if k.State != store.CheckoutPaid {
				unpaid = append(unpaid, fmt.Sprintf("checkout %s (%q) is %s", k.PublicID, k.Custom, k.State))
				continue
			}
			c.paid++
			buyer := buyers[k.PayerID]
			if answered[k.PublicID] == nil || buyer == nil {
				unpaid = append(unpaid, fmt.Sprintf("checkout %s (%q) is paid by user %d and Pay did not answer it so", k.PublicID, k.Custom, k.PayerID))
				continue
			}
			delete(answered, k.PublicID)
			held[buyer.AccountID][k.Quote.Coin] -= k.Quote.Amount
			held[shop.merchant.AccountID][k.Quote.Coin] += k.Quote.Amount

			// The callback, as drip recorded it: delivered (by a 200 or by
			// the verification, which came after the outbox drained).
			d, err := st.CallbackGet(ctx, k.ID)
			if err != nil {
				outbox = append(outbox, fmt.Sprintf("checkout %q: its callback: %v", k.Custom, err))
				continue
			}
			c.attempts += d.Tries
			if d.State != store.DeliveryDelivered || d.Tries < 1 || d.LastStatus != http.StatusOK {
				outbox = append(outbox, fmt.Sprintf("checkout %q: callback %+v, want delivered by a 200", k.Custom, *d))
			}
			attempts, err := st.OutboxAttemptList(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range attempts {
				if a.Status == http.StatusOK {
					c.recordedOK++
				}
			}
			if k.VerifiedAt.IsZero() {
				outbox = append(outbox, fmt.Sprintf("checkout %q: its token was verified, yet the checkout has no verified_at", k.Custom))
			}

			// What the merchant received.
			r, ok := byCustom[k.Custom]
			if !ok {
				lost = append(lost, fmt.Sprintf("checkout %s (%q) paid at %s never called back; its callback: %+v", k.PublicID, k.Custom,
					k.PaidAt.Format("15:04:05.000"), *d))
				continue
			}
			want := url.Values{"token": r.form["token"], "transaction_id": {strconv.FormatInt(k.TransferID, 10)},
				"merchant_username": {shop.merchant.Username}, "payer_username": {buyer.Username},
				"amount1": {drip.FormatCoinsFixed(k.Amount1)}, "currency1": {k.Currency1},
				"amount2": {drip.FormatCoinsFixed(k.Quote.Amount)}, "currency2": {k.Quote.Coin},
				"custom": {k.Custom}, "exchange_rate": {k.Quote.Rate}}
			if !equalForms(r.form, want) {
				wrong = append(wrong, fmt.Sprintf("checkout %q: called back with %v, want %v", k.Custom, r.form, want))
			}
			if merchant.HashToken(r.form.Get("token")) != k.TokenHash {
				wrong = append(wrong, fmt.Sprintf("checkout %q: the callback's token is not the checkout's", k.Custom))
			}
			if r.n > 1 {
				c.duplicates += r.n - 1
				c.dupPaid++
				dups = append(dups, fmt.Sprintf("%q %d times (first at %s; drip recorded %d attempts)", k.Custom, r.n,
					r.first.Format("15:04:05.000"), d.Tries))
			}
			c.most = max(c.most, r.n)
		}
		for id, p := range answered {
			unpaid = append(unpaid, fmt.Sprintf("checkout %s (%q): Pay answered it paid, the database has no paid checkout", id, p.checkout.Custom))
		}
		if len(stored) != callbackCheckouts {
			unpaid = append(unpaid, fmt.Sprintf("the merchant has %d checkouts, the test made %d", len(stored), callbackCheckouts))
		}
		var stray []string
		paidCustom := map[string]bool{}
		for _, k := range stored {
			paidCustom[k.Custom] = k.State == store.CheckoutPaid
		}
		for custom, r := range byCustom {
			if !paidCustom[custom] {
				stray = append(stray, fmt.Sprintf("%q, %d callbacks", custom, r.n))
			}
		}
		report("a checkout not paid as Pay answered", unpaid)
		report("a payment lost: paid and never called back", lost)
		report("a callback whose fields are not the payment's", wrong)
		report("a callback not delivered in drip's outbox", outbox)
		report("a callback of no payment of the merchant", stray)
		if len(dups) > 0 {
			slices.Sort(dups)
			more := ""
			if len(dups) > 20 {
				more = fmt.Sprintf("\n  ... and %d more", len(dups)-20)
			}
			t.Logf("duplicate callbacks (at least once, D50): %d on %d payments:\n  %s%s", c.duplicates, c.dupPaid, strings.Join(dups[:min(20, len(dups))], "\n  "), more)
		}

		// The ledger: every payment moved its quote from its buyer to the
		// merchant, and nothing else moved.
		var balances []string
		for account, coins := range held {
			for _, coin := range callbackCoins {
				have, err := st.BalanceGet(ctx, account, coin)
				if err != nil {
					t.Fatal(err)
				}
				if have != coins[coin] {
					balances = append(balances, fmt.Sprintf("account %d holds %s %s, want %s", account, drip.FormatCoins(have), coin, drip.FormatCoins(coins[coin])))
				}
			}
		}
		report("a balance that is not what the payments moved", balances)
	})
	if c.received < c.recordedOK && len(bad) == 0 {
		t.Errorf("drip recorded %d successful attempts, the receiver counted %d callbacks: a success recorded for a callback not made", c.recordedOK, c.received)
	}
	return c
}

// TestCallbackVerifiedInFlight is a merchant's handler that does what the
// README asks of it, verifying the token before delivering the goods,
// and then fails to answer 200 (its own error after the verification: a
// 500). Promise (D55): verifying the token acknowledges the callback and
// stops its attempts, whenever it comes; one that comes while its
// callback is in flight must not be undone by that attempt's record.
func TestCallbackVerifiedInFlight(t *testing.T) {
	onEachEngine(t, func(t *testing.T, engine faultEngine) {
		db := engine.open(t)
		shop := newCallbackShop(t, db)
		node := startFaultNode(t, webhookServeArgs(db.serveArgs)...)
		const payments = 10
		var (
			mu       sync.Mutex
			calls    = map[string]int{}  // callbacks by custom
			verified = map[string]bool{} // a valid verification, by custom
			problems []string
		)
		db.use(t, func(st store.Store) {
			a := callbackApp(t, st)
			defer a.Close()
			verify := a.Merchant.Verify
			if hasGetPayment(node.base) {
				hc := &http.Client{Timeout: clientTimeout}
				verify = func(ctx context.Context, token string) (*merchant.Payment, error) {
					resp, err := hc.Get(node.base + getPaymentPath + url.PathEscape(token))
					if err != nil {
						return nil, err
					}
					defer resp.Body.Close()
					var p merchant.Payment
					return &p, json.NewDecoder(resp.Body).Decode(&p)
				}
			}
			ipn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := r.ParseForm(); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				custom := r.PostForm.Get("custom")
				p, err := verify(r.Context(), r.PostForm.Get("token"))
				mu.Lock()
				calls[custom]++
				switch {
				case err != nil:
					problems = append(problems, fmt.Sprintf("%q: verify: %v", custom, err))
				case p.Valid:
					verified[custom] = true
				}
				mu.Unlock()
				http.Error(w, "the shop's database is down", http.StatusInternalServerError)
			}))
			defer ipn.Close()
			// The checkouts are paid one after the other: each callback
			// is made, verified and answered 500 before the next.
			paid := shop.payN(t, a.Merchant, ipn.URL, payments)
			// Until every attempt, answered 500, is in the callbacks'
			// log: then the server has recorded what it made.
			ctx := context.Background()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				logged := 0
				for _, c := range paid {
					if d, err := st.CallbackGet(ctx, c.ID); err == nil {
						if as, err := st.OutboxAttemptList(ctx, d.ID); err == nil && len(as) > 0 {
							logged++
						}
					}
				}
				if logged == len(paid) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d callbacks' attempts logged within 10 s", logged, len(paid))
				}
			}
			node.stop(t)
			mu.Lock()
			defer mu.Unlock()
			var undone []string
			for _, c := range paid {
				d, err := st.CallbackGet(ctx, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				n, ok := calls[c.Custom], verified[c.Custom]
				if n != 1 || !ok {
					problems = append(problems, fmt.Sprintf("%q: %d callbacks, verified %t: want one, verified", c.Custom, n, ok))
				}
				if d.Tries != 1 {
					problems = append(problems, fmt.Sprintf("%q: its delivery counts %d attempts, its log 1", c.Custom, d.Tries))
				}
				if d.State != store.DeliveryDelivered {
					undone = append(undone, fmt.Sprintf("%q: verified in flight, yet its callback is %s, attempt %d of %d next at %s (last %d %q)",
						c.Custom, d.State, d.Attempts+1, merchant.CallbackAttempts, d.NextAttemptAt.Format(time.TimeOnly), d.LastStatus, d.LastError))
				}
			}
			if len(problems) > 0 {
				t.Errorf("the handler's callbacks: %s", strings.Join(problems, "; "))
			}
			if len(undone) > 0 {
				t.Errorf("%d of %d callbacks verified while in flight are pending again (D55: verifying stops the attempts):\n  %s",
					len(undone), len(paid), strings.Join(undone, "\n  "))
			}
		})
	})
}

// payN pays n checkouts one after the other, with callbacks to receiver,
// and returns them as the database has them.
func (s *callbackShop) payN(t *testing.T, svc *merchant.Service, receiver string, n int) []*store.Checkout {
	t.Helper()
	ctx := context.Background()
	var out []*store.Checkout
	for i := range n {
		form, coin := checkoutForm(i, receiver)
		form.Set("callback_url", receiver+"/ipn")
		c, err := svc.Create(ctx, form)
		if err == nil {
			c, err = svc.Quote(ctx, c.PublicID, coin)
		}
		if err == nil {
			c, err = svc.Pay(ctx, c.PublicID, s.buyers[i%len(s.buyers)], c.Quote.Coin, c.Quote.Amount)
		}
		if err != nil {
			t.Fatalf("checkout %d: %v", i, err)
		}
		out = append(out, c)
	}
	return out
}

package ledger_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dripfaucet/drip/internal/apptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// clock is a settable clock, safe for concurrent use.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// env is a ledger over a fresh store with the services that make its fixtures.
type env struct {
	st      store.Store
	clock   *apptest.Clock
	ledger  *ledger.Ledger
	users   *user.Registry
	faucets *faucet.Service
	seq     int
}

func newEnv(t testing.TB, open func(testing.TB) store.Store) *env {
	t.Helper()
	st := open(t)
	c := apptest.NewClock(t0)
	users, err := user.NewRegistry(context.Background(), st, c.Now)
	if err != nil {
		t.Fatalf("user.NewRegistry: %v", err)
	}
	return &env{st: st, clock: c, ledger: ledger.New(st, c.Now), users: users, faucets: faucet.NewService(st, coin.NewCatalog(st, c.Now), c.Now)}
}

// forEachEngine runs fn as a parallel subtest on every engine (D31).
func forEachEngine(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, engine.Open))
		})
	}
}

// user creates a verified, active user.
func (e *env) user(t testing.TB, name string) *drip.User {
	t.Helper()
	u, err := e.users.Create(context.Background(), user.CreateParams{Username: name, Email: name + "@example.com", Verified: true})
	if err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	return u
}

// faucet creates a faucet of a new owner, funded through the ledger, with
// the given send limits (D41).
func (e *env) faucet(t testing.TB, funds map[string]int64, limits ...drip.Limit) *drip.Faucet {
	t.Helper()
	ctx := context.Background()
	e.seq++
	owner := e.user(t, fmt.Sprintf("owner%d", e.seq))
	f, _, err := e.faucets.Create(ctx, faucet.CreateParams{
		OwnerID: owner.ID, Name: fmt.Sprintf("Faucet %d", e.seq),
		Domain: fmt.Sprintf("f%d.example.com", e.seq), URL: fmt.Sprintf("https://f%d.example.com/", e.seq),
	})
	if err != nil {
		t.Fatalf("create faucet: %v", err)
	}
	for coin, amount := range funds {
		if _, err := e.ledger.Deposit(ctx, f, coin, amount); err != nil {
			t.Fatalf("deposit %d %s: %v", amount, coin, err)
		}
	}
	if len(limits) > 0 {
		// A copy: SetLimits normalizes the slice it is given in place, and
		// a case's limits are shared by its engines' parallel subtests.
		if _, f, err = e.faucets.SetLimits(ctx, f.ID, slices.Clone(limits)); err != nil {
			t.Fatalf("SetLimits: %v", err)
		}
	}
	return f
}

func (e *env) balance(t testing.TB, account int64, coin string) int64 {
	t.Helper()
	b, err := e.st.BalanceGet(context.Background(), account, coin)
	if err != nil {
		t.Fatalf("BalanceGet(%d, %s): %v", account, coin, err)
	}
	return b
}

// reconciled fails the test unless the ledger holds its invariant (D3).
func (e *env) reconciled(t testing.TB) {
	t.Helper()
	r, err := e.ledger.Reconcile(context.Background())
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if !r.OK() {
		t.Errorf("Reconcile found %+v; want a clean ledger", r)
	}
}

func (e *env) events(t testing.TB, f *drip.Faucet) []drip.Event {
	t.Helper()
	evs, err := e.st.EventList(context.Background(), f.ID, 1000)
	if err != nil {
		t.Fatalf("EventList: %v", err)
	}
	return evs
}

func (e *env) payouts(t testing.TB, f *drip.Faucet) []drip.Payout {
	t.Helper()
	ps, err := e.st.PayoutList(context.Background(), &store.PayoutListParams{FaucetID: f.ID, Limit: 1000})
	if err != nil {
		t.Fatalf("PayoutList: %v", err)
	}
	return ps
}

// eventData decodes an event's data as a webhook receiver would.
func eventData(t *testing.T, ev drip.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("event %s data %s: %v", ev.ID, ev.Data, err)
	}
	return m
}

// takeMessage checks that data carries a non-empty message string and
// returns it, so a comparison can expect exactly that message.
func takeMessage(t *testing.T, data map[string]any) string {
	t.Helper()
	msg, ok := data["message"].(string)
	if !ok || msg == "" {
		t.Errorf("event data message = %#v, want a non-empty string", data["message"])
	}
	return msg
}

func code(err error) drip.Code {
	if err == nil {
		return ""
	}
	return drip.ErrorCode(err)
}

// TestPaySuccess: a payout is the transfer, the payout row and the
// payout.sent event, committed together (D4), with the body of spec 2.8 (D51).
func TestPaySuccess(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, map[string]int64{"BTC": 10_000})
		alice := e.user(t, "alice")
		e.clock.Advance(time.Minute)

		receipt, err := e.ledger.Pay(ctx, &ledger.Payment{Faucet: f, Recipient: alice, To: "alice@example.com",
			Coin: "BTC", Amount: 1234, IPAddress: "203.0.113.9", Referral: "true"})
		if err != nil {
			t.Fatalf("Pay: %v", err)
		}
		if receipt.Balance != 8766 || receipt.PayoutID <= 0 {
			t.Errorf("receipt = %+v, want balance 8766 and a payout id", receipt)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 8766 {
			t.Errorf("faucet balance = %d, want 8766", got)
		}
		if got := e.balance(t, alice.AccountID, "BTC"); got != 1234 {
			t.Errorf("recipient balance = %d, want 1234", got)
		}
		wantPayouts := []drip.Payout{{ID: receipt.PayoutID, FaucetID: f.ID, RecipientID: alice.ID, To: "alice@example.com",
			Coin: "BTC", Amount: 1234, IPAddress: "203.0.113.9", Referral: "true", CreatedAt: t0.Add(time.Minute)}}
		if diff := cmp.Diff(wantPayouts, e.payouts(t, f)); diff != "" {
			t.Errorf("payouts (-want +got):\n%s", diff)
		}

		evs := e.events(t, f)
		if len(evs) != 1 {
			t.Fatalf("events = %+v, want one payout.sent", evs)
		}
		ev := evs[0]
		if ev.Type != drip.EventPayoutSent || ev.FaucetID != f.ID || !ev.CreatedAt.Equal(t0.Add(time.Minute)) || !strings.HasPrefix(ev.ID, "evt_") {
			t.Errorf("event = %+v, want payout.sent of faucet %d at %v with an evt_ id", ev, f.ID, t0.Add(time.Minute))
		}
		data := eventData(t, ev)
		want := map[string]any{
			"to":               "alice@example.com",
			"amount":           float64(1234),
			"currency":         "BTC",
			"payout_id":        strconv.FormatInt(receipt.PayoutID, 10), // a string in this body (spec 2.8)
			"payout_user_hash": alice.PayoutUserHash,
			"message":          takeMessage(t, data),
		}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("payout.sent data (-want +got):\n%s\nraw: %s", diff, ev.Data)
		}
		e.reconciled(t)
	})
}

// TestPayInsufficientFunds: a payout that would overdraw is refused with
// CodeInsufficientFunds (v1 402), moves nothing, and records payout.failed (D51).
func TestPayInsufficientFunds(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 500})
		alice := e.user(t, "alice")
		receipt, err := e.ledger.Pay(context.Background(), &ledger.Payment{Faucet: f, Recipient: alice, To: "alice",
			Coin: "BTC", Amount: 1000})
		var derr *drip.Error
		if !errors.As(err, &derr) || derr.Code != drip.CodeInsufficientFunds {
			t.Fatalf("Pay of 1000 from 500 = %+v, %v; want a *drip.Error with CodeInsufficientFunds", receipt, err)
		}
		if receipt != nil {
			t.Errorf("receipt of a refused payout = %+v, want nil", receipt)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 500 {
			t.Errorf("faucet balance = %d, want 500 (unchanged)", got)
		}
		if got := e.balance(t, alice.AccountID, "BTC"); got != 0 {
			t.Errorf("recipient balance = %d, want 0", got)
		}
		if ps := e.payouts(t, f); len(ps) != 0 {
			t.Errorf("payouts = %+v, want none", ps)
		}
		evs := e.events(t, f)
		if len(evs) != 1 || evs[0].Type != drip.EventPayoutFailed {
			t.Fatalf("events = %+v, want one payout.failed", evs)
		}
		data := eventData(t, evs[0])
		want := map[string]any{
			"to": "alice", "amount": float64(1000), "currency": "BTC",
			"status": float64(402), "error": "insufficient_balance", "message": takeMessage(t, data),
		}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("payout.failed data (-want +got):\n%s", diff)
		}
		e.reconciled(t)
	})
}

// send is one step of a limit scenario: advance the clock, pay, expect.
type send struct {
	advance time.Duration
	to      int // index of the recipient
	coin    string
	amount  int64
	ip      string
	want    drip.Code // "" for paid
}

// TestPayOwnerSendLimits: owner send limits (D41) count payouts in a
// sliding window per faucet, recipient or claimer IP, for one coin or all;
// a refusal moves nothing and records payout.failed with the v1 status
// (450 send limit, 459 claimer IP, D26).
func TestPayOwnerSendLimits(t *testing.T) {
	t.Parallel()
	hour := int64(3600)
	cases := []struct {
		name   string
		limits []drip.Limit
		sends  []send
	}{
		{
			name:   "per recipient max_count",
			limits: []drip.Limit{{Per: drip.PerRecipient, WindowSeconds: hour, MaxCount: 2}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 10},
				{to: 0, coin: "BTC", amount: 10},
				{to: 0, coin: "BTC", amount: 10, want: drip.CodeSendLimit},
				{to: 0, coin: "DOGE", amount: 10, want: drip.CodeSendLimit}, // a limit without coin counts every coin
				{to: 1, coin: "BTC", amount: 10},
				{to: 1, coin: "BTC", amount: 10},
				{to: 1, coin: "BTC", amount: 10, want: drip.CodeSendLimit},
			},
		},
		{
			name:   "per faucet max_amount",
			limits: []drip.Limit{{Per: drip.PerFaucet, WindowSeconds: hour, MaxAmount: 2500}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 1000},
				{to: 1, coin: "BTC", amount: 1000},
				{to: 2, coin: "BTC", amount: 1000, want: drip.CodeSendLimit},
				{to: 2, coin: "BTC", amount: 500}, // exactly the limit
				{to: 0, coin: "BTC", amount: 1, want: drip.CodeSendLimit},
			},
		},
		{
			name:   "per faucet max_count",
			limits: []drip.Limit{{Per: drip.PerFaucet, WindowSeconds: hour, MaxCount: 2}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 1},
				{to: 1, coin: "BTC", amount: 1},
				{to: 2, coin: "BTC", amount: 1, want: drip.CodeSendLimit},
			},
		},
		{
			name:   "per ip max_count",
			limits: []drip.Limit{{Per: drip.PerIP, WindowSeconds: hour, MaxCount: 1}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 10, ip: "198.51.100.1"},
				{to: 1, coin: "BTC", amount: 10, ip: "198.51.100.1", want: drip.CodeClaimerRateLimit},
				{to: 0, coin: "BTC", amount: 10, ip: "198.51.100.2"},
				{to: 0, coin: "BTC", amount: 10}, // no claimer IP given: nothing to count against
				{to: 0, coin: "BTC", amount: 10},
			},
		},
		{
			name:   "coin-specific limit applies to that coin only",
			limits: []drip.Limit{{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: hour, MaxCount: 1}},
			sends: []send{
				{to: 0, coin: "DOGE", amount: 10},
				{to: 0, coin: "BTC", amount: 10}, // the DOGE payout does not count
				{to: 1, coin: "BTC", amount: 10, want: drip.CodeSendLimit},
				{to: 1, coin: "DOGE", amount: 10},
				{to: 2, coin: "DOGE", amount: 10},
			},
		},
		{
			name: "every limit applies, first refusal wins",
			limits: []drip.Limit{
				{Coin: "DOGE", Per: drip.PerIP, WindowSeconds: hour, MaxCount: 1},
				{Per: drip.PerFaucet, WindowSeconds: hour, MaxAmount: 100},
			},
			sends: []send{
				{to: 0, coin: "DOGE", amount: 40, ip: "198.51.100.1"},
				{to: 0, coin: "DOGE", amount: 40, ip: "198.51.100.1", want: drip.CodeClaimerRateLimit},
				{to: 0, coin: "BTC", amount: 40, ip: "198.51.100.1"},
				{to: 0, coin: "BTC", amount: 40, ip: "198.51.100.1", want: drip.CodeSendLimit},
			},
		},
		{
			// Every step also moves the clock 1s; T is the first payout's time.
			name:   "window expires as the clock moves",
			limits: []drip.Limit{{Per: drip.PerFaucet, WindowSeconds: 60, MaxCount: 1}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 10}, // T
				{advance: 28 * time.Second, to: 1, coin: "BTC", amount: 10, want: drip.CodeSendLimit}, // T+29s
				{advance: 29 * time.Second, to: 1, coin: "BTC", amount: 10, want: drip.CodeSendLimit}, // T+59s
				{advance: 1 * time.Second, to: 1, coin: "BTC", amount: 10},                            // T+61s: T is out
				{advance: 57 * time.Second, to: 2, coin: "BTC", amount: 10, want: drip.CodeSendLimit}, // T+119s
				{advance: 2 * time.Second, to: 2, coin: "BTC", amount: 10},                            // T+122s
			},
		},
		{
			name:   "amount window expires as the clock moves",
			limits: []drip.Limit{{Per: drip.PerRecipient, WindowSeconds: 600, MaxAmount: 100}},
			sends: []send{
				{to: 0, coin: "BTC", amount: 60}, // T
				{advance: 5 * time.Minute, to: 0, coin: "BTC", amount: 60, want: drip.CodeSendLimit}, // T+301s
				{to: 0, coin: "BTC", amount: 40},                           // T+302s: exactly 100
				{advance: 5 * time.Minute, to: 0, coin: "BTC", amount: 60}, // T+603s: the 60 is out, the 40 in
				{to: 0, coin: "BTC", amount: 1, want: drip.CodeSendLimit},  // T+604s
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, e *env) {
				ctx := context.Background()
				f := e.faucet(t, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000}, c.limits...)
				recipients := []*drip.User{e.user(t, "rcp0"), e.user(t, "rcp1"), e.user(t, "rcp2")}
				paid := map[string]int64{} // "recipient/coin" -> units
				spent := map[string]int64{}
				var paidCount int
				for i, s := range c.sends {
					// Every step at a distinct time, so events list in step order.
					e.clock.Advance(time.Second + s.advance)
					r := recipients[s.to]
					receipt, err := e.ledger.Pay(ctx, &ledger.Payment{Faucet: f, Recipient: r, To: r.Username,
						Coin: s.coin, Amount: s.amount, IPAddress: s.ip})
					if got := code(err); got != s.want {
						t.Fatalf("send %d (%+v): code %q (err %v), want %q", i+1, s, got, err, s.want)
					}
					latest := e.events(t, f)[0]
					if s.want == "" {
						if receipt == nil {
							t.Fatalf("send %d: nil receipt", i+1)
						}
						paid[fmt.Sprintf("%d/%s", s.to, s.coin)] += s.amount
						spent[s.coin] += s.amount
						paidCount++
						if latest.Type != drip.EventPayoutSent {
							t.Errorf("send %d: latest event %s, want payout.sent", i+1, latest.Type)
						}
						continue
					}
					status, _ := s.want.V1Status()
					data := eventData(t, latest)
					want := map[string]any{"to": r.Username, "amount": float64(s.amount), "currency": s.coin,
						"status": float64(status), "error": string(s.want), "message": takeMessage(t, data)}
					if latest.Type != drip.EventPayoutFailed {
						t.Errorf("send %d: latest event %s, want payout.failed", i+1, latest.Type)
					} else if diff := cmp.Diff(want, data); diff != "" {
						t.Errorf("send %d: payout.failed data (-want +got):\n%s", i+1, diff)
					}
				}
				// Refusals moved nothing: balances are exactly what was paid.
				for i, r := range recipients {
					for _, coin := range []string{"BTC", "DOGE"} {
						if got, want := e.balance(t, r.AccountID, coin), paid[fmt.Sprintf("%d/%s", i, coin)]; got != want {
							t.Errorf("recipient %d %s balance = %d, want %d", i, coin, got, want)
						}
					}
				}
				for _, coin := range []string{"BTC", "DOGE"} {
					if got, want := e.balance(t, f.AccountID, coin), 1_000_000-spent[coin]; got != want {
						t.Errorf("faucet %s balance = %d, want %d", coin, got, want)
					}
				}
				if got := len(e.payouts(t, f)); got != paidCount {
					t.Errorf("%d payout rows, want %d", got, paidCount)
				}
				if got := len(e.events(t, f)); got != len(c.sends) {
					t.Errorf("%d events, want one per send (%d)", got, len(c.sends))
				}
				e.reconciled(t)
			})
		})
	}
}

// TestPayConcurrentNeverOverdraws: 64 payouts of 1000 race for a balance of
// 40000. Exactly 40 are paid, each seeing the balance the one before left;
// 24 are refused; no balance goes negative and the ledger reconciles (D2, D3, D5).
func TestPayConcurrentNeverOverdraws(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, map[string]int64{"BTC": 40_000})
		var recipients []*drip.User
		for i := 0; i < 8; i++ {
			recipients = append(recipients, e.user(t, fmt.Sprintf("rcp%d", i)))
		}
		const workers = 64
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			balances []int64
			refused  int
		)
		start := make(chan struct{})
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := recipients[i%len(recipients)]
				receipt, err := e.ledger.Pay(ctx, &ledger.Payment{Faucet: f, Recipient: r, To: r.Username, Coin: "BTC", Amount: 1000})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					balances = append(balances, receipt.Balance)
				case code(err) == drip.CodeInsufficientFunds:
					refused++
				default:
					t.Errorf("Pay: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()

		if len(balances) != 40 || refused != 24 {
			t.Errorf("%d paid, %d refused for insufficient funds; want 40 and 24", len(balances), refused)
		}
		var want []int64
		for b := int64(39_000); b >= 0; b -= 1000 {
			want = append(want, b)
		}
		if diff := cmp.Diff(want, balances, cmpopts.SortSlices(func(a, b int64) bool { return a > b })); diff != "" {
			t.Errorf("balances in the receipts (-want +got):\n%s", diff)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 0 {
			t.Errorf("faucet balance = %d, want 0", got)
		}
		var total int64
		for _, r := range recipients {
			b := e.balance(t, r.AccountID, "BTC")
			if b < 0 {
				t.Errorf("%s balance = %d, negative", r.Username, b)
			}
			total += b
		}
		if total != 40_000 {
			t.Errorf("recipients hold %d in all, want 40000", total)
		}
		if got := len(e.payouts(t, f)); got != 40 {
			t.Errorf("%d payout rows, want 40", got)
		}
		counts := map[string]int{}
		for _, ev := range e.events(t, f) {
			counts[ev.Type]++
		}
		if diff := cmp.Diff(map[string]int{drip.EventPayoutSent: 40, drip.EventPayoutFailed: 24}, counts); diff != "" {
			t.Errorf("events by type (-want +got):\n%s", diff)
		}
		e.reconciled(t)
	})
}

// TestPayConcurrentSendLimit: 30 concurrent payouts against a per-faucet
// max_count of 10. Exactly 10 are paid: counting the window and paying do not
// interleave between payouts of one faucet (FaucetLock, D41). On SQLite the
// single writer serializes anyway; on PostgreSQL only the row lock does.
func TestPayConcurrentSendLimit(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, map[string]int64{"BTC": 100_000},
			drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 10})
		var recipients []*drip.User
		for i := 0; i < 6; i++ {
			recipients = append(recipients, e.user(t, fmt.Sprintf("rcp%d", i)))
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			counts = map[drip.Code]int{}
		)
		start := make(chan struct{})
		for i := 0; i < 30; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r := recipients[i%len(recipients)]
				_, err := e.ledger.Pay(ctx, &ledger.Payment{Faucet: f, Recipient: r, To: r.Username, Coin: "BTC", Amount: 100})
				mu.Lock()
				counts[code(err)]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if diff := cmp.Diff(map[drip.Code]int{"": 10, drip.CodeSendLimit: 20}, counts); diff != "" {
			t.Errorf("outcomes by code (-want +got):\n%s", diff)
		}
		if got := len(e.payouts(t, f)); got != 10 {
			t.Errorf("%d payout rows, want 10", got)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 99_000 {
			t.Errorf("faucet balance = %d, want 99000", got)
		}
		e.reconciled(t)
	})
}

// TestDeposit: a deposit moves money from system:deposits, which mirrors the
// outside world and is the one balance that goes negative (D2).
func TestDeposit(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, nil)
		for _, c := range []struct {
			amount, want int64
		}{{500, 500}, {250, 750}} {
			got, err := e.ledger.Deposit(ctx, f, "DOGE", c.amount)
			if err != nil || got != c.want {
				t.Errorf("Deposit(%d) = %d, %v; want %d", c.amount, got, err, c.want)
			}
		}
		for _, amount := range []int64{0, -5} {
			if _, err := e.ledger.Deposit(ctx, f, "DOGE", amount); code(err) != drip.CodeInvalidAmount {
				t.Errorf("Deposit(%d): err = %v, want CodeInvalidAmount", amount, err)
			}
		}
		if got := e.balance(t, f.AccountID, "DOGE"); got != 750 {
			t.Errorf("faucet DOGE = %d, want 750", got)
		}
		if got := e.balance(t, drip.AccountDeposits, "DOGE"); got != -750 {
			t.Errorf("system:deposits DOGE = %d, want -750", got)
		}
		if _, err := e.ledger.Deposit(ctx, f, "NOPE", 5); err == nil {
			t.Error("Deposit of an unknown coin succeeded")
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 0 {
			t.Errorf("faucet BTC = %d, want 0", got)
		}
		if evs := e.events(t, f); len(evs) != 0 {
			t.Errorf("a deposit wrote events %+v; want none (D51 has no deposit event)", evs)
		}
		e.reconciled(t)
	})
}

// TestRecordRefusal: a send refused before the ledger records payout.failed;
// a blacklist refusal also counts toward the recipient's negative rank at
// other faucets (D42), and no other refusal does.
func TestRecordRefusal(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, nil)
		other := e.faucet(t, nil)
		mallory := e.user(t, "mallory")
		countAt := func(faucetID int64) int64 {
			t.Helper()
			n, err := e.st.RefusalCountOthers(ctx, mallory.ID, faucetID, t0.Add(-time.Hour))
			if err != nil {
				t.Fatalf("RefusalCountOthers: %v", err)
			}
			return n
		}

		refused := drip.Errorf(drip.CodeRecipientRefused, "Recipient refused by the faucet's rules.")
		p := &ledger.Payment{Faucet: f, Recipient: mallory, To: "mallory", Coin: "BTC", Amount: 10}
		if err := e.ledger.RecordRefusal(ctx, p, refused, false); err != nil {
			t.Fatalf("RecordRefusal(not blacklisted): %v", err)
		}
		if n := countAt(other.ID); n != 0 {
			t.Errorf("after an anti-fraud refusal, other faucets count %d refusals, want 0", n)
		}
		e.clock.Advance(time.Second)
		if err := e.ledger.RecordRefusal(ctx, p, refused, true); err != nil {
			t.Fatalf("RecordRefusal(blacklisted): %v", err)
		}
		if n := countAt(other.ID); n != 1 {
			t.Errorf("after a blacklist refusal, other faucets count %d refusals, want 1", n)
		}
		if n := countAt(f.ID); n != 0 {
			t.Errorf("the refusing faucet counts %d refusals by others, want 0", n)
		}

		// An unknown recipient: the event, and no refusal row (there is no user).
		e.clock.Advance(time.Second)
		unknown := drip.Errorf(drip.CodeRecipientUnknown, "Recipient not payable.")
		if err := e.ledger.RecordRefusal(ctx, &ledger.Payment{Faucet: f, To: "nobody", Coin: "DOGE", Amount: 7}, unknown, true); err != nil {
			t.Fatalf("RecordRefusal(unknown recipient): %v", err)
		}

		evs := e.events(t, f)
		var got []map[string]any
		for _, ev := range evs {
			if ev.Type != drip.EventPayoutFailed {
				t.Errorf("event %s is %s, want payout.failed", ev.ID, ev.Type)
			}
			got = append(got, eventData(t, ev))
		}
		want := []map[string]any{
			{"to": "nobody", "amount": float64(7), "currency": "DOGE", "status": float64(456), "error": "recipient_not_payable", "message": "Recipient not payable."},
			{"to": "mallory", "amount": float64(10), "currency": "BTC", "status": float64(457), "error": "recipient_refused", "message": "Recipient refused by the faucet's rules."},
			{"to": "mallory", "amount": float64(10), "currency": "BTC", "status": float64(457), "error": "recipient_refused", "message": "Recipient refused by the faucet's rules."},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("payout.failed events, newest first (-want +got):\n%s", diff)
		}
		if evs := e.events(t, other); len(evs) != 0 {
			t.Errorf("the other faucet has events %+v, want none", evs)
		}
		e.reconciled(t)
	})
}

// TestReconcileFindsMoneyFromNowhere: Reconcile is able to fail (D3): a
// balance changed without a journal entry is reported.
func TestReconcileFindsMoneyFromNowhere(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, map[string]int64{"BTC": 100})
		e.reconciled(t)
		err := e.st.Transact(ctx, func(tx store.Tx) error {
			_, err := tx.BalanceCredit(ctx, f.AccountID, "BTC", 1)
			return err
		})
		if err != nil {
			t.Fatalf("BalanceCredit: %v", err)
		}
		r, err := e.ledger.Reconcile(ctx)
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		want := &ledger.Report{
			CoinSums:   []store.CoinSum{{Coin: "BTC", Sum: 1}},
			Accounts:   []store.AccountMismatch{{AccountID: f.AccountID, Coin: "BTC", Balance: 101, Journal: 100}},
			Payouts:    []int64{},
			Events:     []int64{},
			Statistics: []int64{},
		}
		if diff := cmp.Diff(want, r); diff != "" || r.OK() {
			t.Errorf("Reconcile of a broken ledger (OK=%v) (-want +got):\n%s", r.OK(), diff)
		}
	})
}

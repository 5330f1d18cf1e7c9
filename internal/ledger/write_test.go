package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

// write is one payment of a TestPayoutWrites case.
type write struct {
	to     int // index of the recipient: alice, bob, carol
	coin   string
	amount int64
	ip     string
	idem   string // v2 idempotency key, or none
	usd    int64  // USD micros counted against the key's cap (D36), or none
	want   drip.Code
}

// v1Statuses are the statuses payout.failed events carry (D51).
var v1Statuses = map[drip.Code]any{
	drip.CodeInsufficientFunds: float64(402),
	drip.CodeSendLimit:         float64(450),
	drip.CodeClaimerRateLimit:  float64(459),
	drip.CodeDailyCap:          nil, // v1 has no USD cap
}

// TestPayoutWrites: every payout is written by one path, whatever its
// faucet's settings (D4, D5), and writes exactly the rows the design
// requires: for a paid payment its payout row, its journal transfer, both
// balances, its payout.sent event under the payment's id (D6), its
// idempotency row (D35), its spend of the key's day (D36) and, when it
// takes the balance below the owner's threshold, one notification and one
// faucet.low_balance event (D43); for a refused one its payout.failed
// event and nothing else. Each case runs as one batch, decided in the
// order given, so that every limit, cap and balance must count the
// batch's payments before it, and again payment by payment: both write
// the same rows. The first `prior` payments are paid, one by one, before
// the rest, so the counts read from the database matter too.
func TestPayoutWrites(t *testing.T) {
	t.Parallel()
	hour := int64(3600)
	cases := []struct {
		name       string
		funds      int64 // BTC
		limits     []drip.Limit
		threshold  int64 // low-balance alert on BTC, or off
		capMicros  int64 // the key's daily USD cap, or no key
		prior      int
		writes     []write
		lowAlerts  []int64 // the balances at which an alert is owed, in order
		spentMicro int64
	}{
		{
			name:  "plain",
			funds: 10_000,
			writes: []write{
				{to: 0, coin: "BTC", amount: 1000, ip: "198.51.100.1"},
				{to: 1, coin: "BTC", amount: 2000},
				{to: 0, coin: "BTC", amount: 3000},
			},
		},
		{
			name:  "refused by the balance",
			funds: 1000,
			prior: 1,
			writes: []write{
				{to: 0, coin: "BTC", amount: 300},
				{to: 1, coin: "BTC", amount: 800, want: drip.CodeInsufficientFunds},
				{to: 2, coin: "BTC", amount: 700}, // exactly what is left
				{to: 0, coin: "BTC", amount: 1, want: drip.CodeInsufficientFunds},
			},
		},
		{
			name:  "send limits count the payouts committed and those before in the batch",
			funds: 1_000_000,
			limits: []drip.Limit{
				{Per: drip.PerRecipient, WindowSeconds: hour, MaxCount: 2},
				{Per: drip.PerIP, WindowSeconds: hour, MaxCount: 2},
				{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: hour, MaxAmount: 10_000},
			},
			prior: 1,
			writes: []write{
				{to: 0, coin: "BTC", amount: 1000, ip: "198.51.100.1"},
				{to: 0, coin: "BTC", amount: 1000, ip: "198.51.100.2"},
				{to: 0, coin: "BTC", amount: 1000, want: drip.CodeSendLimit}, // a third to alice
				{to: 1, coin: "BTC", amount: 1000, ip: "198.51.100.1"},
				{to: 2, coin: "BTC", amount: 1000, ip: "198.51.100.1", want: drip.CodeClaimerRateLimit},
				{to: 2, coin: "BTC", amount: 7000},                                // 10,000 in the hour: the limit exactly
				{to: 2, coin: "BTC", amount: 1, want: drip.CodeSendLimit},         // over the faucet's amount
				{to: 1, coin: "BTC", amount: 1, ip: "", want: drip.CodeSendLimit}, // still the faucet's amount
			},
		},
		{
			name:      "daily USD cap counts the key's payouts before in the batch",
			funds:     1_000_000,
			capMicros: 1_000_000,
			prior:     1,
			writes: []write{
				{to: 0, coin: "BTC", amount: 100, usd: 400_000},
				{to: 1, coin: "BTC", amount: 100, usd: 400_000},
				{to: 2, coin: "BTC", amount: 100, usd: 400_000, want: drip.CodeDailyCap},
				{to: 2, coin: "BTC", amount: 100, usd: 200_000}, // the cap exactly
				{to: 0, coin: "BTC", amount: 100, usd: 1, want: drip.CodeDailyCap},
			},
			spentMicro: 1_000_000,
		},
		{
			name:  "idempotency keys bind paid payouts only",
			funds: 6000,
			writes: []write{
				{to: 0, coin: "BTC", amount: 2000, idem: "k1"},
				{to: 1, coin: "BTC", amount: 4500, idem: "k2", want: drip.CodeInsufficientFunds},
				{to: 1, coin: "BTC", amount: 3000, idem: "k3"},
				{to: 2, coin: "BTC", amount: 500}, // no key
			},
		},
		{
			name:      "crossing the low-balance threshold alerts once",
			funds:     10_000,
			threshold: 5000,
			prior:     1,
			writes: []write{
				{to: 0, coin: "BTC", amount: 3000},                                   // 7000
				{to: 1, coin: "BTC", amount: 2000},                                   // 5000: not below
				{to: 2, coin: "BTC", amount: 6000, want: drip.CodeInsufficientFunds}, // a refusal does not alert
				{to: 2, coin: "BTC", amount: 1},                                      // 4999: below, alert
				{to: 0, coin: "BTC", amount: 999},                                    // 4000: still below, no alert
			},
			lowAlerts: []int64{4999},
		},
		{
			name:  "refused at each step: send limit, then cap, then balance",
			funds: 5000,
			limits: []drip.Limit{
				{Per: drip.PerRecipient, WindowSeconds: hour, MaxCount: 1},
			},
			threshold: 2000,
			capMicros: 1_000_000,
			writes: []write{
				{to: 0, coin: "BTC", amount: 3500, usd: 600_000, idem: "a1"},                                   // 1500: alert
				{to: 0, coin: "BTC", amount: 9000, usd: 900_000, idem: "a2", want: drip.CodeSendLimit},         // over all three
				{to: 1, coin: "BTC", amount: 9000, usd: 500_000, idem: "b1", want: drip.CodeDailyCap},          // over cap and balance
				{to: 1, coin: "BTC", amount: 9000, usd: 400_000, idem: "b2", want: drip.CodeInsufficientFunds}, // over the balance
				{to: 2, coin: "BTC", amount: 1500, usd: 400_000, idem: "c1"},                                   // 0: the balance, the cap exactly
			},
			lowAlerts:  []int64{1500},
			spentMicro: 1_000_000,
		},
	}
	for _, c := range cases {
		for _, mode := range []string{"one batch", "one by one"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				forEachEngine(t, func(t *testing.T, e *env) {
					ctx := context.Background()
					fs := &faultyStore{Store: e.st}
					l := ledger.New(fs, e.clock.Now)
					t.Cleanup(l.Close)
					f := e.faucet(t, map[string]int64{"BTC": c.funds})
					f = e.configure(t, f, c.limits, c.threshold)
					var keyID int64
					if c.capMicros > 0 {
						keyID = e.key(t, f, c.capMicros)
					}
					to := []*drip.User{e.user(t, "alice"), e.user(t, "bob"), e.user(t, "carol")}
					payments := make([]*ledger.Payment, len(c.writes))
					for i, w := range c.writes {
						p := &ledger.Payment{Faucet: f, Recipient: to[w.to], To: to[w.to].Username, Coin: w.coin,
							Amount: w.amount, IPAddress: w.ip, Referral: fmt.Sprintf("ref%d", i)}
						if w.idem != "" {
							p.Idempotency = &drip.Idempotency{Key: w.idem, RequestHash: "hash-" + w.idem, RateRemaining: 7}
						}
						if w.usd > 0 {
							p.Spend = &ledger.Spend{KeyID: keyID, Micros: w.usd, CapMicros: c.capMicros}
						}
						payments[i] = p
					}

					receipts, errs := make([]*ledger.Receipt, len(payments)), make([]error, len(payments))
					for i := range c.prior {
						receipts[i], errs[i] = l.Pay(ctx, payments[i])
					}
					rest := payments[c.prior:]
					if mode == "one batch" {
						fs.mu.Lock()
						fs.batches = nil
						fs.mu.Unlock()
						rs, es := l.CommitInOrder(rest)
						copy(receipts[c.prior:], rs)
						copy(errs[c.prior:], es)
						paid := 0
						for _, w := range c.writes[c.prior:] {
							if w.want == "" {
								paid++
							}
						}
						if diff := cmp.Diff([]int{paid}, fs.batches); diff != "" {
							t.Errorf("payouts inserted per transaction (-want +got):\n%s", diff)
						}
					} else {
						for i := c.prior; i < len(payments); i++ {
							receipts[i], errs[i] = l.Pay(ctx, payments[i])
						}
					}

					e.checkWrites(t, f, to, keyID, c.funds, payments, c.writes, receipts, errs, c.lowAlerts, c.spentMicro)
					e.reconciled(t)
				})
			})
		}
	}
}

// configure gives f send limits and a BTC low-balance threshold (none when
// 0), as the owner's settings store them, and returns f as read back.
func (e *env) configure(t testing.TB, f *drip.Faucet, limits []drip.Limit, threshold int64) *drip.Faucet {
	t.Helper()
	ctx := context.Background()
	f.Limits = limits
	if threshold > 0 {
		f.LowBalance = drip.LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": threshold}}
	}
	if err := e.st.Transact(ctx, func(tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, f) }); err != nil {
		t.Fatalf("FaucetUpdateSettings: %v", err)
	}
	f, err := e.st.FaucetGetByID(ctx, f.ID)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	return f
}

// key creates a v2 send key of f with a daily USD cap and returns its id.
func (e *env) key(t testing.TB, f *drip.Faucet, capMicros int64) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := e.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		id, err = tx.KeyCreate(ctx, &drip.Key{FaucetID: f.ID, Prefix: fmt.Sprintf("capped%d", f.ID), Scopes: []drip.Scope{drip.ScopeSend},
			DailyUSDCapMicros: capMicros, CreatedAt: t0}, fmt.Sprintf("hash-%d", f.ID))
		return err
	})
	if err != nil {
		t.Fatalf("KeyCreate: %v", err)
	}
	return id
}

// checkWrites compares every row the payments wrote with the rows the
// outcomes they were meant to have require.
func (e *env) checkWrites(t *testing.T, f *drip.Faucet, to []*drip.User, keyID, funds int64, payments []*ledger.Payment,
	writes []write, receipts []*ledger.Receipt, errs []error, lowAlerts []int64, spent int64) {
	t.Helper()
	ctx := context.Background()
	type eventRow struct {
		ID   string // "" for a low-balance event, whose id is its own
		Type string
		Data map[string]any
	}
	var (
		wantPayouts   []drip.Payout
		wantJournal   = []drip.Transaction{{Kind: "deposit", Coin: "BTC", Amount: funds, CreatedAt: t0}}
		wantReceived  = make([][]store.ReceivedPayout, len(to))
		wantEvents    []eventRow
		wantNotes     []drip.Notification
		wantIdem      = map[string]*drip.Idempotency{}
		wantRecipient = make([]int64, len(to))
		alerts        = slices.Clone(lowAlerts)
	)
	balance := funds
	for i, w := range writes {
		p, r := payments[i], to[w.to]
		if w.want != "" {
			var refusal *drip.Error
			if !errors.As(errs[i], &refusal) || refusal.Code != w.want || receipts[i] != nil {
				t.Fatalf("payment %d: receipt %+v, error %v; want a %s refusal", i, receipts[i], errs[i], w.want)
			}
			wantEvents = append(wantEvents, eventRow{p.ID, drip.EventPayoutFailed, map[string]any{
				"to": r.Username, "amount": float64(w.amount), "currency": w.coin, "status": v1Statuses[w.want],
				"error": string(w.want), "message": refusal.Message,
			}})
			if w.idem != "" {
				wantIdem[w.idem] = nil // a refusal leaves the key free (D35)
			}
			continue
		}
		if errs[i] != nil || receipts[i] == nil {
			t.Fatalf("payment %d: receipt %+v, error %v; want paid", i, receipts[i], errs[i])
		}
		id := receipts[i].PayoutID
		balance -= w.amount
		if receipts[i].Balance != balance {
			t.Errorf("payment %d: receipt balance %d, want %d", i, receipts[i].Balance, balance)
		}
		wantRecipient[w.to] += w.amount
		payout := drip.Payout{ID: id, FaucetID: f.ID, RecipientID: r.ID, To: r.Username,
			Coin: w.coin, Amount: w.amount, IPAddress: w.ip, Referral: fmt.Sprintf("ref%d", i), CreatedAt: t0}
		wantPayouts = append(wantPayouts, payout)
		wantJournal = append(wantJournal, drip.Transaction{Kind: "payout", Coin: w.coin, Amount: -w.amount, PayoutID: id, CreatedAt: t0})
		wantReceived[w.to] = append(wantReceived[w.to], store.ReceivedPayout{Payout: payout, FaucetName: f.Name})
		wantEvents = append(wantEvents, eventRow{p.ID, drip.EventPayoutSent, map[string]any{
			"to": r.Username, "amount": float64(w.amount), "currency": w.coin, "payout_id": strconv.FormatInt(id, 10),
			"payout_user_hash": r.PayoutUserHash, "message": "Payout sent.",
		}})
		if len(alerts) > 0 && alerts[0] == balance {
			alerts = alerts[1:]
			threshold := f.LowBalance.Thresholds["BTC"]
			wantNotes = append(wantNotes, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC",
				Threshold: threshold, Balance: balance, CreatedAt: t0})
			wantEvents = append(wantEvents, eventRow{"", drip.EventLowBalance, map[string]any{
				"currency": "BTC", "balance": float64(balance), "balance_bitcoin": json.Number(drip.FormatCoins(balance)),
				"threshold": float64(threshold), "message": "The faucet's BTC balance fell below the alert threshold.",
			}})
		}
		if w.idem != "" {
			wantIdem[w.idem] = &drip.Idempotency{FaucetID: f.ID, Key: w.idem, RequestHash: "hash-" + w.idem, PayoutID: id,
				Coin: w.coin, Balance: balance, PayoutUserHash: r.PayoutUserHash, RateRemaining: 7, CreatedAt: t0}
		}
	}
	if len(alerts) > 0 {
		t.Fatalf("the case owes alerts at balances %v that its payments never reach", alerts)
	}

	gotPayouts := e.payouts(t, f)
	slices.Reverse(gotPayouts) // oldest first
	if diff := cmp.Diff(wantPayouts, gotPayouts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("payouts (-want +got):\n%s", diff)
	}
	ignoreID := cmpopts.IgnoreFields(drip.Transaction{}, "ID")
	if diff := cmp.Diff(wantJournal, e.journal(t, f.AccountID), ignoreID); diff != "" {
		t.Errorf("the faucet's journal (-want +got):\n%s", diff)
	}
	for i, r := range to {
		// What the recipient's wallet lists. The journal's side of each
		// payout (its transfer to the recipient's account) is checked by
		// e.reconciled: a recipient's account receives no payout in
		// TransactionList (D67).
		if diff := cmp.Diff(wantReceived[i], e.received(t, r), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s's payouts received (-want +got):\n%s", r.Username, diff)
		}
		if got := e.balance(t, r.AccountID, "BTC"); got != wantRecipient[i] {
			t.Errorf("%s's balance = %d, want %d", r.Username, got, wantRecipient[i])
		}
	}
	if got := e.balance(t, f.AccountID, "BTC"); got != balance {
		t.Errorf("faucet balance = %d, want %d", got, balance)
	}

	var gotEvents []eventRow
	for _, ev := range e.events(t, f) {
		var data map[string]any
		dec := json.NewDecoder(bytes.NewReader(ev.Data))
		if ev.Type == drip.EventLowBalance {
			dec.UseNumber() // balance_bitcoin is an exact decimal (D1)
		}
		if err := dec.Decode(&data); err != nil {
			t.Fatalf("event %s: %v", ev.ID, err)
		}
		if ev.Type == drip.EventLowBalance {
			for _, k := range []string{"balance", "threshold"} {
				if n, ok := data[k].(json.Number); ok {
					v, _ := n.Float64()
					data[k] = v
				}
			}
		}
		if !ev.CreatedAt.Equal(t0) || ev.FaucetID != f.ID {
			t.Errorf("event %s: faucet %d at %v; want faucet %d at %v", ev.ID, ev.FaucetID, ev.CreatedAt, f.ID, t0)
		}
		id := ev.ID
		if ev.Type == drip.EventLowBalance {
			if !strings.HasPrefix(id, "evt_") {
				t.Errorf("low-balance event id %q; want evt_...", id)
			}
			id = ""
		}
		gotEvents = append(gotEvents, eventRow{id, ev.Type, data})
	}
	slices.Reverse(gotEvents) // oldest first
	if diff := cmp.Diff(wantEvents, gotEvents); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	notes, err := e.st.NotificationListByFaucet(ctx, f.ID, 100)
	if err != nil {
		t.Fatalf("NotificationListByFaucet: %v", err)
	}
	if diff := cmp.Diff(wantNotes, notes, cmpopts.IgnoreFields(drip.Notification{}, "ID"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}

	for key, want := range wantIdem {
		got, err := e.st.IdempotencyGet(ctx, f.ID, key)
		if want == nil {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("idempotency key %s of a refusal: %+v, %v; want ErrNotFound", key, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("IdempotencyGet(%s): %v", key, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("idempotency row %s (-want +got):\n%s", key, diff)
		}
	}

	if keyID != 0 {
		got, err := e.st.KeySpendGet(ctx, keyID, ledger.Day(t0))
		if err != nil || got != spent {
			t.Errorf("key spend of the day = %d, %v; want %d", got, err, spent)
		}
	}
}

// received is the payouts r's wallet lists, oldest first.
func (e *env) received(t testing.TB, r *drip.User) []store.ReceivedPayout {
	t.Helper()
	rows, err := e.st.PayoutListByRecipient(context.Background(), &store.PayoutListByRecipientParams{UserID: r.ID, Limit: 1000})
	if err != nil {
		t.Fatalf("PayoutListByRecipient(%s): %v", r.Username, err)
	}
	slices.Reverse(rows)
	return rows
}

// journal is an account's BTC journal, oldest first.
func (e *env) journal(t testing.TB, account int64) []drip.Transaction {
	t.Helper()
	rows, _, err := e.st.TransactionList(context.Background(), &store.PageParams{ID: account, Coin: "BTC", Limit: 1000})
	if err != nil {
		t.Fatalf("TransactionList(%d): %v", account, err)
	}
	slices.Reverse(rows)
	return rows
}

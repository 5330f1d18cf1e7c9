package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for payouts: listing, the windows limits count in,
// and the benchmark's bulk load.

func testPayoutList(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)
	p1 := pay(t, st, f, alice, "BTC", 10, "203.0.113.1", t0)
	p2 := pay(t, st, f, alice, "DOGE", 20, "", t0.Add(time.Second))
	pg := pay(t, st, g, alice, "BTC", 99, "", t0.Add(2*time.Second))
	p3 := pay(t, st, f, alice, "BTC", 30, "203.0.113.2", t0.Add(3*time.Second))

	cases := []struct {
		name string
		p    store.PayoutListParams
		want []drip.Payout
	}{
		{"all coins newest first", store.PayoutListParams{FaucetID: f.ID, Limit: 10}, []drip.Payout{p3, p2, p1}},
		{"one coin", store.PayoutListParams{FaucetID: f.ID, Coin: "BTC", Limit: 10}, []drip.Payout{p3, p1}},
		{"limit", store.PayoutListParams{FaucetID: f.ID, Limit: 2}, []drip.Payout{p3, p2}},
		{"one coin with limit", store.PayoutListParams{FaucetID: f.ID, Coin: "BTC", Limit: 1}, []drip.Payout{p3}},
		{"a coin never paid", store.PayoutListParams{FaucetID: f.ID, Coin: "LTC", Limit: 10}, nil},
		{"other faucet", store.PayoutListParams{FaucetID: g.ID, Limit: 10}, []drip.Payout{pg}},
		{"unknown faucet", store.PayoutListParams{FaucetID: 999999, Limit: 10}, nil},
	}
	for _, c := range cases {
		got, err := st.PayoutList(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: PayoutList: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: PayoutList (-want +got):\n%s", c.name, diff)
		}
	}
}

func testPayoutWindow(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	r1 := newUser(t, st, "r1")
	r2 := newUser(t, st, "r2")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, f.AccountID, "DOGE", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)
	pay(t, st, f, r1, "BTC", 100, "198.51.100.1", t0.Add(-2*time.Hour))
	pay(t, st, f, r2, "BTC", 200, "198.51.100.1", t0.Add(-30*time.Minute))
	pay(t, st, f, r1, "DOGE", 400, "198.51.100.2", t0.Add(-10*time.Minute))
	pay(t, st, f, r1, "BTC", 800, "", t0)
	pay(t, st, g, r1, "BTC", 1600, "198.51.100.1", t0) // another faucet's payouts never count

	hourAgo, longAgo := t0.Add(-time.Hour), t0.Add(-3*time.Hour)
	cases := []struct {
		name              string
		p                 store.PayoutWindowParams
		wantCount, wantSu int64
	}{
		{"faucet, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo}, 3, 1400},
		{"faucet, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo}, 4, 1500},
		{"faucet, BTC, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, Coin: "BTC"}, 2, 1000},
		{"faucet, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(-30 * time.Minute)}, 3, 1400},
		{"faucet, after the last payout", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(time.Microsecond)}, 0, 0},
		{"recipient, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, RecipientID: r1.ID}, 2, 1200},
		{"recipient, BTC, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, Coin: "BTC", RecipientID: r1.ID}, 2, 900},
		{"other recipient", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, RecipientID: r2.ID}, 1, 200},
		{"recipient, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0, RecipientID: r1.ID}, 1, 800},
		{"ip, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "198.51.100.1"}, 2, 300},
		{"ip, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, IPAddress: "198.51.100.1"}, 1, 200},
		{"ip, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(-30 * time.Minute), IPAddress: "198.51.100.1"}, 1, 200},
		{"ip, other coin", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "198.51.100.2", Coin: "BTC"}, 0, 0},
		{"ip never seen", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "192.0.2.1"}, 0, 0},
		{"other faucet", store.PayoutWindowParams{FaucetID: g.ID, Since: longAgo}, 1, 1600},
		{"faucet without payouts", store.PayoutWindowParams{FaucetID: 999999, Since: longAgo}, 0, 0},
	}
	for _, c := range cases {
		count, sum, err := st.PayoutWindow(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: PayoutWindow: %v", c.name, err)
			continue
		}
		if count != c.wantCount || sum != c.wantSu {
			t.Errorf("%s: PayoutWindow = (%d, %d), want (%d, %d)", c.name, count, sum, c.wantCount, c.wantSu)
		}
	}
	// The ledger reads the same windows, all at once, with a batch's locks.
	open := &store.PayoutsOpenParams{Faucets: []int64{g.ID, f.ID}}
	for _, c := range cases {
		open.Windows = append(open.Windows, c.p)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		books, err := tx.PayoutsOpen(ctx, open)
		if err != nil {
			return err
		}
		for i, c := range cases {
			if got := books.Windows[i]; got.Count != c.wantCount || got.Sum != c.wantSu {
				t.Errorf("%s: PayoutsOpen's window = %+v, want (%d, %d)", c.name, got, c.wantCount, c.wantSu)
			}
		}
		return nil
	})
}

// bulkLoad runs the bulk load every engine's transactions offer to drip
// bench (store.BulkLoader), outside the product's store.Tx.
func bulkLoad(ctx context.Context, tx store.Tx, p *store.PayoutBulkLoadParams) error {
	bl, ok := tx.(store.BulkLoader)
	if !ok {
		return fmt.Errorf("%T does not implement store.BulkLoader", tx)
	}
	return bl.PayoutBulkLoad(ctx, p)
}

func testPayoutBulkLoad(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	r1, r2, r3 := newUser(t, st, "r1"), newUser(t, st, "r2"), newUser(t, st, "r3")
	outsider := newUser(t, st, "outsider") // after the range: never paid
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 500)
	earlier := pay(t, st, f, r1, "BTC", 100, "", t0)
	depositsBefore := balance(t, st, drip.AccountDeposits, "BTC")

	load := func(count int64) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			return bulkLoad(ctx, tx, &store.PayoutBulkLoadParams{
				FaucetID: f.ID, FirstRecipientID: r1.ID, LastRecipientID: r3.ID,
				Coin: "BTC", Amount: 7, Count: count, CreatedAt: t0.Add(time.Hour),
			})
		})
	}
	load(10) // r1 gets 4, r2 and r3 get 3 each
	load(2)  // round-robin restarts at r1

	if report := reconcile(t, st); report != "" {
		t.Errorf("after bulk loads: %s; want clean", report)
	}
	got := map[string]int64{
		"faucet": balance(t, st, f.AccountID, "BTC"), "r1": balance(t, st, r1.AccountID, "BTC"),
		"r2": balance(t, st, r2.AccountID, "BTC"), "r3": balance(t, st, r3.AccountID, "BTC"),
		"outsider": balance(t, st, outsider.AccountID, "BTC"), "deposits": balance(t, st, drip.AccountDeposits, "BTC"),
	}
	want := map[string]int64{
		"faucet": 400, "r1": 100 + 5*7, "r2": 4 * 7, "r3": 3 * 7,
		"outsider": 0, "deposits": depositsBefore - 12*7, // the loads fund themselves
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("balances after bulk loads of 10 and 2 (-want +got):\n%s", diff)
	}
	count, sum, err := st.PayoutWindow(ctx, &store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(time.Hour)})
	if err != nil {
		t.Fatalf("PayoutWindow: %v", err)
	}
	if count != 12 || sum != 12*7 {
		t.Errorf("loaded payouts: count %d sum %d, want 12 and %d", count, sum, 12*7)
	}
	// The statistics count them (on SQLite from the kept sums, into which
	// the load adds them, D73).
	users, recipients, err := st.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: "BTC", Limit: 10})
	if err != nil {
		t.Fatalf("StatsUsers: %v", err)
	}
	var sums []string
	for _, u := range users {
		sums = append(sums, fmt.Sprintf("%s:%d:%d", u.PayoutUserHash, u.Payouts, u.Amount))
	}
	wantSums := []string{r1.PayoutUserHash + ":6:135", r2.PayoutUserHash + ":4:28", r3.PayoutUserHash + ":3:21"}
	if diff := cmp.Diff(wantSums, sums); diff != "" || recipients != 3 {
		t.Errorf("StatsUsers after bulk loads: %d recipients, want 3 (-want +got):\n%s", recipients, diff)
	}
	list, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Limit: 100})
	if err != nil {
		t.Fatalf("PayoutList: %v", err)
	}
	var to []string
	for _, p := range list {
		to = append(to, p.To)
		if p.ID != earlier.ID && (p.ID < earlier.ID || p.Amount != 7 || p.RecipientID == outsider.ID) {
			t.Errorf("loaded payout %+v: want an id after %d, amount 7, a recipient in the range", p, earlier.ID)
		}
	}
	wantTo := []string{"r2", "r1", "r1", "r3", "r2", "r1", "r3", "r2", "r1", "r3", "r2", "r1", "r1"} // newest first
	if diff := cmp.Diff(wantTo, to); diff != "" {
		t.Errorf("payouts newest first (-want +got):\n%s", diff)
	}

	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return bulkLoad(ctx, tx, &store.PayoutBulkLoadParams{
			FaucetID: f.ID, FirstRecipientID: outsider.ID + 100, LastRecipientID: outsider.ID + 200,
			Coin: "BTC", Amount: 7, Count: 3, CreatedAt: t0,
		})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bulk load to a range without users: err = %v, want ErrNotFound", err)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after a refused bulk load: %s; want clean", report)
	}
}

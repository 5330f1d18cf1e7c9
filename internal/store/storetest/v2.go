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

// The suite's part for the storage of the v2 interface: faucet settings
// (D38, D43), idempotency keys (D35), key spend (D36), statistics and
// transactions (D37), notifications (D43) and listing approval (D44).

// payment is one payout of a batch built by newBatch.
type payment struct {
	to     *drip.User
	coin   string
	amount int64
}

// newBatch debits the faucet for the payments and builds their PayoutBatch
// with reserved ids, as the ledger does (D5); the caller adds the rows it
// tests and calls PayoutsInsert.
func newBatch(ctx context.Context, tx store.Tx, f *drip.Faucet, at time.Time, payments ...payment) (*store.PayoutBatch, error) {
	debits := map[store.BalanceKey]int64{}
	for _, p := range payments {
		debits[store.BalanceKey{Account: f.AccountID, Coin: p.coin}] += p.amount
	}
	if err := tx.BalancesDebit(ctx, debits); err != nil {
		return nil, err
	}
	transferIDs, err := tx.TransferIDsNext(ctx, len(payments))
	if err != nil {
		return nil, err
	}
	payoutIDs, err := tx.PayoutIDsNext(ctx, len(payments))
	if err != nil {
		return nil, err
	}
	b := &store.PayoutBatch{Credits: map[store.BalanceKey]int64{}, CreatedAt: at}
	for i, p := range payments {
		b.Payouts = append(b.Payouts, store.BatchPayout{
			Payout: drip.Payout{ID: payoutIDs[i], FaucetID: f.ID, RecipientID: p.to.ID, To: p.to.Username,
				Coin: p.coin, Amount: p.amount, CreatedAt: at},
			TransferID: transferIDs[i], From: f.AccountID, To: p.to.AccountID,
		})
		b.Credits[store.BalanceKey{Account: p.to.AccountID, Coin: p.coin}] += p.amount
	}
	return b, nil
}

// transfer applies a correct transfer (as move does) in a transaction of
// its own and returns the transfer's id.
func transfer(t testing.TB, st store.Store, coin string, from, to, amount int64, kind string, at time.Time) int64 {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		id, err = move(ctx, tx, coin, from, to, amount, kind, at)
		return err
	})
	return id
}

func testFaucetSettingsAndLowBalanceRoundTrip(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	bystander := newFaucet(t, st, owner, "key2")

	// A new faucet has the default settings and the alert off; its lists
	// come back empty, not nil, so that v2 replies hold [] and {} (D38).
	wantDefault := drip.LowBalance{Thresholds: map[string]int64{}}
	if diff := cmp.Diff(drip.DefaultSettings, f.Settings); diff != "" {
		t.Errorf("settings of a new faucet (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDefault, f.LowBalance); diff != "" {
		t.Errorf("low-balance alert of a new faucet (-want +got):\n%s", diff)
	}

	want := *f
	want.Settings = drip.Settings{
		Description:  "Gouttes gratuites — 每小时一次 💧 <b>\"free\" & fair</b>\n\ttabbed",
		TimerMinutes: 1440,
		Currencies:   []string{"DOGE", "BTC"},
		Categories:   []string{"games", "bitcoin"},
	}
	want.LowBalance = drip.LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": 5000, "DOGE": 1}}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &want) })
	for name, get := range map[string]func() (*drip.Faucet, error){
		"FaucetGetByID":      func() (*drip.Faucet, error) { return st.FaucetGetByID(ctx, f.ID) },
		"FaucetGetByKeyHash": func() (*drip.Faucet, error) { return st.FaucetGetByKeyHash(ctx, "key") },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(&want, got, faucetOpts); diff != "" {
			t.Errorf("%s after FaucetUpdateSettings (-want +got):\n%s", name, diff)
		}
	}
	if got, err := st.FaucetGetByID(ctx, bystander.ID); err != nil ||
		!cmp.Equal(drip.DefaultSettings, got.Settings) || !cmp.Equal(wantDefault, got.LowBalance) {
		t.Errorf("another faucet after the update = %+v, %v; want its defaults kept", got, err)
	}

	// Nil lists and maps are stored as empty ones and read back so.
	cleared := want
	cleared.Settings = drip.Settings{TimerMinutes: 1}
	cleared.LowBalance = drip.LowBalance{}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &cleared) })
	got, err := st.FaucetGetByID(ctx, f.ID)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	wantSettings := drip.Settings{TimerMinutes: 1, Currencies: []string{}, Categories: []string{}}
	if diff := cmp.Diff(wantSettings, got.Settings); diff != "" {
		t.Errorf("settings after clearing them (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDefault, got.LowBalance); diff != "" {
		t.Errorf("low-balance alert after clearing it (-want +got):\n%s", diff)
	}
}

func testIdempotencyInsertGetAndDelete(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)
	pf := pay(t, st, f, alice, "BTC", 100, "", t0)
	pg := pay(t, st, g, alice, "BTC", 30, "", t0)

	insert := func(r drip.Idempotency) error {
		return try(st, func(ctx context.Context, tx store.Tx) error { return tx.IdempotencyInsert(ctx, &r) })
	}
	get := func(faucetID int64, key string) *drip.Idempotency {
		t.Helper()
		got, err := st.IdempotencyGet(ctx, faucetID, key)
		if err != nil {
			t.Fatalf("IdempotencyGet(%d, %q): %v", faucetID, key, err)
		}
		return got
	}

	want := drip.Idempotency{FaucetID: f.ID, Key: "order-42/retry:1", RequestHash: "sha256:9f86d081884c7d65",
		PayoutID: pf.ID, Coin: "BTC", Balance: 900, PayoutUserHash: alice.PayoutUserHash, RateRemaining: 118.73,
		CreatedAt: t0}
	if err := insert(want); err != nil {
		t.Fatalf("IdempotencyInsert: %v", err)
	}
	if diff := cmp.Diff(&want, get(f.ID, want.Key)); diff != "" {
		t.Errorf("IdempotencyGet (-want +got):\n%s", diff)
	}

	// The faucet's key is bound once, whatever the second request is.
	reuse := want
	reuse.RequestHash, reuse.Balance, reuse.CreatedAt = "sha256:other", 1, t0.Add(time.Minute)
	if err := insert(reuse); !errors.Is(err, store.ErrConflict) {
		t.Errorf("IdempotencyInsert of a taken key: err = %v, want ErrConflict", err)
	}
	if diff := cmp.Diff(&want, get(f.ID, want.Key)); diff != "" {
		t.Errorf("IdempotencyGet after a refused reuse (-want +got):\n%s", diff)
	}

	// Keys are scoped per faucet (D35).
	other := drip.Idempotency{FaucetID: g.ID, Key: want.Key, RequestHash: "sha256:g", PayoutID: pg.ID, Coin: "BTC",
		Balance: 970, PayoutUserHash: alice.PayoutUserHash, RateRemaining: 0, CreatedAt: t0}
	if err := insert(other); err != nil {
		t.Fatalf("IdempotencyInsert of the same key under another faucet: %v", err)
	}
	if diff := cmp.Diff(&other, get(g.ID, want.Key)); diff != "" {
		t.Errorf("IdempotencyGet of the other faucet's key (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&want, get(f.ID, want.Key)); diff != "" {
		t.Errorf("IdempotencyGet of the first faucet's key after the other's (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		faucetID int64
		key      string
	}{{f.ID, "order-43"}, {f.ID, "ORDER-42/RETRY:1"}, {f.ID, ""}, {999999, want.Key}} {
		if _, err := st.IdempotencyGet(ctx, c.faucetID, c.key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("IdempotencyGet(%d, %q): err = %v, want ErrNotFound", c.faucetID, c.key, err)
		}
	}

	// Retention (D35): only rows used before the cut-off go.
	for key, at := range map[string]time.Time{"old": t0.Add(-8 * 24 * time.Hour), "edge": t0.Add(-7 * 24 * time.Hour)} {
		r := want
		r.Key, r.CreatedAt = key, at
		if err := insert(r); err != nil {
			t.Fatalf("IdempotencyInsert(%s): %v", key, err)
		}
	}
	deleteBefore := func(before time.Time) int64 {
		t.Helper()
		var n int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			n, err = tx.IdempotencyDeleteBefore(ctx, before)
			return err
		})
		return n
	}
	if n := deleteBefore(t0.Add(-7 * 24 * time.Hour)); n != 1 {
		t.Errorf("IdempotencyDeleteBefore(7 days before) = %d, want 1 (only the 8-day-old key)", n)
	}
	if _, err := st.IdempotencyGet(ctx, f.ID, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IdempotencyGet(old) after the deletion: err = %v, want ErrNotFound", err)
	}
	for _, key := range []string{"edge", want.Key} {
		if got := get(f.ID, key); got.Key != key {
			t.Errorf("IdempotencyGet(%s) = %+v after the deletion; want it kept", key, got)
		}
	}
	if n := deleteBefore(t0.Add(-7 * 24 * time.Hour)); n != 0 {
		t.Errorf("IdempotencyDeleteBefore again = %d, want 0", n)
	}
	if n := deleteBefore(t0.Add(time.Microsecond)); n != 3 {
		t.Errorf("IdempotencyDeleteBefore(just after t0) = %d, want 3 (both faucets' keys and the edge)", n)
	}
	if _, err := st.IdempotencyGet(ctx, g.ID, want.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IdempotencyGet of the other faucet's key after deleting everything: err = %v, want ErrNotFound", err)
	}
}

// The key row is written in the payout's transaction (D35): with the batch,
// and a taken key takes the whole batch down with it.
func testIdempotencyWrittenWithPayoutBatch(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	at := t0.Add(time.Hour)

	var first []drip.Idempotency
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		b, err := newBatch(ctx, tx, f, at, payment{alice, "BTC", 100}, payment{bob, "BTC", 50})
		if err != nil {
			return err
		}
		for i, key := range []string{"k1", "k2"} {
			p := b.Payouts[i].Payout
			b.Idempotency = append(b.Idempotency, drip.Idempotency{FaucetID: f.ID, Key: key,
				RequestHash: "hash-" + key, PayoutID: p.ID, Coin: p.Coin, Balance: 1000 - 100 - 50*int64(i),
				PayoutUserHash: fmt.Sprintf("user-%d", p.RecipientID), RateRemaining: 119.5 - float64(i), CreatedAt: at})
		}
		first = b.Idempotency
		return tx.PayoutsInsert(ctx, b)
	})
	for _, want := range first {
		got, err := st.IdempotencyGet(ctx, f.ID, want.Key)
		if err != nil {
			t.Fatalf("IdempotencyGet(%s) after the batch: %v", want.Key, err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("IdempotencyGet(%s) after the batch (-want +got):\n%s", want.Key, diff)
		}
		if ok, err := st.PayoutExists(ctx, want.PayoutID); err != nil || !ok {
			t.Errorf("PayoutExists(%d) = %v, %v; want the key's payout committed", want.PayoutID, ok, err)
		}
	}

	for _, c := range []struct {
		name string
		keys []string
	}{
		{"a key bound by an earlier batch", []string{"k3", "k1"}},
		{"one key twice in the batch", []string{"k4", "k4"}},
	} {
		var ids []int64
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			b, err := newBatch(ctx, tx, f, at.Add(time.Minute), payment{bob, "BTC", 70}, payment{carol, "BTC", 30})
			if err != nil {
				return err
			}
			ids = ids[:0]
			for i, key := range c.keys {
				p := b.Payouts[i].Payout
				ids = append(ids, p.ID)
				b.Idempotency = append(b.Idempotency, drip.Idempotency{FaucetID: f.ID, Key: key, RequestHash: "h",
					PayoutID: p.ID, Coin: p.Coin, Balance: 1, PayoutUserHash: "u", CreatedAt: at})
			}
			return tx.PayoutsInsert(ctx, b)
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: PayoutsInsert: err = %v, want ErrConflict", c.name, err)
		}
		for _, id := range ids {
			if ok, err := st.PayoutExists(ctx, id); err != nil || ok {
				t.Errorf("%s: PayoutExists(%d) = %v, %v; want false: the batch rolled back", c.name, id, ok, err)
			}
		}
		if _, err := st.IdempotencyGet(ctx, f.ID, c.keys[0]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: IdempotencyGet(%s): err = %v, want ErrNotFound: the batch rolled back", c.name, c.keys[0], err)
		}
	}
	got := map[string]int64{
		"faucet": balance(t, st, f.AccountID, "BTC"), "alice": balance(t, st, alice.AccountID, "BTC"),
		"bob": balance(t, st, bob.AccountID, "BTC"), "carol": balance(t, st, carol.AccountID, "BTC"),
	}
	if diff := cmp.Diff(map[string]int64{"faucet": 850, "alice": 100, "bob": 50, "carol": 0}, got); diff != "" {
		t.Errorf("balances after the refused batches (-want +got):\n%s", diff)
	}
	list, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Limit: 10})
	if err != nil || len(list) != 2 {
		t.Errorf("PayoutList = %+v, %v; want only the first batch's 2 payouts", list, err)
	}
	if txs, total, err := st.TransactionList(ctx, &store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 10}); err != nil || total != 3 {
		t.Errorf("TransactionList = %+v, %d, %v; want the deposit and 2 payouts, no transfer of a refused batch", txs, total, err)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the refused batches: %s; want clean", report)
	}
}

func testKeySpendAddUpToTheCap(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "v1key")
	var k1, k2 int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		k1, err = tx.KeyCreate(ctx, &drip.Key{FaucetID: f.ID, Prefix: "drip_aaaaaaaa", Scopes: []drip.Scope{drip.ScopeSend},
			DailyUSDCapMicros: 1_000_000, CreatedAt: t0}, "hash1")
		if err != nil {
			return err
		}
		k2, err = tx.KeyCreate(ctx, &drip.Key{FaucetID: f.ID, Prefix: "drip_bbbbbbbb", Scopes: []drip.Scope{drip.ScopeSend},
			DailyUSDCapMicros: 1_000_000, CreatedAt: t0}, "hash2")
		return err
	})
	day := t0.Unix() / 86400
	const limit = 1_000_000
	spent := func(key, day int64) int64 {
		t.Helper()
		got, err := st.KeySpendGet(ctx, key, day)
		if err != nil {
			t.Fatalf("KeySpendGet(%d, %d): %v", key, day, err)
		}
		return got
	}
	if got := spent(k1, day); got != 0 {
		t.Errorf("KeySpendGet with nothing spent = %d, want 0", got)
	}

	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			add  int64
			want int64
		}{{600_000, 600_000}, {400_000, limit}} {
			got, err := tx.KeySpendAdd(ctx, k1, day, c.add, limit)
			if err != nil || got != c.want {
				t.Errorf("KeySpendAdd(%d) = %d, %v; want %d, nil", c.add, got, err, c.want)
			}
		}
		// One micro past the cap is refused, and the refusal leaves the
		// spend and the transaction as they were.
		if got, err := tx.KeySpendAdd(ctx, k1, day, 1, limit); !errors.Is(err, store.ErrLimitReached) {
			t.Errorf("KeySpendAdd(1) at the cap = %d, %v; want ErrLimitReached", got, err)
		}
		if got, err := tx.KeySpendGet(ctx, k1, day); err != nil || got != limit {
			t.Errorf("KeySpendGet inside the transaction after a refusal = %d, %v; want %d", got, err, limit)
		}
		got, err := tx.KeySpendAdd(ctx, k1, day, 0, limit)
		if err != nil || got != limit {
			t.Errorf("KeySpendAdd(0) at the cap = %d, %v; want %d, nil", got, err, limit)
		}
		return nil
	})
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.KeySpendAdd(ctx, k1, day, 1, limit)
		return err
	})
	if !errors.Is(err, store.ErrLimitReached) {
		t.Errorf("KeySpendAdd past the cap in a transaction of its own: err = %v, want ErrLimitReached", err)
	}
	// Another day and another key start from nothing; a first add beyond
	// the cap is refused as well.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			key, day, add, want int64
		}{{k1, day + 1, limit, limit}, {k2, day, 250_000, 250_000}, {k1, day - 1, 1, 1}} {
			if got, err := tx.KeySpendAdd(ctx, c.key, c.day, c.add, limit); err != nil || got != c.want {
				t.Errorf("KeySpendAdd(key %d, day %d, %d) = %d, %v; want %d", c.key, c.day, c.add, got, err, c.want)
			}
		}
		if got, err := tx.KeySpendAdd(ctx, k2, day+2, limit+1, limit); !errors.Is(err, store.ErrLimitReached) {
			t.Errorf("first KeySpendAdd of a day beyond the cap = %d, %v; want ErrLimitReached", got, err)
		}
		return nil
	})
	type keyDay struct{ key, day int64 }
	want := map[keyDay]int64{
		{k1, day}: limit, {k1, day + 1}: limit, {k1, day - 1}: 1, {k2, day}: 250_000, {k2, day + 2}: 0,
		{k2, day + 1}: 0, {999999, day}: 0,
	}
	got := map[keyDay]int64{}
	for kd := range want {
		got[kd] = spent(kd.key, kd.day)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(keyDay{})); diff != "" {
		t.Errorf("spend per key and day (-want +got):\n%s", diff)
	}
}

func testStatsDailyByUTCDayAndCoin(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 100000)
	deposit(t, st, f.AccountID, "DOGE", 100000)
	deposit(t, st, g.AccountID, "BTC", 100000)

	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	// since is 20:00 UTC on the 13th, given in another zone.
	since := time.Date(2026, 3, 13, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	pay(t, st, f, alice, "BTC", 1, "", since.Add(-time.Microsecond)) // before since
	pay(t, st, f, bob, "BTC", 2, "", since)
	pay(t, st, f, alice, "BTC", 100, "", midnight.Add(-time.Microsecond))
	pay(t, st, f, bob, "BTC", 200, "", midnight.Add(-time.Hour))
	pay(t, st, f, alice, "BTC", 50, "", midnight.Add(-24*time.Hour)) // the first microsecond of the 14th
	pay(t, st, f, alice, "BTC", 7, "", midnight)
	pay(t, st, f, carol, "DOGE", 9, "", midnight.Add(time.Hour))
	pay(t, st, f, alice, "DOGE", 11, "", midnight.Add(24*time.Hour-time.Microsecond))
	pay(t, st, g, carol, "BTC", 999, "", midnight.Add(-time.Hour)) // another faucet

	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	want := []drip.DailyStat{
		{Day: day(15), Coin: "BTC", Payouts: 1, Amount: 7, Recipients: 1},
		{Day: day(15), Coin: "DOGE", Payouts: 2, Amount: 20, Recipients: 2},
		{Day: day(14), Coin: "BTC", Payouts: 3, Amount: 350, Recipients: 2},
		{Day: day(13), Coin: "BTC", Payouts: 1, Amount: 2, Recipients: 1},
	}
	got, err := st.StatsDaily(ctx, f.ID, since)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StatsDaily (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.Day.Location() != time.UTC {
			t.Errorf("StatsDaily day %v in %v, want UTC", s.Day, s.Day.Location())
		}
	}
	got, err = st.StatsDaily(ctx, f.ID, midnight)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := cmp.Diff(want[:2], got); diff != "" {
		t.Errorf("StatsDaily since midnight (-want +got):\n%s", diff)
	}
	got, err = st.StatsDaily(ctx, newFaucet(t, st, owner, "key3").ID, since)
	if err != nil || len(got) != 0 {
		t.Errorf("StatsDaily of a faucet that never paid = %+v, %v; want empty", got, err)
	}
}

func testStatsUsersLargestFirstAndPaged(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol, dave := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol"), newUser(t, st, "dave")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, f.AccountID, "DOGE", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)
	pay(t, st, f, alice, "BTC", 10, "", t0)
	pay(t, st, f, bob, "BTC", 50, "", t0.Add(time.Minute))
	pay(t, st, f, alice, "BTC", 20, "", t0.Add(2*time.Minute))
	pay(t, st, f, carol, "BTC", 30, "", t0.Add(3*time.Minute)) // ties with alice: the earlier user first
	pay(t, st, f, dave, "DOGE", 1000, "", t0)                  // another coin
	pay(t, st, g, dave, "BTC", 5000, "", t0)                   // another faucet

	all := []drip.UserStat{
		{PayoutUserHash: bob.PayoutUserHash, Payouts: 1, Amount: 50, LastPayoutAt: t0.Add(time.Minute)},
		{PayoutUserHash: alice.PayoutUserHash, Payouts: 2, Amount: 30, LastPayoutAt: t0.Add(2 * time.Minute)},
		{PayoutUserHash: carol.PayoutUserHash, Payouts: 1, Amount: 30, LastPayoutAt: t0.Add(3 * time.Minute)},
	}
	for _, c := range []struct {
		name      string
		p         store.PageParams
		want      []drip.UserStat
		wantTotal int64
	}{
		{"first page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2}, all[:2], 3},
		{"second page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 2}, all[2:], 3},
		{"past the end", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 4}, nil, 3},
		{"one page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 50}, all, 3},
		{"other coin", store.PageParams{ID: f.ID, Coin: "DOGE", Limit: 50}, []drip.UserStat{
			{PayoutUserHash: dave.PayoutUserHash, Payouts: 1, Amount: 1000, LastPayoutAt: t0}}, 1},
		{"a coin never paid", store.PageParams{ID: f.ID, Coin: "LTC", Limit: 50}, nil, 0},
	} {
		got, total, err := st.StatsUsers(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: StatsUsers: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: StatsUsers (-want +got):\n%s", c.name, diff)
		}
		if total != c.wantTotal {
			t.Errorf("%s: StatsUsers total = %d, want %d", c.name, total, c.wantTotal)
		}
	}
}

func testTransactionListSignedNewestFirst(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	f := newFaucet(t, st, owner, "key")

	// payout pays like pay, and also returns the payout's transfer.
	payout := func(r *drip.User, coin string, amount int64, at time.Time) (tr, id int64) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			if tr, err = move(ctx, tx, coin, f.AccountID, r.AccountID, amount, "payout", at); err != nil {
				return err
			}
			id, err = tx.PayoutInsert(ctx, &drip.Payout{FaucetID: f.ID, RecipientID: r.ID, To: r.Username,
				Coin: coin, Amount: amount, CreatedAt: at}, tr)
			return err
		})
		return tr, id
	}
	dep1 := transfer(t, st, "BTC", drip.AccountDeposits, f.AccountID, 1000, "deposit", t0)
	transfer(t, st, "DOGE", drip.AccountDeposits, f.AccountID, 500, "deposit", t0)
	tr1, p1 := payout(alice, "BTC", 100, t0.Add(time.Minute))
	trDoge, pDoge := payout(bob, "DOGE", 40, t0.Add(90*time.Second))
	tr2, p2 := payout(bob, "BTC", 200, t0.Add(2*time.Minute))
	fee := transfer(t, st, "BTC", f.AccountID, drip.AccountListing, 50, "listing_fee", t0.Add(3*time.Minute))
	dep2 := transfer(t, st, "BTC", drip.AccountDeposits, f.AccountID, 25, "deposit", t0.Add(4*time.Minute))

	btc := []drip.Transaction{
		{ID: dep2, Kind: "deposit", Coin: "BTC", Amount: 25, CreatedAt: t0.Add(4 * time.Minute)},
		{ID: fee, Kind: "listing_fee", Coin: "BTC", Amount: -50, CreatedAt: t0.Add(3 * time.Minute)},
		{ID: tr2, Kind: "payout", Coin: "BTC", Amount: -200, PayoutID: p2, CreatedAt: t0.Add(2 * time.Minute)},
		{ID: tr1, Kind: "payout", Coin: "BTC", Amount: -100, PayoutID: p1, CreatedAt: t0.Add(time.Minute)},
		{ID: dep1, Kind: "deposit", Coin: "BTC", Amount: 1000, CreatedAt: t0},
	}
	for _, c := range []struct {
		name      string
		p         store.PageParams
		want      []drip.Transaction
		wantTotal int64
	}{
		{"one page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 50}, btc, 5},
		{"first page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2}, btc[:2], 5},
		{"middle page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2, Offset: 2}, btc[2:4], 5},
		{"last page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2, Offset: 4}, btc[4:], 5},
		{"past the end", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2, Offset: 6}, nil, 5},
		{"other coin", store.PageParams{ID: f.AccountID, Coin: "DOGE", Limit: 1}, []drip.Transaction{
			{ID: trDoge, Kind: "payout", Coin: "DOGE", Amount: -40, PayoutID: pDoge, CreatedAt: t0.Add(90 * time.Second)},
		}, 2},
		{"the recipient's side", store.PageParams{ID: alice.AccountID, Coin: "BTC", Limit: 50}, []drip.Transaction{
			{ID: tr1, Kind: "payout", Coin: "BTC", Amount: 100, PayoutID: p1, CreatedAt: t0.Add(time.Minute)},
		}, 1},
		{"a coin never held", store.PageParams{ID: f.AccountID, Coin: "LTC", Limit: 50}, nil, 0},
		{"unknown account", store.PageParams{ID: 999999, Coin: "BTC", Limit: 50}, nil, 0},
	} {
		got, total, err := st.TransactionList(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: TransactionList: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: TransactionList (-want +got):\n%s", c.name, diff)
		}
		if total != c.wantTotal {
			t.Errorf("%s: TransactionList total = %d, want %d", c.name, total, c.wantTotal)
		}
	}
}

func testNotificationInsertAndList(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)

	insert := func(n drip.Notification) drip.Notification {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			n.ID, err = tx.NotificationInsert(ctx, &n)
			return err
		})
		return n
	}
	n1 := insert(drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500, Balance: 499, CreatedAt: t0})
	ng := insert(drip.Notification{FaucetID: g.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 10, Balance: 0, CreatedAt: t0})
	n2 := insert(drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 7, Balance: 3, CreatedAt: t0.Add(time.Minute)})

	// A batch's notifications are written with its payouts, at its time.
	at := t0.Add(time.Hour)
	nb := drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 950, Balance: 900, CreatedAt: at}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		b, err := newBatch(ctx, tx, f, at, payment{alice, "BTC", 100})
		if err != nil {
			return err
		}
		b.Notifications = []drip.Notification{nb}
		return tx.PayoutsInsert(ctx, b)
	})
	list, err := st.NotificationListByFaucet(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("NotificationListByFaucet: %v", err)
	}
	if len(list) > 0 {
		nb.ID = list[0].ID
	}
	if nb.ID <= n2.ID {
		t.Errorf("the batch's notification has id %d; want one after %d", nb.ID, n2.ID)
	}
	if diff := cmp.Diff([]drip.Notification{nb, n2, n1}, list); diff != "" {
		t.Errorf("NotificationListByFaucet, newest first (-want +got):\n%s", diff)
	}
	if got, err := st.NotificationListByFaucet(ctx, f.ID, 2); err != nil || !cmp.Equal([]drip.Notification{nb, n2}, got) {
		t.Errorf("NotificationListByFaucet(limit 2) = %+v, %v; want the 2 newest", got, err)
	}
	if got, err := st.NotificationListByFaucet(ctx, g.ID, 10); err != nil || !cmp.Equal([]drip.Notification{ng}, got) {
		t.Errorf("NotificationListByFaucet(other faucet) = %+v, %v; want its one", got, err)
	}
	if got, err := st.NotificationListByFaucet(ctx, 999999, 10); err != nil || len(got) != 0 {
		t.Errorf("NotificationListByFaucet(unknown faucet) = %+v, %v; want empty", got, err)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the batch: %s; want clean", report)
	}
}

// The outbox as metrics read it: notifications neither sent nor given up,
// and the oldest one's time; sent ones and those out of attempts leave it.
func testNotificationBacklog(t *testing.T, st store.Store) {
	ctx := context.Background()
	backlog := func(maxAttempts int) (int64, time.Time) {
		t.Helper()
		n, oldest, err := st.NotificationBacklog(ctx, maxAttempts)
		if err != nil {
			t.Fatalf("NotificationBacklog: %v", err)
		}
		return n, oldest
	}
	if n, oldest := backlog(8); n != 0 || !oldest.IsZero() {
		t.Fatalf("empty outbox: %d, %v; want 0 and the zero time", n, oldest)
	}
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	var ns []drip.Notification
	for i, at := range []time.Time{t0.Add(time.Minute), t0, t0.Add(2 * time.Minute)} {
		n := drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500, Balance: int64(i), CreatedAt: at}
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			n.ID, err = tx.NotificationInsert(ctx, &n)
			return err
		})
		ns = append(ns, n)
	}
	if n, oldest := backlog(8); n != 3 || !oldest.Equal(t0) {
		t.Errorf("three waiting: %d, %v; want 3, %v", n, oldest, t0)
	}
	// The oldest is sent; the next one failed twice, which is its last
	// attempt when two are allowed.
	sent := t0.Add(time.Hour)
	ns[1].SentAt, ns[1].Attempts = &sent, 1
	ns[0].Attempts, ns[0].LastError = 2, "refused"
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.NotificationRecord(ctx, &ns[1], sent); err != nil {
			return err
		}
		return tx.NotificationRecord(ctx, &ns[0], sent)
	})
	if n, oldest := backlog(8); n != 2 || !oldest.Equal(t0.Add(time.Minute)) {
		t.Errorf("one sent: %d, %v; want 2, %v", n, oldest, t0.Add(time.Minute))
	}
	if n, oldest := backlog(2); n != 1 || !oldest.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("one out of attempts: %d, %v; want 1, %v", n, oldest, t0.Add(2*time.Minute))
	}
}

// The delivery worker's outbox (D43): claims lease, records end them.
func testNotificationClaimLeaseAndRecord(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	insert := func(n drip.Notification) drip.Notification {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			n.ID, err = tx.NotificationInsert(ctx, &n)
			return err
		})
		return n
	}
	n1 := insert(drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500, Balance: 499, CreatedAt: t0})
	n2 := insert(drip.Notification{FaucetID: g.ID, Kind: "low_balance", Coin: "BTC", Threshold: 5, Balance: 4, CreatedAt: t0.Add(time.Minute)})
	n3 := insert(drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 9, Balance: 1, CreatedAt: t0.Add(10 * time.Minute)})

	const lease = time.Minute
	claim := func(now time.Time, maxAttempts, limit int) []drip.Notification {
		t.Helper()
		var got []drip.Notification
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.NotificationClaim(ctx, now, lease, maxAttempts, limit)
			return err
		})
		return got
	}
	check := func(name string, want, got []drip.Notification) {
		t.Helper()
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: NotificationClaim (-want +got):\n%s", name, diff)
		}
	}
	record := func(n drip.Notification, next time.Time) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.NotificationRecord(ctx, &n, next) })
	}

	now := t0.Add(5 * time.Minute)
	check("due ones, oldest first", []drip.Notification{n1, n2}, claim(now, 3, 10))
	check("a second claim at the same time", nil, claim(now, 3, 10))
	check("just before the lease ends", nil, claim(now.Add(lease-time.Microsecond), 3, 10))
	check("the lease ended, limit 1", []drip.Notification{n1}, claim(now.Add(lease), 3, 1))
	check("the lease ended, the rest", []drip.Notification{n2}, claim(now.Add(lease), 3, 10))

	// n1 delivered: never claimed again.
	sent := now.Add(lease + time.Second)
	n1.SentAt, n1.Channel, n1.Attempts = &sent, "smtp", 1
	record(n1, sent)
	// n2 failed: tried again after its next attempt, while attempts remain.
	n2.LastError, n2.Attempts = "smtp: 421 try later", 1
	record(n2, now.Add(time.Hour))

	check("n3 due, n2 not yet", []drip.Notification{n3}, claim(now.Add(30*time.Minute), 3, 10))
	// n3 was never recorded: its lease ended, and it comes back too.
	check("n2 due again with its attempt, n3 after its lease", []drip.Notification{n3, n2}, claim(now.Add(time.Hour), 3, 10))
	n2.LastError, n2.Attempts = "smtp: 421 try later again", 2
	record(n2, now.Add(2*time.Hour))
	check("n2 out of attempts, n3 not", []drip.Notification{n3}, claim(now.Add(24*time.Hour), 2, 10))
	check("n2 with more attempts allowed", []drip.Notification{n2}, claim(now.Add(24*time.Hour), 3, 10))

	list, err := st.NotificationListByFaucet(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("NotificationListByFaucet: %v", err)
	}
	if diff := cmp.Diff([]drip.Notification{n3, n1}, list); diff != "" {
		t.Errorf("NotificationListByFaucet after the deliveries (-want +got):\n%s", diff)
	}
	missing := drip.Notification{ID: 999999, LastError: "x"}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.NotificationRecord(ctx, &missing, now) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("NotificationRecord of an unknown notification: err = %v, want ErrNotFound", err)
	}
}

func testListingCosts(t *testing.T, st store.Store) {
	ctx := context.Background()
	costs := func() map[string]int64 {
		t.Helper()
		got, err := st.ListingCostList(ctx)
		if err != nil {
			t.Fatalf("ListingCostList: %v", err)
		}
		return got
	}
	set := func(coin string, amount int64) error {
		return try(st, func(ctx context.Context, tx store.Tx) error { return tx.ListingCostSet(ctx, coin, amount, t0) })
	}
	if got := costs(); len(got) != 0 {
		t.Errorf("ListingCostList of a fresh store = %v, want empty", got)
	}
	for _, c := range []struct {
		coin   string
		amount int64
		want   map[string]int64
	}{
		{"BTC", 500, map[string]int64{"BTC": 500}},
		{"DOGE", 1000, map[string]int64{"BTC": 500, "DOGE": 1000}},
		{"BTC", 700, map[string]int64{"BTC": 700, "DOGE": 1000}},
		{"DOGE", 0, map[string]int64{"BTC": 700}}, // withdraws the offer
		{"LTC", 0, map[string]int64{"BTC": 700}},  // nothing to withdraw
	} {
		if err := set(c.coin, c.amount); err != nil {
			t.Fatalf("ListingCostSet(%s, %d): %v", c.coin, c.amount, err)
		}
		if diff := cmp.Diff(c.want, costs()); diff != "" {
			t.Errorf("ListingCostList after setting %s to %d (-want +got):\n%s", c.coin, c.amount, diff)
		}
	}
	for _, c := range []struct {
		coin   string
		amount int64
	}{{"NOPE", 5}, {"BTC", -1}} {
		if err := set(c.coin, c.amount); err == nil {
			t.Errorf("ListingCostSet(%s, %d) succeeded; want the schema to refuse it", c.coin, c.amount)
		}
	}
	if diff := cmp.Diff(map[string]int64{"BTC": 700}, costs()); diff != "" {
		t.Errorf("ListingCostList after refused sets (-want +got):\n%s", diff)
	}
}

func testListingRequests(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	h := newFaucet(t, st, owner, "key3")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)

	// request moves the fee and opens the request in one transaction, as
	// the listing service does (D44).
	request := func(f *drip.Faucet, at time.Time) (drip.ListingRequest, error) {
		r := drip.ListingRequest{FaucetID: f.ID, Coin: "BTC", Amount: 700, Status: drip.ListingPending, CreatedAt: at}
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			fee, err := move(ctx, tx, "BTC", f.AccountID, drip.AccountListing, r.Amount, "listing_fee", at)
			if err != nil {
				return err
			}
			r.ID, err = tx.ListingRequestCreate(ctx, &r, fee)
			return err
		})
		return r, err
	}
	decide := func(id int64, status drip.ListingStatus, at time.Time, refund int64) error {
		return try(st, func(ctx context.Context, tx store.Tx) error {
			return tx.ListingRequestDecide(ctx, id, status, at, refund)
		})
	}
	get := func(id int64) *drip.ListingRequest {
		t.Helper()
		got, err := st.ListingRequestGet(ctx, id)
		if err != nil {
			t.Fatalf("ListingRequestGet(%d): %v", id, err)
		}
		return got
	}
	listed := func(want ...*drip.Faucet) {
		t.Helper()
		got, err := st.FaucetListListed(ctx)
		if err != nil {
			t.Fatalf("FaucetListListed: %v", err)
		}
		var wantList []drip.Faucet
		for _, f := range want {
			wantList = append(wantList, *f)
		}
		if diff := cmp.Diff(wantList, got, faucetOpts); diff != "" {
			t.Errorf("FaucetListListed (-want +got):\n%s", diff)
		}
	}

	// The fee must be a real transfer.
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.ListingRequestCreate(ctx, &drip.ListingRequest{FaucetID: f.ID, Coin: "BTC", Amount: 700, CreatedAt: t0}, 999999)
		return err
	})
	if err == nil {
		t.Error("ListingRequestCreate with transfer 999999, which does not exist, succeeded; want a foreign key error")
	}

	r1, err := request(f, t0)
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet (-want +got):\n%s", diff)
	}
	if _, err := request(f, t0.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second request while one is pending: err = %v, want ErrConflict", err)
	}
	listed() // pending is not listed

	approvedAt := t0.Add(time.Hour)
	if err := decide(r1.ID, drip.ListingApproved, approvedAt, 0); err != nil {
		t.Fatalf("approving: %v", err)
	}
	r1.Status, r1.DecidedAt = drip.ListingApproved, &approvedAt
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet after approval (-want +got):\n%s", diff)
	}
	for _, status := range []drip.ListingStatus{drip.ListingApproved, drip.ListingRejected} {
		if err := decide(r1.ID, status, approvedAt.Add(time.Hour), 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deciding (%s) an approved request: err = %v, want ErrNotFound", status, err)
		}
	}
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet after refused second decisions (-want +got):\n%s", diff)
	}
	if _, err := request(f, t0.Add(2*time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a request of an approved faucet: err = %v, want ErrConflict", err)
	}
	listed(f)

	// A rejected request (refunded) leaves the faucet free to ask again.
	r2, err := request(g, t0)
	if err != nil {
		t.Fatalf("g's request: %v", err)
	}
	rejectedAt := t0.Add(3 * time.Hour)
	refund := transfer(t, st, "BTC", drip.AccountListing, g.AccountID, r2.Amount, "listing_refund", rejectedAt)
	if err := decide(r2.ID, drip.ListingRejected, rejectedAt, refund); err != nil {
		t.Fatalf("rejecting: %v", err)
	}
	r2.Status, r2.DecidedAt = drip.ListingRejected, &rejectedAt
	if diff := cmp.Diff(&r2, get(r2.ID)); diff != "" {
		t.Errorf("ListingRequestGet after rejection (-want +got):\n%s", diff)
	}
	r3, err := request(g, t0.Add(4*time.Hour))
	if err != nil {
		t.Fatalf("a request after a rejection: %v, want nil", err)
	}
	listed(f)

	for _, c := range []struct {
		status drip.ListingStatus
		want   []drip.ListingRequest
	}{
		{drip.ListingPending, []drip.ListingRequest{r3}},
		{drip.ListingApproved, []drip.ListingRequest{r1}},
		{drip.ListingRejected, []drip.ListingRequest{r2}},
	} {
		got, err := st.ListingRequestListByStatus(ctx, c.status)
		if err != nil {
			t.Fatalf("ListingRequestListByStatus(%s): %v", c.status, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ListingRequestListByStatus(%s) (-want +got):\n%s", c.status, diff)
		}
	}
	for _, c := range []struct {
		faucet *drip.Faucet
		want   []drip.ListingRequest
	}{{f, []drip.ListingRequest{r1}}, {g, []drip.ListingRequest{r3, r2}}, {h, nil}} {
		got, err := st.ListingRequestListByFaucet(ctx, c.faucet.ID)
		if err != nil {
			t.Fatalf("ListingRequestListByFaucet(%d): %v", c.faucet.ID, err)
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ListingRequestListByFaucet(%d), newest first (-want +got):\n%s", c.faucet.ID, diff)
		}
	}

	if err := decide(r3.ID, drip.ListingApproved, t0.Add(5*time.Hour), 0); err != nil {
		t.Fatalf("approving g's second request: %v", err)
	}
	listed(f, g)

	if err := decide(999999, drip.ListingApproved, t0, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deciding an unknown request: err = %v, want ErrNotFound", err)
	}
	if got, err := st.ListingRequestGet(ctx, 999999); !errors.Is(err, store.ErrNotFound) || got != nil {
		t.Errorf("ListingRequestGet(unknown) = %+v, %v; want nil, ErrNotFound", got, err)
	}
	got := map[string]int64{
		"f": balance(t, st, f.AccountID, "BTC"), "g": balance(t, st, g.AccountID, "BTC"),
		"listing": balance(t, st, drip.AccountListing, "BTC"),
	}
	// Refused requests rolled their fee back; g's rejected fee came back.
	if diff := cmp.Diff(map[string]int64{"f": 9300, "g": 9300, "listing": 1400}, got); diff != "" {
		t.Errorf("balances after the requests (-want +got):\n%s", diff)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the listing requests: %s; want clean", report)
	}
}

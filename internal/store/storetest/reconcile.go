package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the reconcile queries (D3).

func testReconcileClean(t *testing.T, st store.Store) {
	if report := reconcile(t, st); report != "" {
		t.Errorf("fresh store: %s; want clean", report)
	}
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 50)
	pay(t, st, f, alice, "BTC", 300, "", t0)
	pay(t, st, f, alice, "DOGE", 50, "", t0) // a balance back at zero is still consistent
	transfer(t, st, "BTC", f.AccountID, drip.AccountListing, 100, "listing", t0)
	if report := reconcile(t, st); report != "" {
		t.Errorf("ledger of correct transfers: %s; want clean", report)
	}
}

func testReconcileBroken(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	good := pay(t, st, f, alice, "BTC", 100, "", t0)

	// 1. Money from nowhere: a credit without a transfer.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 50)
		return err
	})
	// 2. A journal entry whose balances never moved.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.TransferInsert(ctx, &store.Transfer{Coin: "DOGE", From: f.AccountID, To: alice.AccountID, Amount: 70, Kind: "payout", CreatedAt: t0})
		return err
	})
	// 3. A payout whose transfer says another amount.
	var bad int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		transfer, err := move(ctx, tx, "BTC", f.AccountID, alice.AccountID, 200, "payout", t0)
		if err != nil {
			return err
		}
		bad, err = tx.PayoutInsert(ctx, &drip.Payout{FaucetID: f.ID, RecipientID: alice.ID, To: "alice", Coin: "BTC", Amount: 300, CreatedAt: t0}, transfer)
		return err
	})

	sums, err := st.ReconcileCoinSums(ctx)
	if err != nil {
		t.Fatalf("ReconcileCoinSums: %v", err)
	}
	if diff := cmp.Diff([]store.CoinSum{{Coin: "BTC", Sum: 50}}, sums); diff != "" {
		t.Errorf("ReconcileCoinSums (-want +got):\n%s", diff)
	}
	accounts, err := st.ReconcileAccounts(ctx)
	if err != nil {
		t.Fatalf("ReconcileAccounts: %v", err)
	}
	wantAccounts := []store.AccountMismatch{
		{AccountID: alice.AccountID, Coin: "BTC", Balance: 350, Journal: 300},
		{AccountID: alice.AccountID, Coin: "DOGE", Balance: 0, Journal: 70},
		{AccountID: f.AccountID, Coin: "DOGE", Balance: 0, Journal: -70},
	}
	if alice.AccountID > f.AccountID {
		wantAccounts = append(wantAccounts[2:], wantAccounts[:2]...)
	}
	if diff := cmp.Diff(wantAccounts, accounts); diff != "" {
		t.Errorf("ReconcileAccounts (-want +got):\n%s", diff)
	}
	payouts, err := st.ReconcilePayouts(ctx)
	if err != nil {
		t.Fatalf("ReconcilePayouts: %v", err)
	}
	if diff := cmp.Diff([]int64{bad}, payouts); diff != "" {
		t.Errorf("ReconcilePayouts (-want +got):\n%s (payout %d is correct)", diff, good.ID)
	}
}

// testReconcileNamesNobody: a payout naming a recipient or a faucet that
// does not exist never goes unnoticed. Payouts keep no foreign keys on
// either engine (D64), so the database accepts the row, and reconcile
// reports it (D3). A refusal fails the test: it would mean the schema
// checks a key on every payout again, the cost D64 took away.
func testReconcileNamesNobody(t *testing.T, st store.Store) {
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	good := pay(t, st, f, alice, "BTC", 100, "", t0)
	for name, p := range map[string]drip.Payout{
		"an unknown recipient": {FaucetID: f.ID, RecipientID: 999999, To: "nobody", Coin: "BTC", Amount: 10, CreatedAt: t0},
		"an unknown faucet":    {FaucetID: 999999, RecipientID: alice.ID, To: "alice", Coin: "BTC", Amount: 10, CreatedAt: t0},
	} {
		var id int64
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			tr, err := move(ctx, tx, "BTC", f.AccountID, alice.AccountID, p.Amount, "payout", t0)
			if err != nil {
				return err
			}
			id, err = tx.PayoutInsert(ctx, &p, tr)
			return err
		})
		if err != nil {
			t.Errorf("a payout naming %s: refused (%v), want it written without a foreign key (D64)", name, err)
			continue
		}
		payouts, err := st.ReconcilePayouts(context.Background())
		if err != nil {
			t.Fatalf("ReconcilePayouts: %v", err)
		}
		if !slices.Contains(payouts, id) || slices.Contains(payouts, good.ID) {
			t.Errorf("a payout naming %s (%d) was written; ReconcilePayouts = %v, want it reported and not %d", name, id, payouts, good.ID)
		}
	}

	// On PostgreSQL idempotency rows name their faucet and payout without
	// a foreign key either: a row naming a payout that does not exist is
	// written, and reported. SQLite keeps the two keys (D64: they cost its
	// writer nothing measurable) and refuses it. On both, a row naming
	// another faucet's payout, or giving its payout another coin, is
	// written (no key can tell) and reported; a right one is not.
	other := newFaucet(t, st, owner, "other key")
	kept := pay(t, st, f, alice, "BTC", 50, "", t0)
	recoined := pay(t, st, f, alice, "BTC", 20, "", t0)
	keyed := st.Engine() == "sqlite"
	wrong := []int64{good.ID, recoined.ID}
	if !keyed {
		wrong = append(wrong, 999999)
	}
	for _, k := range []drip.Idempotency{
		{FaucetID: f.ID, Key: "lost", PayoutID: 999999, Coin: "BTC"},
		{FaucetID: other.ID, Key: "borrowed", PayoutID: good.ID, Coin: "BTC"},
		{FaucetID: f.ID, Key: "recoined", PayoutID: recoined.ID, Coin: "DOGE"},
		{FaucetID: f.ID, Key: "right", PayoutID: kept.ID, Coin: "BTC"},
	} {
		k.RequestHash, k.PayoutUserHash, k.CreatedAt = "hash", alice.PayoutUserHash, t0
		err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.IdempotencyInsert(ctx, &k) })
		switch {
		case keyed && k.PayoutID == 999999:
			if err == nil {
				t.Errorf("idempotency row %q naming payout 999999: written, want SQLite's foreign key to refuse it", k.Key)
			}
		case err != nil:
			t.Errorf("idempotency row %q naming payout %d: refused (%v), want it written", k.Key, k.PayoutID, err)
		}
	}
	payouts, err := st.ReconcilePayouts(context.Background())
	if err != nil {
		t.Fatalf("ReconcilePayouts: %v", err)
	}
	for _, id := range wrong {
		if !slices.Contains(payouts, id) {
			t.Errorf("ReconcilePayouts = %v, want %d reported (the borrowed, recoined and missing payouts are %d, %d and 999999)",
				payouts, id, good.ID, recoined.ID)
		}
	}
	if slices.Contains(payouts, kept.ID) {
		t.Errorf("ReconcilePayouts = %v, want %d, the payout a right idempotency row names, not reported", payouts, kept.ID)
	}
}

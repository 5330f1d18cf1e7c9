package storetest

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's shared fixtures: the reference time, the transaction
// helpers, and the factories every part builds its rows with (users,
// faucets, funded accounts, payouts, batches) and the ledger check.

// t0 is the suite's reference time: microsecond precision, as stored (D30).
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// faucetOpts compares faucets read back from JSON columns: an empty list
// may come back as nil, and netip.Prefix compares by value.
var faucetOpts = cmp.Options{
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// transact runs fn in a transaction and fails the test if it does not commit.
func transact(t testing.TB, st store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := st.Transact(ctx, func(tx store.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("Transact: %v", err)
	}
}

// try runs fn in a transaction and returns its outcome, for expected failures.
func try(st store.Store, fn func(ctx context.Context, tx store.Tx) error) error {
	ctx := context.Background()
	return st.Transact(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
}

// newUsers creates n users as newUser does, named user0, user1 ...
func newUsers(t testing.TB, st store.Store, n int) []*drip.User {
	t.Helper()
	users := make([]*drip.User, n)
	for i := range users {
		users[i] = newUser(t, st, fmt.Sprintf("user%d", i))
	}
	return users
}

// newUser creates a verified, active user with a wallet account and a payout hash.
func newUser(t testing.TB, st store.Store, name string) *drip.User {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "user", t0)
		if err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{
			AccountID: acct, Username: name, Email: name + "@example.com",
			PasswordHash: "argon2id$" + name, EmailVerified: true, CreatedAt: t0,
		})
		if err != nil {
			return err
		}
		return tx.UserSetPayoutHash(ctx, id, fmt.Sprintf("%040x", id))
	})
	u, err := st.UserGetByID(context.Background(), id)
	if err != nil {
		t.Fatalf("UserGetByID(%d): %v", id, err)
	}
	return u
}

// newFaucet creates a faucet of owner with its own account and key hash.
func newFaucet(t testing.TB, st store.Store, owner *drip.User, keyHash string) *drip.Faucet {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "faucet", t0)
		if err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: owner.ID, AccountID: acct, Name: "Faucet " + keyHash,
			Domain: keyHash + ".example.com", URL: "https://" + keyHash + ".example.com/",
			APIKeyHash: keyHash, Rules: drip.DefaultRules, CreatedAt: t0,
		})
		return err
	})
	f, err := st.FaucetGetByID(context.Background(), id)
	if err != nil {
		t.Fatalf("FaucetGetByID(%d): %v", id, err)
	}
	return f
}

// move applies a correct double-entry transfer, as the ledger does (D2).
func move(ctx context.Context, tx store.Tx, coin string, from, to, amount int64, kind string, at time.Time) (int64, error) {
	var err error
	if from == drip.AccountDeposits {
		_, err = tx.BalanceCredit(ctx, from, coin, -amount)
	} else {
		_, err = tx.BalanceDebit(ctx, from, coin, amount)
	}
	if err != nil {
		return 0, err
	}
	if _, err := tx.BalanceCredit(ctx, to, coin, amount); err != nil {
		return 0, err
	}
	return tx.TransferInsert(ctx, &store.Transfer{Coin: coin, From: from, To: to, Amount: amount, Kind: kind, CreatedAt: at})
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

// deposit funds account with amount of coin from system:deposits at t0
// and returns the deposit's transfer id.
func deposit(t testing.TB, st store.Store, account int64, coin string, amount int64) int64 {
	t.Helper()
	return transfer(t, st, coin, drip.AccountDeposits, account, amount, "deposit", t0)
}

// pay records a correct payout (transfer, balances, payout row) and returns it with its id.
func pay(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, ip string, at time.Time) drip.Payout {
	t.Helper()
	p, _ := payTransfer(t, st, f, r, coin, amount, ip, at)
	return p
}

// payTransfer is pay that also returns the id of the payout's transfer.
func payTransfer(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, ip string, at time.Time) (drip.Payout, int64) {
	t.Helper()
	p := drip.Payout{FaucetID: f.ID, RecipientID: r.ID, To: r.Username, Coin: coin, Amount: amount,
		IPAddress: ip, Referral: "ref", CreatedAt: at}
	var tr int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if tr, err = move(ctx, tx, coin, f.AccountID, r.AccountID, amount, "payout", at); err != nil {
			return err
		}
		p.ID, err = tx.PayoutInsert(ctx, &p, tr)
		return err
	})
	return p, tr
}

// newKey stores the v2 key k under hash and returns its id.
func newKey(t testing.TB, st store.Store, k *drip.Key, hash string) int64 {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		id, err = tx.KeyCreate(ctx, k, hash)
		return err
	})
	return id
}

// newNotification stores n in the outbox and returns it with its id.
func newNotification(t testing.TB, st store.Store, n drip.Notification) drip.Notification {
	t.Helper()
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		n.ID, err = tx.NotificationInsert(ctx, &n)
		return err
	})
	return n
}

func balance(t testing.TB, st store.Store, account int64, coin string) int64 {
	t.Helper()
	b, err := st.BalanceGet(context.Background(), account, coin)
	if err != nil {
		t.Fatalf("BalanceGet(%d, %s): %v", account, coin, err)
	}
	return b
}

// reconcile runs the three reconcile queries and describes every finding;
// "" means the ledger holds its invariant (D3).
func reconcile(t testing.TB, st store.Reader) string {
	t.Helper()
	ctx := context.Background()
	sums, err := st.ReconcileCoinSums(ctx)
	if err != nil {
		t.Fatalf("ReconcileCoinSums: %v", err)
	}
	accounts, err := st.ReconcileAccounts(ctx)
	if err != nil {
		t.Fatalf("ReconcileAccounts: %v", err)
	}
	payouts, err := st.ReconcilePayouts(ctx)
	if err != nil {
		t.Fatalf("ReconcilePayouts: %v", err)
	}
	events, err := st.ReconcileEvents(ctx)
	if err != nil {
		t.Fatalf("ReconcileEvents: %v", err)
	}
	stats, err := st.ReconcileStatistics(ctx)
	if err != nil {
		t.Fatalf("ReconcileStatistics: %v", err)
	}
	if len(sums)+len(accounts)+len(payouts)+len(events)+len(stats) == 0 {
		return ""
	}
	return fmt.Sprintf("coin sums %+v, accounts %+v, payouts %v, events %v, statistics %v", sums, accounts, payouts, events, stats)
}

// payment is one payout of a batch built by newBatch.
type payment struct {
	to     *drip.User
	coin   string
	amount int64
}

// newBatch opens a batch for the payments and builds their PayoutBatch,
// with the faucet's debits and reserved ids, as the ledger does (D5); the
// caller adds the rows it tests and calls PayoutsInsert.
func newBatch(ctx context.Context, tx store.Tx, f *drip.Faucet, at time.Time, payments ...payment) (*store.PayoutBatch, error) {
	debits := map[store.BalanceKey]int64{}
	var keys []store.BalanceKey
	for _, p := range payments {
		k := store.BalanceKey{Account: f.AccountID, Coin: p.coin}
		if _, ok := debits[k]; !ok {
			keys = append(keys, k)
		}
		debits[k] += p.amount
	}
	open, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Balances: keys, IDs: len(payments)})
	if err != nil {
		return nil, err
	}
	transferIDs, payoutIDs := open.TransferIDs, open.PayoutIDs
	b := &store.PayoutBatch{Debits: debits, Credits: map[store.BalanceKey]int64{}, CreatedAt: at}
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

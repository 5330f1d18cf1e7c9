package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the ledger (D2, D5): accounts, balances, transfers
// and an account's transactions (D37).

func testAccountCreate(t *testing.T, st store.Store) {
	seen := map[int64]bool{}
	for _, kind := range []string{"user", "faucet", "system", "user"} {
		var id int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			id, err = tx.AccountCreate(ctx, kind, t0)
			return err
		})
		// Ids 1 and 2 are the fixed system accounts (D2).
		if id <= drip.AccountListing || seen[id] {
			t.Errorf("AccountCreate(%s) = %d; want a new id above %d (seen %v)", kind, id, drip.AccountListing, seen)
		}
		seen[id] = true
		if b := balance(t, st, id, "BTC"); b != 0 {
			t.Errorf("balance of new account %d = %d, want 0", id, b)
		}
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.AccountCreate(ctx, "bogus", t0)
		return err
	})
	if err == nil {
		t.Error("AccountCreate of an unknown kind succeeded; want the CHECK to refuse it")
	}
	// Foreign keys are on (D30): no balance of an account that does not exist.
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceCredit(ctx, 999999, "BTC", 5)
		return err
	})
	if err == nil {
		t.Error("BalanceCredit to account 999999, which does not exist, succeeded; want a foreign key error")
	}
}

func testBalanceOfNeverHeldCoinIsZero(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 7)
	for _, coin := range []string{"DOGE", "XRP"} {
		if b, err := st.BalanceGet(ctx, alice.AccountID, coin); err != nil || b != 0 {
			t.Errorf("BalanceGet(alice, never-held %s) = %d, %v; want 0, nil", coin, b, err)
		}
	}
	if b, err := st.BalanceGet(ctx, 999999, "BTC"); err != nil || b != 0 {
		t.Errorf("BalanceGet(unknown account) = %d, %v; want 0, nil", b, err)
	}
	if got, err := st.BalanceList(ctx, newUser(t, st, "bob").AccountID); err != nil || len(got) != 0 {
		t.Errorf("BalanceList of an account that never held a coin = %v, %v; want empty", got, err)
	}
}

func testBalanceCreditAndList(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	var got []int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			coin   string
			amount int64
		}{{"XRP", 5}, {"BTC", 100}, {"BTC", 23}, {"DOGE", 1}} {
			after, err := tx.BalanceCredit(ctx, alice.AccountID, c.coin, c.amount)
			if err != nil {
				return err
			}
			got = append(got, after)
		}
		return nil
	})
	if diff := cmp.Diff([]int64{5, 100, 123, 1}, got); diff != "" {
		t.Errorf("balances returned by BalanceCredit (-want +got):\n%s", diff)
	}
	list, err := st.BalanceList(ctx, alice.AccountID)
	if err != nil {
		t.Fatalf("BalanceList: %v", err)
	}
	// In the coins' order, not the order they were first held in.
	want := []drip.Balance{{Coin: "BTC", Amount: 123}, {Coin: "DOGE", Amount: 1}, {Coin: "XRP", Amount: 5}}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("BalanceList (-want +got):\n%s", diff)
	}
}

func testBalanceDebitRefusesOverdraft(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 100)
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 101); !errors.Is(err, store.ErrInsufficientFunds) {
			t.Errorf("BalanceDebit(101 of 100): err = %v, want ErrInsufficientFunds", err)
		}
		if _, err := tx.BalanceDebit(ctx, alice.AccountID, "DOGE", 1); !errors.Is(err, store.ErrInsufficientFunds) {
			t.Errorf("BalanceDebit of a never-held coin: err = %v, want ErrInsufficientFunds", err)
		}
		// The refusal changed nothing and left the transaction usable: the
		// ledger commits a payout.failed event after it.
		if b, err := tx.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 100 {
			t.Errorf("balance inside the transaction after a refused debit = %d, %v; want 100", b, err)
		}
		after, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 40)
		if err != nil || after != 60 {
			t.Errorf("BalanceDebit(40 of 100) = %d, %v; want 60, nil", after, err)
		}
		after, err = tx.BalanceDebit(ctx, alice.AccountID, "BTC", 60)
		if err != nil || after != 0 {
			t.Errorf("BalanceDebit(60 of 60) = %d, %v; want 0, nil (a balance may reach zero)", after, err)
		}
		return nil
	})
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after debits = %d, want 0", b)
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 1)
		return err
	})
	if !errors.Is(err, store.ErrInsufficientFunds) {
		t.Errorf("Transact returning a refused debit: err = %v, want ErrInsufficientFunds", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after a refused debit = %d, want 0", b)
	}
}

func testBalanceNeverNegativeExceptDeposits(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, alice.AccountID, "BTC", 5)
	// D2: the database itself refuses a negative balance, even if code
	// forgets BalanceDebit: a credit of a negative amount is not a way around.
	for _, c := range []struct {
		name    string
		account int64
		coin    string
		amount  int64
	}{
		{"user below zero", alice.AccountID, "BTC", -6},
		{"user's never-held coin", alice.AccountID, "DOGE", -1},
		{"faucet", f.AccountID, "BTC", -1},
		{"system:listing", drip.AccountListing, "BTC", -1},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.BalanceCredit(ctx, c.account, c.coin, c.amount)
			return err
		})
		if err == nil {
			t.Errorf("BalanceCredit(%s, %d %s) succeeded; want the balance CHECK to refuse it", c.name, c.amount, c.coin)
		}
		if b := balance(t, st, c.account, c.coin); b < 0 {
			t.Errorf("balance of %s = %d after a refused credit; want it unchanged", c.name, b)
		}
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 5 {
		t.Errorf("alice's BTC = %d, want 5", b)
	}
	// system:deposits mirrors the outside world and goes negative by design.
	var after int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		after, err = tx.BalanceCredit(ctx, drip.AccountDeposits, "DOGE", -250)
		return err
	})
	if after != -250 || balance(t, st, drip.AccountDeposits, "DOGE") != -250 {
		t.Errorf("system:deposits DOGE = %d, want -250", after)
	}
}

// The ledger's batch path (D5): balances read and held for a set of
// accounts with ids reserved, then debited together.
func testPayoutsOpenAndDebit(t *testing.T, st store.Store) {
	ctx := context.Background()
	a, b := newUser(t, st, "alpha"), newUser(t, st, "beta")
	f := newFaucet(t, st, a, "payouts-open-key")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			acct   int64
			coin   string
			amount int64
		}{{a.AccountID, "BTC", 100}, {a.AccountID, "DOGE", 7}, {b.AccountID, "BTC", 50}} {
			if _, err := tx.BalanceCredit(ctx, c.acct, c.coin, c.amount); err != nil {
				return err
			}
		}
		return nil
	})
	ka, kaDoge, kb := store.BalanceKey{Account: a.AccountID, Coin: "BTC"}, store.BalanceKey{Account: a.AccountID, Coin: "DOGE"}, store.BalanceKey{Account: b.AccountID, Coin: "BTC"}
	never := store.BalanceKey{Account: b.AccountID, Coin: "LTC"}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Faucets: []int64{f.ID}, Balances: []store.BalanceKey{ka, kb, never}, IDs: 3})
		if err != nil {
			return err
		}
		if diff := cmp.Diff(map[store.BalanceKey]int64{ka: 100, kb: 50}, got.Balances); diff != "" {
			t.Errorf("PayoutsOpen balances (-want +got):\n%s", diff)
		}
		for _, ids := range [][]int64{got.TransferIDs, got.PayoutIDs} {
			if len(ids) != 3 || !slices.IsSorted(ids) || ids[0] == ids[1] || ids[1] == ids[2] {
				t.Errorf("PayoutsOpen reserved ids %v, want 3 distinct in ascending order", ids)
			}
		}
		return tx.PayoutsInsert(ctx, &store.PayoutBatch{Debits: map[store.BalanceKey]int64{ka: 60, kb: 50}, CreatedAt: time.Now()})
	})
	for k, want := range map[store.BalanceKey]int64{ka: 40, kaDoge: 7, kb: 0} {
		if got, _ := st.BalanceGet(ctx, k.Account, k.Coin); got != want {
			t.Errorf("balance %+v = %d, want %d", k, got, want)
		}
	}
	// Each debit counts once; credits do not (D66).
	// want's counts are summed over the coins BalanceDebits lists (coin
	// "": every coin the account holds).
	debits := func(when string, want map[store.BalanceKey]int64) {
		t.Helper()
		for k, n := range want {
			counts, err := st.BalanceDebits(ctx, k.Account, k.Coin)
			var got int64
			for _, c := range counts {
				got += c.Debits
				if k.Coin != "" && c.Coin != k.Coin {
					t.Errorf("%s: BalanceDebits(%d, %q) lists coin %q", when, k.Account, k.Coin, c.Coin)
				}
			}
			if err != nil || got != n {
				t.Errorf("%s: BalanceDebits(%d, %q) = %v (sum %d), %v; want sum %d", when, k.Account, k.Coin, counts, got, err, n)
			}
		}
	}
	every := func(acct int64) store.BalanceKey { return store.BalanceKey{Account: acct} }
	debits("after the batch", map[store.BalanceKey]int64{ka: 1, kaDoge: 0, kb: 1, every(a.AccountID): 1, never: 0})
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.PayoutsInsert(ctx, &store.PayoutBatch{Debits: map[store.BalanceKey]int64{ka: 10, kb: 1}, CreatedAt: time.Now()})
	})
	if !errors.Is(err, store.ErrInsufficientFunds) {
		t.Errorf("debit beyond a balance: err = %v, want ErrInsufficientFunds", err)
	}
	if got, _ := st.BalanceGet(ctx, a.AccountID, "BTC"); got != 40 {
		t.Errorf("after the refused debit (rolled back) alpha holds %d, want 40", got)
	}
	debits("after the refused batch", map[store.BalanceKey]int64{ka: 1, kb: 1})
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.BalanceDebit(ctx, a.AccountID, "DOGE", 2); err != nil {
			return err
		}
		_, err := tx.BalanceCredit(ctx, a.AccountID, "BTC", 5)
		return err
	})
	debits("after a debit of DOGE and a credit of BTC", map[store.BalanceKey]int64{ka: 1, kaDoge: 1, every(a.AccountID): 2})
	// Every coin's count, by coin: what a list of every coin is kept under.
	if got, err := st.BalanceDebits(ctx, a.AccountID, ""); err != nil ||
		!slices.Equal(got, []store.DebitCount{{Coin: "BTC", Debits: 1}, {Coin: "DOGE", Debits: 1}}) {
		t.Errorf("BalanceDebits(%d, \"\") = %v, %v; want BTC 1 and DOGE 1", a.AccountID, got, err)
	}
	// The books of a batch hold each balance's count before it, read
	// under its lock: a batch raises it by one.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		books, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Balances: []store.BalanceKey{ka, kaDoge}, IDs: 1})
		if err != nil {
			return err
		}
		if want := map[store.BalanceKey]int64{ka: 1, kaDoge: 1}; !maps.Equal(books.Debits, want) {
			t.Errorf("PayoutsOpen's debit counts = %v, want %v", books.Debits, want)
		}
		return tx.PayoutsInsert(ctx, &store.PayoutBatch{Debits: map[store.BalanceKey]int64{ka: 1}, CreatedAt: time.Now()})
	})
	debits("after a batch of BTC", map[store.BalanceKey]int64{ka: 2, kaDoge: 1})
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Faucets: []int64{f.ID, 999999}, Balances: []store.BalanceKey{ka}, IDs: 1})
		return err
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("PayoutsOpen locking an unknown faucet: err = %v, want ErrNotFound", err)
	}
}

func testConcurrentDebits(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 200)
	const workers = 32
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		succeeded int
		after     []int64
	)
	start := make(chan struct{})
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var b int64
			err := st.Transact(ctx, func(tx store.Tx) error {
				var err error
				b, err = tx.BalanceDebit(ctx, alice.AccountID, "BTC", 10)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				succeeded++
				after = append(after, b)
			case !errors.Is(err, store.ErrInsufficientFunds):
				t.Errorf("concurrent debit: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if succeeded != 20 {
		t.Errorf("%d of %d debits of 10 from 200 succeeded, want 20", succeeded, workers)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("final balance = %d, want 0", b)
	}
	// Every debit saw the one before it: the balances after are 190..0, each once.
	var want []int64
	for b := int64(190); b >= 0; b -= 10 {
		want = append(want, b)
	}
	if diff := cmp.Diff(want, after, cmpopts.SortSlices(func(a, b int64) bool { return a > b })); diff != "" {
		t.Errorf("balances returned by the successful debits (-want +got):\n%s", diff)
	}
}

func testTransferInsert(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	var ids []int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i := 0; i < 3; i++ {
			id, err := tx.TransferInsert(ctx, &store.Transfer{Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: 10, Kind: "payout", CreatedAt: t0})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if len(ids) != 3 || !(ids[0] < ids[1] && ids[1] < ids[2]) {
		t.Errorf("TransferInsert ids = %v; want increasing", ids)
	}
	for name, tr := range map[string]store.Transfer{
		"zero amount":     {Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: 0, Kind: "payout", CreatedAt: t0},
		"negative amount": {Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: -5, Kind: "payout", CreatedAt: t0},
		"to itself":       {Coin: "BTC", From: alice.AccountID, To: alice.AccountID, Amount: 5, Kind: "payout", CreatedAt: t0},
		"unknown coin":    {Coin: "NOPE", From: alice.AccountID, To: bob.AccountID, Amount: 5, Kind: "payout", CreatedAt: t0},
		"unknown account": {Coin: "BTC", From: alice.AccountID, To: 999999, Amount: 5, Kind: "payout", CreatedAt: t0},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.TransferInsert(ctx, &tr)
			return err
		})
		if err == nil {
			t.Errorf("TransferInsert with %s succeeded; want the schema to refuse it", name)
		}
	}
}

func testTransactionListSignedNewestFirst(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	f := newFaucet(t, st, owner, "key")

	// payout pays f's payout to r and returns its transfer and its id.
	payout := func(r *drip.User, coin string, amount int64, at time.Time) (tr, id int64) {
		t.Helper()
		p, tr := payTransfer(t, st, f, r, coin, amount, "", at)
		return tr, p.ID
	}
	dep1 := deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 500)
	tr1, p1 := payout(alice, "BTC", 100, t0.Add(time.Minute))
	trDoge, pDoge := payout(bob, "DOGE", 40, t0.Add(90*time.Second))
	tr2, p2 := payout(bob, "BTC", 200, t0.Add(2*time.Minute))
	fee := transfer(t, st, "BTC", f.AccountID, drip.AccountListing, 50, "listing_fee", t0.Add(3*time.Minute))
	dep2 := transfer(t, st, "BTC", drip.AccountDeposits, f.AccountID, 25, "deposit", t0.Add(4*time.Minute))
	// Newest first is by time, then by transfer id (D70): a transfer
	// recorded later with an earlier time sits at its time, and transfers
	// of one moment, payouts or not, are in the order of their ids.
	late := transfer(t, st, "BTC", drip.AccountDeposits, f.AccountID, 7, "deposit", t0.Add(150*time.Second))
	tr3, p3 := payout(alice, "BTC", 10, t0.Add(5*time.Minute))
	tr4, p4 := payout(bob, "BTC", 20, t0.Add(5*time.Minute))
	dep3 := transfer(t, st, "BTC", drip.AccountDeposits, f.AccountID, 3, "deposit", t0.Add(5*time.Minute))

	btc := []drip.Transaction{
		{ID: dep3, Kind: "deposit", Coin: "BTC", Amount: 3, CreatedAt: t0.Add(5 * time.Minute)},
		{ID: tr4, Kind: "payout", Coin: "BTC", Amount: -20, PayoutID: p4, CreatedAt: t0.Add(5 * time.Minute)},
		{ID: tr3, Kind: "payout", Coin: "BTC", Amount: -10, PayoutID: p3, CreatedAt: t0.Add(5 * time.Minute)},
		{ID: dep2, Kind: "deposit", Coin: "BTC", Amount: 25, CreatedAt: t0.Add(4 * time.Minute)},
		{ID: fee, Kind: "listing_fee", Coin: "BTC", Amount: -50, CreatedAt: t0.Add(3 * time.Minute)},
		{ID: late, Kind: "deposit", Coin: "BTC", Amount: 7, CreatedAt: t0.Add(150 * time.Second)},
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
		{"one page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 50}, btc, 9},
		{"first page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2}, btc[:2], 9},
		{"middle page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 3, Offset: 2}, btc[2:5], 9},
		{"last page", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2, Offset: 8}, btc[8:], 9},
		{"past the end", store.PageParams{ID: f.AccountID, Coin: "BTC", Limit: 2, Offset: 10}, nil, 9},
		{"other coin", store.PageParams{ID: f.AccountID, Coin: "DOGE", Limit: 1}, []drip.Transaction{
			{ID: trDoge, Kind: "payout", Coin: "DOGE", Amount: -40, PayoutID: pDoge, CreatedAt: t0.Add(90 * time.Second)},
		}, 2},
		// What an account receives is found through transfers_to, which
		// holds every transfer but payouts (D67); what it pays, through
		// transfers_from (every transfer but payouts) and the faucet's
		// payouts (D70).
		{"the receiving side", store.PageParams{ID: drip.AccountListing, Coin: "BTC", Limit: 50}, []drip.Transaction{
			{ID: fee, Kind: "listing_fee", Coin: "BTC", Amount: 50, CreatedAt: t0.Add(3 * time.Minute)},
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

package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for idempotency keys (D35).

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

	// Many keys in one read (D61): the bound ones of the faucet, each
	// once, whatever else the list holds.
	odd := want
	odd.Key = `q"uo\te ü`
	if err := insert(odd); err != nil {
		t.Fatalf("IdempotencyInsert(%q): %v", odd.Key, err)
	}
	for _, c := range []struct {
		faucetID int64
		keys     []string
		want     []drip.Idempotency
	}{
		{f.ID, []string{"order-43", want.Key, "", want.Key, odd.Key, "ORDER-42/RETRY:1"}, []drip.Idempotency{odd, want}},
		{g.ID, []string{want.Key, odd.Key}, []drip.Idempotency{other}},
		{f.ID, []string{"order-43"}, nil},
		{f.ID, nil, nil},
		{999999, []string{want.Key}, nil},
	} {
		got, err := st.IdempotencyGetMany(ctx, c.faucetID, c.keys)
		if err != nil {
			t.Fatalf("IdempotencyGetMany(%d, %q): %v", c.faucetID, c.keys, err)
		}
		slices.SortFunc(got, func(a, b drip.Idempotency) int { return strings.Compare(b.Key, a.Key) })
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("IdempotencyGetMany(%d, %q) (-want +got):\n%s", c.faucetID, c.keys, diff)
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
	if n := deleteBefore(t0.Add(time.Microsecond)); n != 4 {
		t.Errorf("IdempotencyDeleteBefore(just after t0) = %d, want 4 (both faucets' keys, the odd one and the edge)", n)
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

	// PayoutsOpen tells the batch which of its keys a payout has bound
	// already: k1 and k2 of this faucet, not k3 (never bound), nor k1 of
	// another faucet.
	g := newFaucet(t, st, owner, "key2")
	keys := []store.IdempotencyKey{{FaucetID: f.ID, Key: "k3"}, {FaucetID: f.ID, Key: "k1"}, {FaucetID: g.ID, Key: "k1"}, {FaucetID: f.ID, Key: "k2"}}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		books, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Idempotency: keys})
		if err != nil {
			return err
		}
		want := map[store.IdempotencyKey]bool{{FaucetID: f.ID, Key: "k1"}: true, {FaucetID: f.ID, Key: "k2"}: true}
		if diff := cmp.Diff(want, books.Bound); diff != "" {
			t.Errorf("PayoutsOpen's bound keys (-want +got):\n%s", diff)
		}
		return nil
	})
}

package storetest

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for v2 keys (D14) and their daily spend (D36).

// v2 keys (D14): stored by hash, listed per faucet, revoked once.
func testKeys(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "v1key")
	exp := t0.Add(time.Hour)
	want := &drip.Key{FaucetID: f.ID, Prefix: "drip_abcdefgh", Scopes: []drip.Scope{drip.ScopeRead, drip.ScopeSend},
		ExpiresAt: &exp, IPWhitelist: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")},
		DailyUSDCapMicros: 25_000_000, CreatedAt: t0}
	want.ID = newKey(t, st, want, "hash1")
	got, err := st.KeyGetByHash(ctx, "hash1")
	if err != nil {
		t.Fatalf("KeyGetByHash: %v", err)
	}
	if diff := cmp.Diff(want, got, faucetOpts); diff != "" {
		t.Errorf("KeyGetByHash (-want +got):\n%s", diff)
	}
	if _, err := st.KeyGetByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown hash: %v, want ErrNotFound", err)
	}
	dup := *want
	if err := try(st, func(ctx context.Context, tx store.Tx) error { _, err := tx.KeyCreate(ctx, &dup, "hash2"); return err }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken prefix: %v, want ErrConflict", err)
	}
	never := &drip.Key{FaucetID: f.ID, Prefix: "drip_zzzzzzzz", Scopes: []drip.Scope{drip.ScopeAdmin}, CreatedAt: t0}
	never.ID = newKey(t, st, never, "hash3")
	list, err := st.KeyListByFaucet(ctx, f.ID)
	if err != nil || len(list) != 2 || list[0].ID != want.ID || list[1].ExpiresAt != nil || list[1].IPWhitelist != nil {
		t.Errorf("KeyListByFaucet = %+v, %v", list, err)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, want.ID, t0.Add(time.Minute)) })
	if got, _ := st.KeyGetByID(ctx, want.ID); got == nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after KeyRevoke: %+v", got)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, want.ID, t0) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking a revoked key: %v, want ErrNotFound", err)
	}
}

func testKeySpendAddUpToTheCap(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "v1key")
	k1 := newKey(t, st, &drip.Key{FaucetID: f.ID, Prefix: "drip_aaaaaaaa", Scopes: []drip.Scope{drip.ScopeSend},
		DailyUSDCapMicros: 1_000_000, CreatedAt: t0}, "hash1")
	k2 := newKey(t, st, &drip.Key{FaucetID: f.ID, Prefix: "drip_bbbbbbbb", Scopes: []drip.Scope{drip.ScopeSend},
		DailyUSDCapMicros: 1_000_000, CreatedAt: t0}, "hash2")
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

// testPayoutBatchSpendGuard: a batch's spend is added under its key's cap
// with the batch's other writes (in one round trip on PostgreSQL): a spend
// past the cap fails the whole batch with ErrLimitReached and leaves
// nothing behind, and one within it is counted (D36).
func testPayoutBatchSpendGuard(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner, alice := newUser(t, st, "owner"), newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "v1key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	k := newKey(t, st, &drip.Key{FaucetID: f.ID, Prefix: "drip_cccccccc", Scopes: []drip.Scope{drip.ScopeSend},
		DailyUSDCapMicros: 1_000_000, CreatedAt: t0}, "hash3")
	day := t0.Unix() / 86400
	for _, c := range []struct {
		micros int64
		err    error
		spent  int64
	}{{1_000_001, store.ErrLimitReached, 0}, {700_000, nil, 700_000}, {300_001, store.ErrLimitReached, 700_000}} {
		var id int64
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			b, err := newBatch(ctx, tx, f, t0, payment{alice, "BTC", 10})
			if err != nil {
				return err
			}
			id = b.Payouts[0].Payout.ID
			b.Spends = []store.KeySpend{{KeyID: k, Day: day, Micros: c.micros, CapMicros: 1_000_000}}
			return tx.PayoutsInsert(ctx, b)
		})
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("a batch spending %d of a 1,000,000 cap: err = %v, want %v", c.micros, err, c.err)
		}
		if ok, perr := st.PayoutExists(ctx, id); perr != nil || ok != (c.err == nil) {
			t.Errorf("a batch spending %d: PayoutExists = %v, %v; want %v", c.micros, ok, perr, c.err == nil)
		}
		if got, err := st.KeySpendGet(ctx, k, day); err != nil || got != c.spent {
			t.Errorf("after a batch spending %d: KeySpendGet = %d, %v; want %d", c.micros, got, err, c.spent)
		}
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the refused batches: %s; want clean", report)
	}
}

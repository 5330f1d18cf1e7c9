package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for a faucet's API keys page (issue 11): whether a v1
// rotation waits, and when each v2 key was last used.

// FaucetKeyPending follows a v1 key rotation (D13): none, begun, confirmed.
func testFaucetKeyPending(t *testing.T, st store.Store) {
	ctx := context.Background()
	f := newFaucet(t, st, newUser(t, st, "owner"), "v1key")
	pending := func(want bool) {
		t.Helper()
		if got, err := st.FaucetKeyPending(ctx, f.ID); err != nil || got != want {
			t.Errorf("FaucetKeyPending = %v, %v; want %v", got, err, want)
		}
	}
	pending(false)
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "newkey") })
	pending(true)
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) })
	pending(false)
	if _, err := st.FaucetKeyPending(ctx, f.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown faucet: %v, want ErrNotFound", err)
	}
}

// KeyTouch records a key's last use, read back with the key, and never
// moves it back in time (two nodes may touch it out of order).
func testKeyTouchOnlyForward(t *testing.T, st store.Store) {
	ctx := context.Background()
	f := newFaucet(t, st, newUser(t, st, "owner"), "v1key")
	k := &drip.Key{FaucetID: f.ID, Prefix: "drip_touch000", Scopes: []drip.Scope{drip.ScopeRead}, CreatedAt: t0}
	k.ID = newKey(t, st, k, "touchhash")
	lastUsed := func(want *time.Time) {
		t.Helper()
		for _, get := range []func() (*drip.Key, error){
			func() (*drip.Key, error) { return st.KeyGetByID(ctx, k.ID) },
			func() (*drip.Key, error) { return st.KeyGetByHash(ctx, "touchhash") },
			func() (*drip.Key, error) { l, err := st.KeyListByFaucet(ctx, f.ID); return &l[0], err },
		} {
			got, err := get()
			if err != nil {
				t.Fatal(err)
			}
			if (want == nil) != (got.LastUsedAt == nil) || (want != nil && !want.Equal(*got.LastUsedAt)) {
				t.Errorf("LastUsedAt = %v, want %v", got.LastUsedAt, want)
			}
		}
	}
	lastUsed(nil)
	later, earlier := t0.Add(time.Hour), t0.Add(time.Minute)
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.KeyTouch(ctx, k.ID, later) })
	lastUsed(&later)
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.KeyTouch(ctx, k.ID, earlier) })
	lastUsed(&later)
}

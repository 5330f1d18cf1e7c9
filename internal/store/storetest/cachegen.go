package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the cache generation (D63): every change to what a
// send reads before the ledger raises it, in the change's transaction, so
// a node's caches see the change on the first request after it commits;
// the columns a send does not read leave it alone, so logins and key use
// do not empty the caches. A change missing here is a change some node
// would not see: a rotated key still paying.
func testCacheGeneration(t *testing.T, st store.Store) {
	ctx := context.Background()
	gen := func() int64 {
		t.Helper()
		g, err := st.CacheGeneration(ctx)
		if err != nil {
			t.Fatalf("CacheGeneration: %v", err)
		}
		return g
	}
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "cachegenkey")
	keyID := newKey(t, st, &drip.Key{FaucetID: f.ID, Prefix: "cg_1", Scopes: []drip.Scope{drip.ScopeSend}, CreatedAt: t0}, "cachegenhash")

	changes := []struct {
		name   string
		raises bool
		change func(ctx context.Context, tx store.Tx) error
	}{
		{"new user", true, func(ctx context.Context, tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "user", t0)
			if err != nil {
				return err
			}
			_, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: "newcomer", Email: "newcomer@example.com", CreatedAt: t0})
			return err
		}},
		{"payout hash", true, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPayoutHash(ctx, owner.ID, "ab"+owner.PayoutUserHash[2:])
		}},
		{"user suspended", true, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetStatus(ctx, owner.ID, drip.UserSuspended)
		}},
		{"user email", true, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: owner.ID, Email: "owner2@example.com"})
		}},
		{"email verified", true, func(ctx context.Context, tx store.Tx) error { return tx.UserSetEmailVerified(ctx, owner.ID) }},
		{"address linked", true, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAddressAdd(ctx, owner.ID, "BTC", "bc1qcachegen", t0)
		}},
		{"address removed", true, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAddressRemove(ctx, owner.ID, "BTC", "bc1qcachegen")
		}},
		{"key rotation started", true, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "cachegenkey2") }},
		{"key rotation confirmed", true, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }},
		{"faucet settings", true, func(ctx context.Context, tx store.Tx) error {
			g := *f
			g.IPWhitelist = nil
			g.Name = "Renamed"
			return tx.FaucetUpdateSettings(ctx, &g)
		}},
		{"v2 key revoked", true, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, keyID, t0) }},

		{"password", false, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: owner.ID, PasswordHash: "argon2id$new"})
		}},
		{"TOTP step", false, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAcceptTOTPStep(ctx, &store.UserAcceptTOTPStepParams{ID: owner.ID, Step: 99})
		}},
		{"v2 key used", false, func(ctx context.Context, tx store.Tx) error { return tx.KeyTouch(ctx, keyID, t0) }},
		{"faucet locked", false, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, f.ID) }},
	}
	for _, c := range changes {
		before := gen()
		transact(t, st, c.change)
		after := gen()
		if raised := after > before; raised != c.raises {
			t.Errorf("%s: generation %d -> %d; raised %v, want %v", c.name, before, after, raised, c.raises)
		}
	}

	// Rolled back, a change leaves the generation as it was.
	before := gen()
	_ = try(st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.UserSetStatus(ctx, owner.ID, drip.UserActive); err != nil {
			return err
		}
		return errRollback
	})
	if after := gen(); after != before {
		t.Errorf("a rolled-back change moved the generation %d -> %d", before, after)
	}
}

var errRollback = errors.New("storetest: roll back")

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
// would not see: a rotated key still paying. Each change raises the
// counter of what it changes, keys (keys, faucets, owners' standing) or
// recipients (users, addresses), and only that: a user's row is both, as
// a faucet's owner; a new user only a recipient.
func testCacheGeneration(t *testing.T, st store.Store) {
	ctx := context.Background()
	gen := func() store.CacheGen {
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
		raises raised
		change func(ctx context.Context, tx store.Tx) error
	}{
		{"new user", raisesRecipients, func(ctx context.Context, tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "user", t0)
			if err != nil {
				return err
			}
			_, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: "newcomer", Email: "newcomer@example.com", CreatedAt: t0})
			return err
		}},
		{"payout hash", raisesBoth, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPayoutHash(ctx, owner.ID, "ab"+owner.PayoutUserHash[2:])
		}},
		{"user suspended", raisesBoth, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetStatus(ctx, owner.ID, drip.UserSuspended)
		}},
		{"user email", raisesBoth, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: owner.ID, Email: "owner2@example.com"})
		}},
		{"email verified", raisesBoth, func(ctx context.Context, tx store.Tx) error { return tx.UserSetEmailVerified(ctx, owner.ID) }},
		{"address linked", raisesRecipients, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAddressAdd(ctx, owner.ID, "BTC", "bc1qcachegen", t0)
		}},
		{"address removed", raisesRecipients, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAddressRemove(ctx, owner.ID, "BTC", "bc1qcachegen")
		}},
		{"key rotation started", raisesKeys, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "cachegenkey2") }},
		{"key rotation confirmed", raisesKeys, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }},
		{"faucet settings", raisesKeys, func(ctx context.Context, tx store.Tx) error {
			g := *f
			g.IPWhitelist = nil
			g.Name = "Renamed"
			return tx.FaucetUpdateSettings(ctx, &g)
		}},
		{"v2 key revoked", raisesKeys, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, keyID, t0) }},

		{"password", raisesNeither, func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: owner.ID, PasswordHash: "argon2id$new"})
		}},
		{"TOTP step", raisesNeither, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAcceptTOTPStep(ctx, &store.UserAcceptTOTPStepParams{ID: owner.ID, Step: 99})
		}},
		{"v2 key used", raisesNeither, func(ctx context.Context, tx store.Tx) error { return tx.KeyTouch(ctx, keyID, t0) }},
		{"faucet locked", raisesNeither, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, f.ID) }},
	}
	for _, c := range changes {
		before := gen()
		transact(t, st, c.change)
		after := gen()
		got := raised{keys: after.Keys > before.Keys, recipients: after.Recipients > before.Recipients}
		if got != c.raises || after.Keys < before.Keys || after.Recipients < before.Recipients {
			t.Errorf("%s: generation %+v -> %+v; raised %+v, want %+v", c.name, before, after, got, c.raises)
		}
		if !after.After(before) && got != raisesNeither {
			t.Errorf("%s: generation %+v -> %+v is not After", c.name, before, after)
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
		t.Errorf("a rolled-back change moved the generation %+v -> %+v", before, after)
	}
}

// raised is which counters of the cache generation a change raises.
type raised struct{ keys, recipients bool }

var (
	raisesNeither    = raised{}
	raisesKeys       = raised{keys: true}
	raisesRecipients = raised{recipients: true}
	raisesBoth       = raised{keys: true, recipients: true}
)

var errRollback = errors.New("storetest: roll back")

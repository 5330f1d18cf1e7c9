package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the store's errors.

// testErrorsNameTheirStatement: an error leaving the store says which
// statement failed, for the one log line at the edge, and is still the
// store's error for errors.Is.
func testErrorsNameTheirStatement(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	cases := []struct {
		name      string
		err       error
		want      error
		statement string
	}{
		{"not found", func() error { _, err := st.UserGetByID(ctx, 999999); return err }(), store.ErrNotFound, "UserGetByID"},
		{"no row changed", try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, 999999, drip.UserSuspended) }),
			store.ErrNotFound, "UserSetStatus"},
		{"unique violation", try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: owner.AccountID, Username: owner.Username,
				Email: "other@example.com", CreatedAt: t0})
			return err
		}), store.ErrConflict, "UserCreate"},
		{"overdraft", try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.BalanceDebit(ctx, owner.AccountID, "BTC", 1)
			return err
		}), store.ErrInsufficientFunds, "BalanceDebit"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) || !strings.HasPrefix(c.err.Error(), c.statement+": ") {
			t.Errorf("%s: err = %v; want %v, prefixed %q", c.name, c.err, c.want, c.statement+": ")
		}
	}
}

package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the node secrets (D12).

func testSecretInitKeepsTheFirstValue(t *testing.T, st store.Store) {
	ctx := context.Background()
	if _, err := st.SecretGet(ctx, "hash_key"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SecretGet of an unset secret: err = %v, want ErrNotFound", err)
	}
	first := []byte{0x00, 0x01, 0xfe, 0xff, 'a'}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "hash_key", first) })
	// A second node starting, or an admin command, must not replace the
	// secret: every payout_user_hash depends on it (D12).
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "hash_key", []byte("second")) })
	got, err := st.SecretGet(ctx, "hash_key")
	if err != nil {
		t.Fatalf("SecretGet: %v", err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("secret after a second SecretInit (-want +got):\n%s", diff)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "other", []byte("x")) })
	if got, err := st.SecretGet(ctx, "other"); err != nil || string(got) != "x" {
		t.Errorf("SecretGet(other) = %q, %v; want \"x\", nil", got, err)
	}
}

package storetest

import (
	"context"
	"testing"

	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for migrations.

func testMigrateIsIdempotent(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 5)
	for i := 0; i < 2; i++ {
		if err := st.Migrate(ctx); err != nil {
			t.Fatalf("Migrate again (%d): %v", i+1, err)
		}
	}
	coins, err := st.CoinList(ctx)
	if err != nil || len(coins) != len(builtinCoins) {
		t.Errorf("CoinList after migrating again = %d coins, %v; want %d", len(coins), err, len(builtinCoins))
	}
	if u, err := st.UserGetByUsername(ctx, "alice"); err != nil || u.ID != alice.ID {
		t.Errorf("alice after migrating again = %+v, %v; want kept", u, err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 5 {
		t.Errorf("balance after migrating again = %d, want 5", b)
	}
	if st.Engine() == "" {
		t.Error(`Engine() = ""; want the engine's name`)
	}
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for transactions: commit, rollback on error and on
// panic, isolation.

func testTransactCommits(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	err := st.Transact(context.Background(), func(tx store.Tx) error {
		_, err := move(context.Background(), tx, "BTC", drip.AccountDeposits, alice.AccountID, 42, "deposit", t0)
		return err
	})
	if err != nil {
		t.Fatalf("Transact: %v", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 42 {
		t.Errorf("balance after a committed credit = %d, want 42", b)
	}
}

var errBoom = errors.New("boom")

func testTransactRollsBackOnError(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 10)
	err := st.Transact(ctx, func(tx store.Tx) error {
		if _, err := move(ctx, tx, "BTC", drip.AccountDeposits, alice.AccountID, 5, "deposit", t0); err != nil {
			return err
		}
		if err := tx.UserSetStatus(ctx, alice.ID, drip.UserSuspended); err != nil {
			return err
		}
		return fmt.Errorf("giving up: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Transact: err = %v, want the callback's error", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 10 {
		t.Errorf("balance after a rolled-back credit = %d, want 10", b)
	}
	if b := balance(t, st, drip.AccountDeposits, "BTC"); b != -10 {
		t.Errorf("system:deposits after a rolled-back credit = %d, want -10", b)
	}
	if u, _ := st.UserGetByID(ctx, alice.ID); u == nil || u.Status != drip.UserActive {
		t.Errorf("alice after a rolled-back suspension = %+v, want active", u)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("ledger after a rollback is not clean: %s", report)
	}
	// The store is still usable: nothing was left holding the writer.
	deposit(t, st, alice.AccountID, "BTC", 1)
	if b := balance(t, st, alice.AccountID, "BTC"); b != 11 {
		t.Errorf("balance after a later deposit = %d, want 11", b)
	}
}

func testTransactRollsBackOnPanic(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	type token struct{ n int }
	want := &token{7}
	got := func() (p any) {
		defer func() { p = recover() }()
		_ = st.Transact(ctx, func(tx store.Tx) error {
			if _, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 5); err != nil {
				t.Errorf("BalanceCredit: %v", err)
			}
			panic(want)
		})
		return nil
	}()
	if got != want {
		t.Fatalf("recovered %v from Transact, want the callback's panic value %v", got, want)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after a panicking transaction = %d, want 0", b)
	}
	// The panic released the transaction: the next one commits (on SQLite,
	// the one writer connection was returned rolled back).
	done := make(chan error, 1)
	go func() {
		done <- st.Transact(ctx, func(tx store.Tx) error {
			_, err := tx.BalanceCredit(ctx, alice.AccountID, "DOGE", 3)
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Transact after a panic: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Transact after a panic did not finish in 30s: the panicking transaction was not released")
	}
	if b := balance(t, st, alice.AccountID, "DOGE"); b != 3 {
		t.Errorf("balance after the next transaction = %d, want 3", b)
	}
}

func testTransactIsolation(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 9); err != nil {
			return err
		}
		// The transaction reads its own writes...
		if b, err := tx.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 9 {
			t.Errorf("tx.BalanceGet inside the transaction = %d, %v; want 9", b, err)
		}
		// ...and nobody else does before it commits.
		if b, err := st.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 0 {
			t.Errorf("st.BalanceGet while the transaction is open = %d, %v; want 0", b, err)
		}
		return nil
	})
	if b := balance(t, st, alice.AccountID, "BTC"); b != 9 {
		t.Errorf("balance after commit = %d, want 9", b)
	}
}

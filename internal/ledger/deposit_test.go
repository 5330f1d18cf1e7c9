package ledger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// DepositTo credits a user's wallet (or a faucet's balance) from
// system:deposits in one transfer of kind "deposit", and runs its record
// in the same transaction: the record sees the transfer and the balance,
// and a record that fails takes the deposit with it.
func TestDepositTo(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		alice := e.user(t, "alice")
		var seenTransfer, seenBalance int64
		balance, err := e.ledger.DepositTo(ctx, alice.AccountID, "BTC", 50_000_000, func(tx store.Tx, transferID, balance int64) error {
			seenTransfer, seenBalance = transferID, balance
			return nil
		})
		if err != nil || balance != 50_000_000 {
			t.Fatalf("DepositTo alice's wallet: %d, %v; want 50000000", balance, err)
		}
		if seenBalance != balance || seenTransfer == 0 {
			t.Errorf("the record saw transfer %d and balance %d; want the deposit's transfer and %d", seenTransfer, seenBalance, balance)
		}
		journal := e.journal(t, alice.AccountID)
		if len(journal) != 1 || journal[0].ID != seenTransfer || journal[0].Kind != "deposit" || journal[0].Amount != 50_000_000 {
			t.Errorf("alice's journal = %+v; want the one deposit of 50000000, transfer %d", journal, seenTransfer)
		}
		if got := e.balance(t, drip.AccountDeposits, "BTC"); got != -50_000_000 {
			t.Errorf("system:deposits holds %d; want -50000000", got)
		}

		// A failing record rolls the deposit back: nothing moved.
		boom := errors.New("the record failed")
		_, err = e.ledger.DepositTo(ctx, alice.AccountID, "BTC", 7, func(store.Tx, int64, int64) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("DepositTo with a failing record: %v; want its error", err)
		}
		if got := e.balance(t, alice.AccountID, "BTC"); got != 50_000_000 {
			t.Errorf("after a failed record alice holds %d; want 50000000, unchanged", got)
		}
		if n := len(e.journal(t, alice.AccountID)); n != 1 {
			t.Errorf("after a failed record alice's journal has %d transfers; want 1", n)
		}

		// Deposit, for a faucet, is DepositTo its balance.
		f := e.faucet(t, nil)
		if b, err := e.ledger.Deposit(ctx, f, "BTC", 300); err != nil || b != 300 || e.balance(t, f.AccountID, "BTC") != 300 {
			t.Errorf("Deposit to a faucet: %d, %v; want 300", b, err)
		}
		e.reconciled(t)
	})
}

// A deposit of nothing, less than nothing, or to system:deposits itself is
// refused and moves nothing.
func TestDepositToRefuses(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		alice := e.user(t, "alice")
		recorded := false
		record := func(store.Tx, int64, int64) error { recorded = true; return nil }
		for _, c := range []struct {
			name    string
			account int64
			amount  int64
			code    drip.Code
		}{
			{"zero", alice.AccountID, 0, drip.CodeInvalidAmount},
			{"negative", alice.AccountID, -5, drip.CodeInvalidAmount},
			{"to system:deposits", drip.AccountDeposits, 5, drip.CodeInvalid},
		} {
			if _, err := e.ledger.DepositTo(ctx, c.account, "BTC", c.amount, record); drip.ErrorCode(err) != c.code {
				t.Errorf("%s: %v; want code %s", c.name, err, c.code)
			}
		}
		if recorded {
			t.Error("a refused deposit ran its record")
		}
		if got := e.balance(t, drip.AccountDeposits, "BTC"); got != 0 {
			t.Errorf("system:deposits holds %d after refusals; want 0", got)
		}
		e.reconciled(t)
	})
}

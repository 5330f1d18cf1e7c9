package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

// ownerWithWallet is the owner of a new faucet holding funds BTC (8
// decimals) in the faucet and wallet BTC in their own wallet, credited
// from system:deposits as an operator's deposit would be.
func (e *env) ownerWithWallet(t testing.TB, funds, wallet int64) (*drip.User, *drip.Faucet) {
	t.Helper()
	ctx := context.Background()
	deposits := map[string]int64{}
	if funds > 0 {
		deposits["BTC"] = funds
	}
	f := e.faucet(t, deposits)
	owner, err := e.st.UserGetByID(ctx, f.OwnerID)
	if err != nil {
		t.Fatalf("UserGetByID: %v", err)
	}
	if wallet == 0 {
		return owner, f
	}
	err = e.st.Transact(ctx, func(tx store.Tx) error {
		_, _, err := ledger.Move(ctx, tx, &store.Transfer{Coin: "BTC", From: drip.AccountDeposits, To: owner.AccountID,
			Amount: wallet, Kind: "deposit", CreatedAt: t0})
		return err
	})
	if err != nil {
		t.Fatalf("credit the wallet: %v", err)
	}
	return owner, f
}

// Funding a faucet moves exactly the amount from the owner's wallet to
// the faucet, as one journal entry of kind "fund", and the ledger still
// balances (D2, D3).
func TestFundMovesExactlyTheAmount(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		owner, f := e.ownerWithWallet(t, 5_000, 100_000_000)
		wallet, faucet, err := e.ledger.Fund(context.Background(), owner, f, "BTC", 30_000_001)
		if err != nil {
			t.Fatalf("Fund: %v", err)
		}
		if wallet != 69_999_999 || faucet != 30_005_001 {
			t.Errorf("Fund returned wallet %d, faucet %d; want 69999999, 30005001", wallet, faucet)
		}
		if got := e.balance(t, owner.AccountID, "BTC"); got != 69_999_999 {
			t.Errorf("wallet balance %d; want 69999999", got)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 30_005_001 {
			t.Errorf("faucet balance %d; want 30005001", got)
		}
		j := e.journal(t, owner.AccountID)
		if len(j) != 2 || j[1].Kind != "fund" || j[1].Amount != -30_000_001 {
			t.Errorf("wallet journal %+v; want the deposit, then one fund of -30000001", j)
		}
		e.reconciled(t)
	})
}

// A fund that is refused moves nothing: more than the wallet holds, an
// amount that is not positive, another user's faucet.
func TestFundRefusalsMoveNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		owner, f := e.ownerWithWallet(t, 5_000, 1_000)
		_, other := e.ownerWithWallet(t, 7_000, 0)
		cases := []struct {
			name   string
			faucet *drip.Faucet
			amount int64
			code   drip.Code
		}{
			{"more than the wallet holds", f, 1_001, drip.CodeInsufficientFunds},
			{"zero", f, 0, drip.CodeInvalidAmount},
			{"negative", f, -5, drip.CodeInvalidAmount},
			{"another user's faucet", other, 10, drip.CodeNotFound},
		}
		for _, c := range cases {
			_, _, err := e.ledger.Fund(context.Background(), owner, c.faucet, "BTC", c.amount)
			if got := drip.ErrorCode(err); got != c.code {
				t.Errorf("%s: Fund error %v; want code %s", c.name, err, c.code)
			}
		}
		if got := e.balance(t, owner.AccountID, "BTC"); got != 1_000 {
			t.Errorf("wallet balance %d after refusals; want 1000", got)
		}
		if got, want := e.balance(t, f.AccountID, "BTC"), int64(5_000); got != want {
			t.Errorf("faucet balance %d after refusals; want %d", got, want)
		}
		if got := e.balance(t, other.AccountID, "BTC"); got != 7_000 {
			t.Errorf("other faucet's balance %d after refusals; want 7000", got)
		}
		if j := e.journal(t, owner.AccountID); len(j) != 1 {
			t.Errorf("wallet journal %+v; want only the deposit", j)
		}
		e.reconciled(t)
	})
}

// Two funds racing for one wallet cannot both take it: the database's
// conditional debit lets one through and refuses the other (D2).
func TestFundRacingNeverOverdraws(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		owner, f := e.ownerWithWallet(t, 0, 1_000)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() { _, _, errs[i] = e.ledger.Fund(context.Background(), owner, f, "BTC", 600) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if drip.ErrorCode(err) != drip.CodeInsufficientFunds {
				t.Errorf("Fund: %v; want success or insufficient funds", err)
			}
		}
		if ok != 1 || e.balance(t, owner.AccountID, "BTC") != 400 || e.balance(t, f.AccountID, "BTC") != 600 {
			t.Errorf("%d funds went through, wallet %d, faucet %d; want 1, 400, 600", ok,
				e.balance(t, owner.AccountID, "BTC"), e.balance(t, f.AccountID, "BTC"))
		}
		e.reconciled(t)
	})
}

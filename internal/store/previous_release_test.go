package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestPreviousReleaseSeesEveryChange: the previous release reads the
// cache generation as one number, gen (D63). Its nodes keep running while
// a cluster is upgraded one node at a time (docs/deploy.md), so every
// change that raises either of the two counters the new release reads
// (migration 0021) must still raise gen, or an old node would keep
// serving a rotated key or a suspended recipient from memory.
func TestPreviousReleaseSeesEveryChange(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "drip.db")
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		// The previous release's node waits for the writer as every node
		// does: the store's own background work (the compactor, the
		// checkpointer, the statistics' folder) may hold it a moment.
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkGenRaised(t, st, func() (gen int64, err error) {
			err = db.QueryRow(`SELECT gen FROM cache_generation WHERE id = 1`).Scan(&gen)
			return gen, err
		})
		checkDebitsCounted(t, st, func(q string, args ...any) error {
			_, err := db.Exec(q, args...)
			return err
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		st, conn := storetest.OpenPostgresConn(t)
		ctx := context.Background()
		checkGenRaised(t, st, func() (gen int64, err error) {
			err = conn.QueryRow(ctx, `SELECT gen FROM cache_generation WHERE id = 1`).Scan(&gen)
			return gen, err
		})
		checkDebitsCounted(t, st, func(q string, args ...any) error {
			_, err := conn.Exec(ctx, q, args...)
			return err
		})
	})
}

// checkDebitsCounted: the previous release's debit, which does not count
// itself, is counted by migration 0020's trigger, so a node of this
// release serving a faucet's payouts from memory (D66) sees the payouts an
// older node makes; a credit is not a debit; this release's debit counts
// once, not twice.
func checkDebitsCounted(t *testing.T, st store.Store, exec func(q string, args ...any) error) {
	ctx := context.Background()
	var acct int64
	err := st.Transact(ctx, func(tx store.Tx) (err error) {
		if acct, err = tx.AccountCreate(ctx, "faucet", time.Now()); err != nil {
			return err
		}
		_, err = tx.BalanceCredit(ctx, acct, "BTC", 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	debits := func(step string, want int64) {
		t.Helper()
		got, err := st.BalanceDebits(ctx, acct, "")
		if err != nil || !slices.Equal(got, []store.DebitCount{{Coin: "BTC", Debits: want}}) {
			t.Errorf("%s: BalanceDebits = %v, %v; want BTC %d", step, got, err, want)
		}
	}
	debits("after a credit", 0)
	const previous = `UPDATE balances SET amount = amount - $3 WHERE account_id = $1 AND coin = $2 AND amount >= $3`
	if err := exec(previous, acct, "BTC", 10); err != nil {
		t.Fatal(err)
	}
	debits("after the previous release's debit", 1)
	err = st.Transact(ctx, func(tx store.Tx) error {
		_, err := tx.BalanceDebit(ctx, acct, "BTC", 10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	debits("after this release's debit", 2)
}

func checkGenRaised(t *testing.T, st store.Store, gen func() (int64, error)) {
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var userID, faucetID int64
	changes := []struct {
		name   string
		raises bool
		change func(tx store.Tx) error
	}{
		{"new user (recipients)", true, func(tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "user", at)
			if err != nil {
				return err
			}
			userID, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: "gen", Email: "gen@example.com", CreatedAt: at})
			return err
		}},
		{"address linked (recipients)", true, func(tx store.Tx) error { return tx.UserAddressAdd(ctx, userID, "BTC", "bc1qgen", at) }},
		{"user suspended (both)", true, func(tx store.Tx) error { return tx.UserSetStatus(ctx, userID, drip.UserSuspended) }},
		// A new faucet changes nothing a send has read (D63).
		{"faucet created", false, func(tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "faucet", at)
			if err != nil {
				return err
			}
			faucetID, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{OwnerID: userID, AccountID: acct, Name: "Gen",
				Domain: "gen.example.com", URL: "https://gen.example.com/", APIKeyHash: "genkey", Rules: drip.DefaultRules, CreatedAt: at})
			return err
		}},
		{"key rotation started (keys)", true, func(tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, faucetID, "genkey2") }},
	}
	for _, c := range changes {
		before, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Transact(ctx, c.change); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		after, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		if raised := after > before; raised != c.raises {
			t.Errorf("%s: gen %d -> %d", c.name, before, after)
		}
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// TestPayoutsByRecipientInTwoLevels (D71): every read of a faucet's
// payouts by recipient (the send limits' windows, a wallet's pages, the
// faucets that paid a user) agrees with a count of the payouts themselves
// before the compactor runs, after each chunk it copies (a block half in
// the copy among them) and once it has caught up; reconcile finds nothing
// wrong in any of those states, and reports a copy that disagrees with
// the payouts.
func TestPayoutsByRecipientInTwoLevels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, _ := openCompacting(t, false) // the test steps the compactor
	defer st.Close()
	fx := seedPayouts(t, st, raw, 4)

	if w := watermark(t, raw); w != 0 {
		t.Fatalf("watermark %d on a new database, want 0", w)
	}
	fx.check(t, "before the compactor")
	c := newCompactor(&prepared{db: raw})
	halfway := false
	for step := 1; ; step++ {
		more, err := c.step(ctx)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if !more {
			break
		}
		w := watermark(t, raw)
		copied := ints(t, raw, `SELECT COUNT(*) FROM payouts_by_recipient WHERE payout_id >> 16 = ?`, w)[0]
		halfway = halfway || copied > 0
		fx.check(t, fmt.Sprintf("step %d (watermark %d, %d of its block copied)", step, w, copied))
		if step == 3 {
			// The process ends halfway through a block (the second's first
			// chunk is copied): the next starts the block again, keeping
			// what is copied.
			c = newCompactor(&prepared{db: raw})
		}
	}
	if !halfway {
		t.Error("no step left a block half copied")
	}
	if w := watermark(t, raw); w != 3 {
		t.Fatalf("watermark %d once caught up, want 3, the last block", w)
	}
	if got := ints(t, raw, `SELECT COUNT(*) FROM payouts_by_recipient`)[0]; got != 3*perBlock {
		t.Errorf("%d payouts in the copy, want %d: the three finished blocks", got, 3*perBlock)
	}
	fx.check(t, "caught up")

	// A copy that disagrees with its payouts is reported: a payout below the
	// watermark missing from it, and a row whose amount is not its payout's.
	gone, changed := int64(5), int64(1<<16+9)
	if _, err := raw.ExecContext(ctx, `DELETE FROM payouts_by_recipient WHERE payout_id = ?`, gone); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE payouts_by_recipient SET amount = amount + 1 WHERE payout_id = ?`, changed); err != nil {
		t.Fatal(err)
	}
	if bad, err := st.ReconcilePayouts(ctx); err != nil || !slices.Equal(bad, []int64{gone, changed}) {
		t.Errorf("ReconcilePayouts of a damaged copy = %v, %v; want %v", bad, err, []int64{gone, changed})
	}
	// And a payout cannot be deleted, which would leave its row in the copy.
	if _, err := raw.ExecContext(ctx, `DELETE FROM payouts WHERE id = 7`); err == nil || !strings.Contains(err.Error(), "never deleted") {
		t.Errorf("DELETE of a payout: %v; want it refused", err)
	}
}

// TestPayoutsByRecipientUpgrade: migration 0027 copies the payouts a
// database already holds and sets the watermark at their last block, so
// every read by recipient agrees with them at once (D71).
func TestPayoutsByRecipientUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, path := openCompacting(t, false)
	// The database as the previous release left it: without 0027.
	for _, q := range []string{
		`DROP TRIGGER payouts_kept`, `DROP INDEX payouts_block_recipient`,
		`DROP TABLE payouts_by_recipient`, `DROP TABLE payout_blocks`,
		`CREATE INDEX payouts_faucet_recipient ON payouts (faucet_id, recipient_id, created_at)`,
		`DELETE FROM schema_migrations WHERE version IN (27, 28)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	fx := seedPayouts(t, st, raw, 3)
	st.Close()
	st, err := open(ctx, path, false) // migrates
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fx.st = st
	if w := watermark(t, raw); w != 2 {
		t.Errorf("watermark %d after the upgrade, want 2, the last block", w)
	}
	if got := ints(t, raw, `SELECT COUNT(*) FROM payouts_by_recipient`)[0]; got != 3*perBlock {
		t.Errorf("%d payouts in the copy after the upgrade, want all %d", got, 3*perBlock)
	}
	fx.check(t, "upgraded")
}

// TestCompactorCatchesUp: the compactor that Open starts copies each
// finished block by itself.
func TestCompactorCatchesUp(t *testing.T) {
	t.Parallel()
	st, raw, _ := openCompacting(t, true)
	defer st.Close()
	fx := seedPayouts(t, st, raw, 3)
	waitFor(t, func() bool { return watermark(t, raw) == 2 },
		func() string { return fmt.Sprintf("watermark %d, want 2", watermark(t, raw)) })
	fx.check(t, "caught up by itself")
}

// TestToolLeavesTheBlocks: a store opened by OpenTool (drip admin, drip
// bench's own) runs no compactor, so it never takes the file's write
// lock beside the node's writer; its reads are exact all the same.
func TestToolLeavesTheBlocks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drip.db")
	st, err := OpenTool(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw := rawDB(t, path)
	fx := seedPayouts(t, st, raw, 3)
	time.Sleep(10 * compactEvery) // ten of a compactor's ticks
	if w := watermark(t, raw); w != 0 {
		t.Errorf("watermark %d beside a tool's store, want 0: a compactor ran", w)
	}
	fx.check(t, "no compactor")
}

// perBlock is how many payouts seedPayouts writes in each block: more
// than a chunk, so a block is copied in two.
const perBlock = compactChunk + compactChunk/2

// byRecipient is what seedPayouts wrote, for check.
type byRecipient struct {
	st      store.Store
	raw     *sql.DB
	users   []*drip.User
	faucets []*drip.Faucet
	times   []int64 // a few start times of windows
}

// openCompacting opens a new database at a temporary path, with the
// compactor started or not (a test that steps it starts none), and a raw
// connection to it. The caller closes the store: the upgrade tests close
// and open it again at path.
func openCompacting(t testing.TB, compact bool) (st *sqlstore.DB, raw *sql.DB, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "drip.db")
	st, err := open(context.Background(), path, compact)
	if err != nil {
		t.Fatal(err)
	}
	return st, rawDB(t, path), path
}

// waitFor waits up to 30 s for done, polling, and fails the test with
// state() if it never holds: the started compactor works on its own tick.
func waitFor(t *testing.T, done func() bool, state func() string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: %s", state())
		}
	}
}

// rawDB is a connection of its own to the file, durable as the writer's.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?"+url.Values{"_pragma": {"busy_timeout(10000)", "synchronous(FULL)"}}.Encode()+"&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	t.Cleanup(func() { raw.Close() })
	return raw
}

func watermark(t *testing.T, raw *sql.DB) int64 {
	t.Helper()
	return ints(t, raw, `SELECT done FROM payout_blocks`)[0]
}

// seedPayouts makes three users and two faucets through the store, then
// writes perBlock payouts with their transfers in each of blocks blocks,
// with the ids they would have had: a block's first payout is its id >>
// 16. Faucet 2 pays user 3 nothing, so one payer is missing; payouts
// come two at a time, so pairs share their time.
func seedPayouts(t *testing.T, st store.Store, raw *sql.DB, blocks int64) *byRecipient {
	t.Helper()
	ctx := context.Background()
	fx := &byRecipient{st: st, raw: raw}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	err := st.Transact(ctx, func(tx store.Tx) error {
		var owner int64
		for i := range 3 {
			acct, err := tx.AccountCreate(ctx, "user", base)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("user%d", i)
			id, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: name,
				Email: name + "@example.com", PasswordHash: "argon2id$" + name, EmailVerified: true, CreatedAt: base})
			if err != nil {
				return err
			}
			owner = id
		}
		for i := range 2 {
			acct, err := tx.AccountCreate(ctx, "faucet", base)
			if err != nil {
				return err
			}
			key := fmt.Sprintf("key%d", i)
			if _, err := tx.FaucetCreate(ctx, &store.FaucetCreateParams{OwnerID: owner, AccountID: acct,
				Name: "Faucet " + key, Domain: key + ".example.com", URL: "https://" + key + ".example.com/",
				APIKeyHash: key, Rules: drip.DefaultRules, CreatedAt: base}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		u, err := st.UserGetByUsername(ctx, fmt.Sprintf("user%d", i))
		if err != nil {
			t.Fatal(err)
		}
		fx.users = append(fx.users, u)
	}
	for i := range 2 {
		f, err := st.FaucetGetByKeyHash(ctx, fmt.Sprintf("key%d", i))
		if err != nil {
			t.Fatal(err)
		}
		fx.faucets = append(fx.faucets, f)
	}
	at := func(n int64) int64 { return base.Add(time.Duration(n/2) * 7 * time.Minute).UnixMicro() }
	total := blocks * perBlock
	fx.times = []int64{0, at(total / 4), at(total / 2), at(total - 5)}
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	n := int64(0)
	for block := range blocks {
		for k := range int64(perBlock) {
			f, u := fx.faucets[k%2], fx.users[k%3]
			if f == fx.faucets[1] && u == fx.users[2] {
				u = fx.users[1]
			}
			coin := []string{"BTC", "LTC"}[k%5%2]
			id, amount, created := block<<16+k+1, 1+k%7, at(n)
			if _, err := tx.ExecContext(ctx, `INSERT INTO transfers (id, coin, from_account, to_account, amount, kind, created_at)
				VALUES (?, ?, ?, ?, ?, 'payout', ?)`, id, coin, f.AccountID, u.AccountID, amount, created); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, '', '', ?)`, id, f.ID, u.ID, id, u.Username, coin, amount, created); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// check compares every read by recipient with the payouts themselves.
func (fx *byRecipient) check(t *testing.T, stage string) {
	t.Helper()
	ctx := context.Background()
	st, raw := fx.st, fx.raw
	for _, f := range fx.faucets {
		for _, u := range fx.users {
			for _, coin := range []string{"", "BTC", "LTC"} {
				for _, since := range fx.times {
					var want [2]int64
					if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM payouts
						WHERE faucet_id = ? AND recipient_id = ? AND created_at >= ? AND (? = '' OR coin = ?)`,
						f.ID, u.ID, since, coin, coin).Scan(&want[0], &want[1]); err != nil {
						t.Fatal(err)
					}
					var got [2]int64
					var err error
					got[0], got[1], err = st.PayoutWindow(ctx, &store.PayoutWindowParams{FaucetID: f.ID,
						Since: time.UnixMicro(since), Coin: coin, RecipientID: u.ID})
					if err != nil || got != want {
						t.Errorf("%s: window of faucet %d, user %d, %q since %d: %v, %v; want %v",
							stage, f.ID, u.ID, coin, since, got, err, want)
					}
				}
			}
		}
	}
	for _, u := range fx.users {
		var payers []int64
		fs, err := st.FaucetListPayers(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			payers = append(payers, f.ID)
		}
		slices.Sort(payers)
		if want := ints(t, raw, `SELECT DISTINCT faucet_id FROM payouts WHERE recipient_id = ? ORDER BY 1`, u.ID); !slices.Equal(payers, want) {
			t.Errorf("%s: faucets that paid user %d: %v, want %v", stage, u.ID, payers, want)
		}
		for _, faucet := range []int64{0, fx.faucets[0].ID} {
			for _, coin := range []string{"", "LTC"} {
				var got []int64
				for before := int64(0); ; {
					page, err := st.PayoutListByRecipient(ctx, &store.PayoutListByRecipientParams{
						UserID: u.ID, Coin: coin, FaucetID: faucet, Before: before, Limit: 700})
					if err != nil {
						t.Fatal(err)
					}
					if len(page) == 0 {
						break
					}
					for _, p := range page {
						got = append(got, p.ID)
					}
					before = page[len(page)-1].ID
				}
				want := ints(t, raw, `SELECT id FROM payouts WHERE recipient_id = ? AND (? = 0 OR faucet_id = ?) AND (? = '' OR coin = ?)
					ORDER BY created_at DESC, id DESC`, u.ID, faucet, faucet, coin, coin)
				if !slices.Equal(got, want) {
					t.Errorf("%s: wallet of user %d, faucet %d, %q: %d payouts, want %d", stage, u.ID, faucet, coin, len(got), len(want))
				}
			}
		}
	}
	if bad, err := st.ReconcilePayouts(ctx); err != nil || len(bad) != 0 {
		t.Errorf("%s: ReconcilePayouts = %v, %v; want none", stage, bad, err)
	}
}

func ints(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkCompactBlock is the compactor's cost a payout: the copy of one
// block of 65,536 payouts, a chunk a transaction, from faucets paying
// recipients round-robin as drip bench's hot (one faucet) and spread
// (many faucets) do; hot-10M copies into a copy that already holds 10M
// payouts of those recipients (1,000 each), as after drip bench's growth
// load, where each block reaches the last leaf of every recipient.
func BenchmarkCompactBlock(b *testing.B) {
	for _, shape := range []struct {
		name       string
		faucets    int
		recipients int
		stored     int64
	}{{"hot", 1, 10_000, 0}, {"spread", 200, 10_000, 0}, {"hot-10M", 1, 10_000, 10_000_000}} {
		b.Run(shape.name, func(b *testing.B) {
			ctx := context.Background()
			st, raw, _ := openCompacting(b, false)
			defer st.Close()
			if shape.stored > 0 {
				// Written in the copy's order, as the upgrade or the growth
				// load writes it; dated before every payout below.
				if _, err := raw.ExecContext(ctx, `WITH RECURSIVE s (n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n + 1 < ?1)
					INSERT INTO payouts_by_recipient (faucet_id, recipient_id, created_at, payout_id, coin, amount)
					SELECT 1, 1 + n / (?1 / ?2), n, ?1 * 10 + n, 'BTC', 1000 FROM s`, shape.stored, shape.recipients); err != nil {
					b.Fatal(err)
				}
			}
			c := newCompactor(&prepared{db: raw})
			var payouts int64
			b.ResetTimer()
			next := int64(1) // the next payout's id
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				// One block more: its payouts, and the next block's first,
				// which finishes it. No transfers: only the copy is timed.
				tx, err := raw.BeginTx(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				for ; next <= int64(i+1)<<16; next++ {
					id, k := next, next
					if _, err := tx.ExecContext(ctx, `INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
						VALUES (?, ?, ?, ?, '', 'BTC', 1000, '', '', ?)`,
						id, 1+k%int64(shape.faucets), 1+(id/int64(shape.faucets))%int64(shape.recipients), id, time.Now().UnixMicro()); err != nil {
						b.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for {
					more, err := c.step(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if !more {
						break
					}
				}
				payouts += 1 << 16
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(payouts)/1e3, "µs/payout")
		})
	}
}

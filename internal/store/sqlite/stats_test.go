package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// TestStatisticsKeptAsSums (D73): the statistics answer as the payouts
// themselves say, summed without the kept sums, before the folder runs
// (every payout after the mark), after each range it folds (ranges that
// end inside a day and inside a recipient's payouts of a day), once it has
// caught up, and with payouts made after it caught up; with D72's levels
// copied or not, and for a since that is a midnight and one that is not.
func TestStatisticsKeptAsSums(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, _ := openCompacting(t, false) // the test steps the folder
	defer st.Close()
	fx := seedFaucetRows(t, st, raw, 5*256)
	mark := func() int64 { return ints(t, raw, `SELECT folded FROM stats_mark`)[0] }

	before := fx.answers(t)
	fx.statsAgree(t, "before the folder")
	for step := 1; ; step++ {
		behind, err := st.StatsFold(ctx, 300)
		if err != nil {
			t.Fatalf("fold step %d: %v", step, err)
		}
		if got, want := mark(), min(int64(step*300), 1281); got != want {
			t.Fatalf("mark %d after step %d, want %d", got, step, want)
		}
		state := fmt.Sprintf("after fold step %d", step)
		if got := fx.answers(t); got != before {
			t.Fatalf("%s: the reads changed:\n%s", state, diffLines(before, got))
		}
		fx.statsAgree(t, state)
		if !behind {
			break
		}
	}
	if behind, err := st.StatsFold(ctx, 300); err != nil || behind || mark() != 1281 {
		t.Fatalf("StatsFold once caught up = %v, %v, mark %d; want false, nil, 1281", behind, err, mark())
	}
	// Every payout is in the sums: none is read from the payouts.
	if got := ints(t, raw, `SELECT SUM(payouts) FROM stats_users UNION ALL SELECT SUM(payouts) FROM stats_days`); !slices.Equal(got, []int64{1280, 1280}) {
		t.Fatalf("the sums hold %v payouts, want [1280 1280]", got)
	}
	// D72's levels copied: the part of a day before a since that is not a
	// midnight is read from them.
	if _, err := copyFaucetBlocks(ctx, &prepared{db: raw}, faucetLevels, 1000); err != nil {
		t.Fatal(err)
	}
	if got := fx.answers(t); got != before {
		t.Fatalf("copied: the reads changed:\n%s", diffLines(before, got))
	}
	fx.statsAgree(t, "folded and copied")

	// Payouts after the mark, to recipients and days the sums already
	// hold, and to a recipient they do not: added to the sums, counted
	// once a day.
	var newcomer drip.User
	err := st.Transact(ctx, func(tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "user", fx.base)
		if err != nil {
			return err
		}
		newcomer.ID, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: "newcomer",
			Email: "newcomer@example.com", PasswordHash: "argon2id$x", EmailVerified: true, CreatedAt: fx.base})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `UPDATE users SET payout_user_hash = 'hash-' || id WHERE id = ?`, newcomer.ID); err != nil {
		t.Fatal(err)
	}
	for k, u := range []*drip.User{fx.users[0], fx.users[0], &newcomer} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
			SELECT ?, ?, ?, transfer_id + 10000 + ?, '', 'BTC', 5, '', '', ? FROM payouts WHERE id = 1`,
			1281+k, fx.faucets[0].ID, u.ID, k, fx.last.Add(-time.Duration(k)*time.Hour).UnixMicro()); err != nil {
			t.Fatal(err)
		}
	}
	fx.statsAgree(t, "payouts after the mark")
	if _, err := st.StatsFold(ctx, 2); err != nil { // the first two of three
		t.Fatal(err)
	}
	fx.statsAgree(t, "part of them folded")
	if _, err := st.StatsFold(ctx, 2); err != nil || mark() != 1284 {
		t.Fatalf("StatsFold = %v, mark %d; want the mark at 1284", err, mark())
	}
	fx.statsAgree(t, "all folded again")
}

// TestStatisticsFolderCatchesUp: the folder that Open starts folds every
// payout by itself (D73).
func TestStatisticsFolderCatchesUp(t *testing.T) {
	t.Parallel()
	st, raw, _ := openCompacting(t, true)
	defer st.Close()
	fx := seedFaucetRows(t, st, raw, 3*256)
	waitFor(t, func() bool { return ints(t, raw, `SELECT folded FROM stats_mark`)[0] == 3*256+1 },
		func() string {
			return fmt.Sprintf("mark %v, want %d", ints(t, raw, `SELECT folded FROM stats_mark`), 3*256+1)
		})
	fx.statsAgree(t, "caught up by itself")
}

// TestStatisticsBulkLoadFolds: drip bench's bulk load stores payouts as a
// database that has long held them holds them: in the sums, the mark past
// them (D73), folded a range of ids at a time, more than one range here.
func TestStatisticsBulkLoadFolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, _ := openCompacting(t, false)
	defer st.Close()
	fx := seedFaucetRows(t, st, raw, 300) // not folded: the load folds them too
	err := st.Transact(ctx, func(tx store.Tx) error {
		return tx.(store.BulkLoader).PayoutBulkLoad(ctx, &store.PayoutBulkLoadParams{FaucetID: fx.faucets[0].ID,
			FirstRecipientID: fx.users[0].ID, LastRecipientID: fx.users[2].ID, Coin: "BTC", Amount: 3, Count: 70_000,
			CreatedAt: fx.last.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ints(t, raw, `SELECT folded - (SELECT MAX(id) FROM payouts) FROM stats_mark UNION ALL SELECT COALESCE(SUM(payouts), 0) FROM stats_users`); !slices.Equal(got, []int64{1, 70_300}) {
		t.Fatalf("after the load: the mark minus the last id, and the payouts the sums hold: %v, want [1 70300]", got)
	}
	fx.statsAgree(t, "bulk loaded")
}

// TestStatisticsReadSums: the statistics read the kept sums by their key
// and the payouts from the mark on block by block, by D72's index of the
// recent level, never a scan or a faucet's whole history (D73); the part
// of a day before a since that is not a midnight reads D72's levels, as
// the sums did before. A fold reads its range of payouts by id.
func TestStatisticsReadSums(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	sinceMark := []string{"CO-ROUTINE sblocks", "SETUP", "SCAN stats_mark", "RECURSIVE STEP", "SCAN sblocks",
		"SCALAR SUBQUERY 2", "SEARCH payouts", "SCAN b"}
	wantPlans(t, conn, map[string]planCase{
		"StatsDaily": {[]any{1, 0}, slices.Concat([]string{
			"CO-ROUTINE (subquery-20)",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SEARCH stats_days USING PRIMARY KEY (faucet_id=? AND day>?)",
			"SCALAR SUBQUERY 8",
			"MATERIALIZE edge",
			"SCAN CONSTANT ROW",
			"SCAN edge",
			"UNION ALL"}, slices.Replace(slices.Clone(sinceMark), 5, 6, "SCALAR SUBQUERY 5"), []string{
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=?)",
			"SCALAR SUBQUERY 11",
			"SCAN stats_mark",
			"SCALAR SUBQUERY 12",
			"SCAN edge",
			"USE TEMP B-TREE FOR GROUP BY",
			"CORRELATED SCALAR SUBQUERY 10",
			"SEARCH k USING PRIMARY KEY (faucet_id=? AND day=? AND coin=? AND recipient_id=?)",
			"USE TEMP B-TREE FOR count(DISTINCT)",
			"UNION ALL",
			"CO-ROUTINE (subquery-19)",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SEARCH c USING PRIMARY KEY (faucet_id=? AND coin=? AND created_at>? AND created_at<?)",
			"USING INDEX sqlite_autoindex_coins_1 FOR IN-OPERATOR",
			"SCALAR SUBQUERY 16",
			"SCAN edge",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"UNION ALL"}, recentBlocks("CO-ROUTINE", "pblocks", "payouts"), []string{
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=?)",
			"SCALAR SUBQUERY 18",
			"SCAN edge",
			"SCAN (subquery-19)",
			"USE TEMP B-TREE FOR GROUP BY",
			"USE TEMP B-TREE FOR count(DISTINCT)",
			"SCAN (subquery-20)",
			"USE TEMP B-TREE FOR GROUP BY"})},
		// The users' page: the first of the rank and the pending
		// recipients, each looked up by the key; never every sum.
		"StatsUsers": {[]any{1, "BTC", 50, 0}, []string{
			"CO-ROUTINE s",
			"CO-ROUTINE (subquery-10)",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"CO-ROUTINE ranked",
			"MERGE (UNION)",
			"LEFT",
			"CO-ROUTINE (subquery-6)",
			"SEARCH stats_users USING COVERING INDEX stats_users_rank (faucet_id=? AND coin=?)",
			"SCAN (subquery-6)",
			"USE TEMP B-TREE FOR ORDER BY",
			"RIGHT",
			"MATERIALIZE pending",
			"MATERIALIZE sblocks",
			"SETUP",
			"SCAN stats_mark",
			"RECURSIVE STEP",
			"SCAN sblocks",
			"SCALAR SUBQUERY 2",
			"SEARCH payouts",
			"SCAN b",
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 4",
			"SCAN stats_mark",
			"SCAN pending",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN r",
			"SEARCH k USING PRIMARY KEY (faucet_id=? AND coin=? AND recipient_id=?)",
			"UNION ALL",
			"SCAN pending",
			"SCAN (subquery-10)",
			"USE TEMP B-TREE FOR GROUP BY",
			"SCAN s",
			"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)",
			"USE TEMP B-TREE FOR ORDER BY"}},
		// Its count of the recipients in the sums: one row, not every
		// sum of the faucet's coin (migration 0034).
		"StatsUsersCount": {[]any{1, "BTC"}, slices.Concat([]string{
			"SCAN CONSTANT ROW",
			"SCALAR SUBQUERY 4",
			"SEARCH stats_user_counts USING PRIMARY KEY (faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 7"}, sinceMark[:7], []string{
			"USE TEMP B-TREE FOR count(DISTINCT)",
			"SCAN b",
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 5",
			"SCAN stats_mark",
			"CORRELATED SCALAR SUBQUERY 6",
			"SEARCH k USING PRIMARY KEY (faucet_id=? AND coin=? AND recipient_id=?)"})},
		"StatsFoldDays": {[]any{100}, []string{
			"SEARCH p USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
			"SCALAR SUBQUERY 2",
			"SCAN stats_mark",
			"USE TEMP B-TREE FOR GROUP BY",
			"CORRELATED SCALAR SUBQUERY 1",
			"SEARCH k USING PRIMARY KEY (faucet_id=? AND day=? AND coin=? AND recipient_id=?)",
			"USE TEMP B-TREE FOR count(DISTINCT)"}},
		"StatsFoldDayUsers": {[]any{100}, []string{
			"SEARCH payouts USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
			"SCALAR SUBQUERY 1",
			"SCAN stats_mark",
			"USE TEMP B-TREE FOR ORDER BY"}},
		"StatsFoldUsers": {[]any{100}, []string{
			"SEARCH payouts USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)",
			"SCALAR SUBQUERY 1",
			"SCAN stats_mark",
			"USE TEMP B-TREE FOR GROUP BY"}},
	})
}

// TestStatisticsReadsAreNoted: a read of the statistics is noted, which
// keeps the folder folding for a while whatever the payouts (D73).
func TestStatisticsReadsAreNoted(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	st, _, _ := openCompacting(t, false)
	defer st.Close()
	if !st.StatsReadAt().IsZero() {
		t.Fatalf("StatsReadAt %v before any read, want zero", st.StatsReadAt())
	}
	for name, read := range map[string]func() error{
		"StatsDaily": func() error { _, err := st.StatsDaily(context.Background(), 1, now); return err },
		"StatsUsers": func() error {
			_, _, err := st.StatsUsers(context.Background(), &store.PageParams{ID: 1, Coin: "BTC", Limit: 1})
			return err
		},
	} {
		before := time.Now()
		if err := read(); err != nil {
			t.Fatal(err)
		}
		if at := st.StatsReadAt(); at.Before(before) {
			t.Errorf("StatsReadAt %v after %s at %v", at, name, before)
		}
	}
}

// statsAgree checks every faucet's statistics against its payouts summed
// directly, reading neither the kept sums nor D72's levels.
func (fx *byFaucet) statsAgree(t *testing.T, state string) {
	t.Helper()
	ctx := context.Background()
	const day = 24 * time.Hour
	sinces := []time.Time{fx.base, fx.base.Add(day + 5*time.Hour + 3*time.Minute), fx.last.Truncate(day), fx.last, fx.last.Add(day)}
	for _, f := range fx.faucets {
		for _, since := range sinces {
			got, err := fx.st.StatsDaily(ctx, f.ID, since)
			if err != nil {
				t.Fatalf("%s: StatsDaily: %v", state, err)
			}
			var want []drip.DailyStat
			rows, err := fx.raw.QueryContext(ctx, `SELECT created_at / 86400000000, coin, COUNT(*), SUM(amount), COUNT(DISTINCT recipient_id)
				FROM payouts NOT INDEXED WHERE faucet_id = ? AND created_at >= ? GROUP BY 1, 2 ORDER BY 1 DESC, 2`, f.ID, since.UnixMicro())
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s drip.DailyStat
				var d int64
				if err := rows.Scan(&d, &s.Coin, &s.Payouts, &s.Amount, &s.Recipients); err != nil {
					t.Fatal(err)
				}
				s.Day = time.UnixMicro(d * int64(day/time.Microsecond)).UTC()
				want = append(want, s)
			}
			rows.Close()
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: faucet %d's StatsDaily since %v (-want +got):\n%s", state, f.ID, since, diff)
			}
		}
		for _, coin := range []string{"BTC", "LTC", "DOGE"} {
			got, total, err := fx.st.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: coin, Limit: 1000})
			if err != nil {
				t.Fatalf("%s: StatsUsers: %v", state, err)
			}
			var want []drip.UserStat
			rows, err := fx.raw.QueryContext(ctx, `SELECT u.payout_user_hash, COUNT(*), SUM(p.amount), MAX(p.created_at)
				FROM payouts p NOT INDEXED JOIN users u ON u.id = p.recipient_id WHERE p.faucet_id = ? AND p.coin = ?
				GROUP BY p.recipient_id ORDER BY SUM(p.amount) DESC, p.recipient_id`, f.ID, coin)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s drip.UserStat
				var last int64
				if err := rows.Scan(&s.PayoutUserHash, &s.Payouts, &s.Amount, &last); err != nil {
					t.Fatal(err)
				}
				s.LastPayoutAt = time.UnixMicro(last).UTC()
				want = append(want, s)
			}
			rows.Close()
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || total != int64(len(want)) {
				t.Errorf("%s: faucet %d's StatsUsers in %s, total %d, want %d (-want +got):\n%s", state, f.ID, coin, total, len(want), diff)
			}
		}
	}
}

// BenchmarkStatsFold is the writer's time for a fold of 768 payout ids
// (sqlstore's statsFoldRange, D73): to recipients it has not folded yet,
// each payout a sum of its own and so a recipient counted (new), and to
// 10,000 recipients already in the sums (known), as drip bench's hot pays
// them. Only the payouts' rows are written, as BenchmarkCompactBlock's.
func BenchmarkStatsFold(b *testing.B) {
	const perFold = 768
	for _, shape := range []struct {
		name       string
		recipients int64 // 0: a new recipient each payout
	}{{"new", 0}, {"known", 10_000}} {
		b.Run(shape.name, func(b *testing.B) {
			ctx := context.Background()
			st, raw, _ := openCompacting(b, false) // the benchmark steps the folder
			defer st.Close()
			next := int64(1) // the next payout's id
			write := func(n int64) {
				if _, err := raw.ExecContext(ctx, `WITH RECURSIVE s (id) AS (SELECT ?1 UNION ALL SELECT id + 1 FROM s WHERE id + 1 < ?1 + ?2)
					INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
					SELECT id, 1, CASE WHEN ?3 = 0 THEN id ELSE 1 + id % ?3 END, id, '', 'BTC', 1000, '', '', ?4 + id FROM s`,
					next, n, shape.recipients, time.Now().UnixMicro()); err != nil {
					b.Fatal(err)
				}
				next += n
			}
			if shape.recipients > 0 { // every recipient in the sums
				write(2 * shape.recipients)
				if _, err := st.StatsFold(ctx, 2*shape.recipients); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				b.StopTimer()
				write(perFold)
				b.StartTimer()
				if _, err := st.StatsFold(ctx, perFold); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perFold)/1e3, "µs/payout")
		})
	}
}

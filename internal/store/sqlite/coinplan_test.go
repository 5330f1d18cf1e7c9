package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPayoutListsSeekPerCoin: the statements that read a faucet's payouts
// of every coin in time order find them one coin at a time in
// payouts_faucet_coin_time (D65), never by reading the faucet's whole
// range of it, or the table: with no time-ordered index of all a
// faucet's coins, a plan that did would read every payout the faucet ever
// made on each /payouts or limit check.
func TestPayoutListsSeekPerCoin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "plan.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Each way a plan may read payouts: a seek to one coin of the faucet,
	// one row by its id, or a step of PaidCoins' skip scan (c), which
	// takes the first entry at the faucet or after a coin (LIMIT 1).
	seek := regexp.MustCompile(`^SEARCH \w+ USING (COVERING )?INDEX payouts_faucet_coin_time \(faucet_id=\? AND coin=\?` +
		`|^SEARCH \w+ USING INTEGER PRIMARY KEY \(rowid=\?\)` +
		`|^SEARCH c USING COVERING INDEX payouts_faucet_coin_time \(faucet_id=\?( AND coin>\?)?\)$`)
	param := regexp.MustCompile(`\?(\d+)`)
	reads := regexp.MustCompile(`^(SCAN|SEARCH) (p|q|c|b|payouts)\b`)
	for _, name := range []string{"PayoutList", "PayoutListByCoin", "PayoutSearch", "PayoutWindowFaucet",
		"PayoutWindowFaucetCoin", "StatsDaily"} {
		query := db.Statement(name)
		if query == "" {
			t.Fatalf("no statement %s", name)
		}
		var args []any // one for each parameter ?1 to ?N
		for _, m := range param.FindAllStringSubmatch(query, -1) {
			for n, _ := strconv.Atoi(m[1]); len(args) < n; {
				args = append(args, 1)
			}
		}
		rows, err := conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		found := 0
		for _, step := range plan {
			if !reads.MatchString(step) {
				continue
			}
			found++
			if !seek.MatchString(step) {
				t.Errorf("%s reads payouts by %q; want a seek to one coin of the faucet, or a row by its id\nplan: %s",
					name, step, strings.Join(plan, "; "))
			}
		}
		if found == 0 {
			t.Errorf("%s: no read of payouts in its plan: %s", name, strings.Join(plan, "; "))
		}
	}
}

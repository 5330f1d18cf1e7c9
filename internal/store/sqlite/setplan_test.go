package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// TestSetStatementsSearchByKey: each set form of a payout batch's per-row
// statements (queries.sql) reads drip_rows once and finds each of its
// rows' rows by the table's key, never by a scan of the table: a scan of
// balances under every batch is what a drifting plan would cost.
func TestSetStatementsSearchByKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "plan.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	base, err := sqlite.NewConnector("file:" + path)
	if err != nil {
		t.Fatal(err)
	}
	conn := sql.OpenDB(rowsConnector{base})
	defer conn.Close()

	d := &driver{}
	for name, cols := range map[string][]sqlstore.Column{
		"FaucetsLockRows":      {{Name: "id", Ints: []int64{1, 2}}},
		"BalancesLockRows":     {{Name: "account_id", Ints: []int64{1, 2}}, {Name: "coin", Texts: []string{"BTC", "LTC"}}},
		"BalancesDebitRows":    {{Name: "account_id", Ints: []int64{1, 2}}, {Name: "coin", Texts: []string{"BTC", "LTC"}}, {Name: "amount", Ints: []int64{1, 1}}},
		"IdempotencyBoundRows": {{Name: "faucet_id", Ints: []int64{1, 2}}, {Name: "idem_key", Texts: []string{"a", "b"}}},
	} {
		query := statement(t, name)
		args, release := bindRows(cols)
		rows, err := conn.Query("EXPLAIN QUERY PLAN "+d.Rebind(query), args...)
		if err != nil {
			release()
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
		release()
		joined := strings.Join(plan, "; ")
		if len(plan) != 2 || !strings.HasPrefix(plan[0], "SCAN r VIRTUAL TABLE") ||
			!regexp.MustCompile(`^SEARCH \w+ USING (INTEGER PRIMARY KEY|(COVERING )?INDEX sqlite_autoindex_\w+) \(`).MatchString(plan[1]) {
			t.Errorf("%s: plan %q; want drip_rows scanned, then a search by the table's key", name, joined)
		}
	}
}

// statement is the SQL of a named statement in queries.sql.
func statement(t *testing.T, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(overrides, "-- name: "+name+"\n")
	if !ok {
		t.Fatalf("queries.sql has no statement %s", name)
	}
	body, _, _ := strings.Cut(rest, ";")
	return body
}

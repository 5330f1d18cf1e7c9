package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"slices"
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
	conn := planConn(t)
	d := &driver{}
	for name, cols := range map[string][]sqlstore.Column{
		"FaucetsLockRows":      {{Name: "id", Ints: []int64{1, 2}}},
		"BalancesLockRows":     {{Name: "account_id", Ints: []int64{1, 2}}, {Name: "coin", Texts: []string{"BTC", "LTC"}}},
		"BalancesDebitRows":    {{Name: "account_id", Ints: []int64{1, 2}}, {Name: "coin", Texts: []string{"BTC", "LTC"}}, {Name: "amount", Ints: []int64{1, 1}}},
		"IdempotencyBoundRows": {{Name: "faucet_id", Ints: []int64{1, 2}}, {Name: "idem_key", Texts: []string{"a", "b"}}},
	} {
		plan := explain(t, conn, d.Rebind(statement(t, name)), cols)
		if len(plan) != 2 || !strings.HasPrefix(plan[0], "SCAN r VIRTUAL TABLE") ||
			!regexp.MustCompile(`^SEARCH \w+ USING (INTEGER PRIMARY KEY|(COVERING )?INDEX sqlite_autoindex_\w+) \(`).MatchString(plan[1]) {
			t.Errorf("%s: plan %q; want drip_rows scanned, then a search by the table's key", name, strings.Join(plan, "; "))
		}
	}
	// The send limits' windows: each of drip_rows' rows a search by
	// faucet, recipient or IP, and time, never a scan of a faucet's
	// payouts. By recipient, a search of the copy and one of each recent
	// block (D71); by IP, one of payouts_faucet_ip.
	window := func(key string) []sqlstore.Column {
		cols := []sqlstore.Column{{Name: "i", Ints: []int64{0, 1}}, {Name: "faucet_id", Ints: []int64{1, 1}},
			{Name: "since", Ints: []int64{0, 0}}, {Name: "coin", Texts: []string{"", "BTC"}}}
		if key == "ip_address" {
			return append(cols, sqlstore.Column{Name: key, Texts: []string{"10.0.0.1", "10.0.0.2"}})
		}
		return append(cols, sqlstore.Column{Name: key, Ints: []int64{1, 2}})
	}
	for name, want := range map[string]struct {
		cols     []sqlstore.Column
		searches [][]string // each a scan of drip_rows, then the searches of each of its rows
	}{
		"PayoutWindowsRecipientRows": {window("recipient_id"), [][]string{
			{"SCAN r VIRTUAL TABLE INDEX 1:", "SEARCH c USING PRIMARY KEY (faucet_id=? AND recipient_id=? AND created_at>?)"},
			{"SCAN r VIRTUAL TABLE INDEX 1:", "SCAN b",
				"SEARCH p USING INDEX payouts_block_recipient (<expr>=? AND recipient_id=? AND faucet_id=? AND created_at>?)"}}},
		"PayoutWindowsIPRows": {window("ip_address"), [][]string{
			{"SCAN r VIRTUAL TABLE INDEX 1:", "SEARCH p USING INDEX payouts_faucet_ip (faucet_id=? AND ip_address=? AND created_at>?)"}}},
	} {
		plan := explain(t, conn, d.Rebind(statement(t, name)), want.cols)
		for _, s := range want.searches {
			if !containsRun(plan, s) {
				t.Errorf("%s: plan %q; want %q in it", name, strings.Join(plan, "; "), strings.Join(s, "; "))
			}
		}
		if i := slices.IndexFunc(plan, scansPayouts.MatchString); i >= 0 {
			t.Errorf("%s: plan %q scans payouts (%q)", name, strings.Join(plan, "; "), plan[i])
		}
	}
}

// scansPayouts matches a step of a plan that reads a table of payouts
// other than by a search of its key's prefix, or by faucet alone.
var scansPayouts = regexp.MustCompile(`^SCAN (p|c|q|payouts|payouts_by_recipient)\b|^SEARCH \w+ USING (COVERING )?INDEX \w+ \(faucet_id=\?\)$`)

// containsRun reports whether run appears in plan, its steps one after
// another.
func containsRun(plan, run []string) bool {
	for i := 0; i+len(run) <= len(plan); i++ {
		if slices.Equal(plan[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// TestJournalReadsSearchTheirIndex: the reads D67 and D70 moved off the
// journal's indexes of payouts search the index that serves them. A
// wallet's page reads, per faucet, one range of the copy of payouts by
// recipient in its order and one of each recent block (D71), each up to
// the page's end: only those rows are sorted, never all the user's
// payouts from the faucet. A faucet's journal, which merges
// transfers_from and transfers_to (whose condition on kind lets SQLite use
// the indexes that hold no payouts) with the faucet's payouts, is in
// TestFaucetReadsSearchTwoLevels.
func TestJournalReadsSearchTheirIndex(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	for _, index := range []string{"transfers_to", "transfers_from"} {
		var def string
		if err := conn.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, index).Scan(&def); err != nil ||
			!strings.HasSuffix(def, "WHERE kind <> 'payout'") {
			t.Errorf("%s is %q, %v; want it to hold no payouts", index, def, err)
		}
	}
	wantPlans(t, conn, map[string]planCase{
		"PayoutListByRecipient": {[]any{1, 2, "", 0, 100, 7, 50}, []string{
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)", "LIST SUBQUERY 7", "COMPOUND QUERY",
			"LEFT-MOST SUBQUERY", "CO-ROUTINE (subquery-4)",
			"SEARCH c USING PRIMARY KEY (faucet_id=? AND recipient_id=? AND created_at>? AND created_at<?)",
			"SCAN (subquery-4)", "UNION ALL", "CO-ROUTINE (subquery-6)",
			"MATERIALIZE blocks", "SETUP", "SCAN payout_blocks", "RECURSIVE STEP", "SCAN blocks",
			"SCALAR SUBQUERY 2", "SEARCH payouts", "SCAN b",
			"SEARCH q USING INDEX payouts_block_recipient (<expr>=? AND recipient_id=? AND faucet_id=? AND created_at>? AND created_at<?)",
			"USE TEMP B-TREE FOR ORDER BY", "SCAN (subquery-6)",
			"SEARCH f USING INTEGER PRIMARY KEY (rowid=?)", "USE TEMP B-TREE FOR ORDER BY"}},
	})
}

// TestFaucetReadsSearchTwoLevels: every read of a faucet's payouts or
// events searches its two levels (D72): the copy's range by its primary
// key (for payouts, one coin at a time, D68: the copy orders a faucet's
// payouts by coin, then time), and each recent block's by the block's
// index, never a scan of payouts or events. Each part that lists is
// ordered and limited on its own, so only those rows are sorted; the
// journal's payouts are read in the order of their time up to the page's
// end, only payouts of the same moment sorted among themselves. A sum
// finds each of the copy's payouts by id, as it did from the old index.
func TestFaucetReadsSearchTwoLevels(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	wantPlans(t, conn, map[string]planCase{
		"PayoutList": {[]any{1, 50}, slices.Concat([]string{
			"MERGE (UNION ALL)",
			"LEFT",
			"SCAN c USING COVERING INDEX sqlite_autoindex_coins_1",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"CORRELATED LIST SUBQUERY 4",
			"SEARCH q USING PRIMARY KEY (faucet_id=? AND coin=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"RIGHT",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"LIST SUBQUERY 7"}, recentBlocks("MATERIALIZE", "pblocks", "payouts"), []string{
			"SEARCH q USING COVERING INDEX payouts_block_faucet (<expr>=? AND faucet_id=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"USE TEMP B-TREE FOR ORDER BY"})},
		"PayoutListByCoin": {[]any{1, "BTC", 50}, slices.Concat([]string{
			"SEARCH payouts USING INTEGER PRIMARY KEY (rowid=?)",
			"LIST SUBQUERY 7",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"CO-ROUTINE (subquery-4)",
			"SEARCH q USING PRIMARY KEY (faucet_id=? AND coin=?)",
			"SCAN (subquery-4)",
			"UNION ALL",
			"CO-ROUTINE (subquery-6)"}, recentBlocks("MATERIALIZE", "pblocks", "payouts"), []string{
			"SEARCH q USING COVERING INDEX payouts_block_faucet (<expr>=? AND faucet_id=? AND coin=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-6)",
			"USE TEMP B-TREE FOR ORDER BY"})},
		"PayoutWindowFaucet": {[]any{1, 0, ""}, slices.Concat([]string{
			"CO-ROUTINE (subquery-6)",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SEARCH c USING PRIMARY KEY (faucet_id=? AND coin=? AND created_at>?)",
			"LIST SUBQUERY 4",
			"SCAN coins USING COVERING INDEX sqlite_autoindex_coins_1",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"UNION ALL"}, recentBlocks("CO-ROUTINE", "pblocks", "payouts"), []string{
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=?)",
			"SCAN (subquery-6)"})},
		"TransactionList": {[]any{1, "BTC", 50, 0}, slices.Concat([]string{
			"MERGE (UNION ALL)",
			"LEFT",
			"MERGE (UNION ALL)",
			"LEFT",
			"CO-ROUTINE (subquery-4)",
			"SEARCH t USING INDEX transfers_from (from_account=? AND coin=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-4)",
			"USE TEMP B-TREE FOR ORDER BY",
			"RIGHT",
			"CO-ROUTINE (subquery-6)",
			"SEARCH t USING INDEX transfers_to (to_account=? AND coin=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-6)",
			"USE TEMP B-TREE FOR ORDER BY",
			"RIGHT",
			"MERGE (UNION ALL)",
			"LEFT",
			"CO-ROUTINE (subquery-9)",
			"SEARCH c USING PRIMARY KEY (faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 8",
			"SEARCH f USING COVERING INDEX sqlite_autoindex_faucets_1 (account_id=?)",
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"USE TEMP B-TREE FOR LAST TERM OF ORDER BY",
			"SCAN (subquery-9)",
			"USE TEMP B-TREE FOR ORDER BY",
			"RIGHT",
			"CO-ROUTINE (subquery-12)"}, recentBlocks("CO-ROUTINE", "pblocks", "payouts"), []string{
			"SEARCH p USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 11",
			"SEARCH f USING COVERING INDEX sqlite_autoindex_faucets_1 (account_id=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-12)",
			"USE TEMP B-TREE FOR ORDER BY"})},
		"TransactionCount": {[]any{1, "BTC"}, slices.Concat([]string{
			"SCAN CONSTANT ROW",
			"SCALAR SUBQUERY 4",
			"SEARCH transfers USING INDEX transfers_from (from_account=? AND coin=?)",
			"SCALAR SUBQUERY 5",
			"SEARCH transfers USING INDEX transfers_to (to_account=? AND coin=?)",
			"SCALAR SUBQUERY 7",
			"SEARCH payouts_by_faucet USING PRIMARY KEY (faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 6",
			"SEARCH f USING COVERING INDEX sqlite_autoindex_faucets_1 (account_id=?)",
			"SCALAR SUBQUERY 9"}, recentBlocks("CO-ROUTINE", "pblocks", "payouts"), []string{
			"SEARCH p USING COVERING INDEX payouts_block_faucet (<expr>=? AND faucet_id=? AND coin=?)",
			"SCALAR SUBQUERY 8",
			"SEARCH f USING COVERING INDEX sqlite_autoindex_faucets_1 (account_id=?)"})},
		// The copy's range starts at the cursor (PayoutSearchAfter): a
		// page, and each of the CSV export's, reads no payout newer than it.
		"PayoutSearch": {[]any{1, "", 0, "", 7, 50}, slices.Concat([]string{
			"SEARCH p USING INTEGER PRIMARY KEY (rowid=?)",
			"LIST SUBQUERY 11",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SCAN c USING COVERING INDEX sqlite_autoindex_coins_1",
			"SEARCH x USING INTEGER PRIMARY KEY (rowid=?)",
			"CORRELATED LIST SUBQUERY 6",
			"SEARCH q USING PRIMARY KEY (faucet_id=? AND coin=? AND (created_at,payout_id)<(?,?))",
			"SCALAR SUBQUERY 5",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SEARCH b USING INTEGER PRIMARY KEY (rowid=?)",
			"UNION ALL",
			"SCAN CONSTANT ROW",
			"REUSE SUBQUERY 5",
			"SEARCH r USING INTEGER PRIMARY KEY (rowid=?)",
			"UNION ALL",
			"CO-ROUTINE (subquery-10)"}, recentBlocks("MATERIALIZE", "pblocks", "payouts"), []string{
			"SEARCH q USING INDEX payouts_block_faucet (<expr>=? AND faucet_id=?)",
			"SCALAR SUBQUERY 9",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"SEARCH b USING INTEGER PRIMARY KEY (rowid=?)",
			"UNION ALL",
			"SCAN CONSTANT ROW",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-10)",
			"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)",
			"USE TEMP B-TREE FOR ORDER BY"})},
		"EventList": {[]any{1, 50}, slices.Concat([]string{
			"SEARCH events USING INTEGER PRIMARY KEY (rowid=?)",
			"LIST SUBQUERY 7",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"CO-ROUTINE (subquery-4)",
			"SEARCH events_by_faucet USING PRIMARY KEY (faucet_id=?)",
			"SCAN (subquery-4)",
			"UNION ALL",
			"CO-ROUTINE (subquery-6)"}, recentBlocks("MATERIALIZE", "eblocks", "events"), []string{
			"SEARCH e USING COVERING INDEX events_block_faucet (<expr>=? AND faucet_id=?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-6)"})},
		"EventFeed": {[]any{1, 0, 5, "", 50}, slices.Concat([]string{
			"SEARCH events USING INTEGER PRIMARY KEY (rowid=?)",
			"LIST SUBQUERY 7",
			"COMPOUND QUERY",
			"LEFT-MOST SUBQUERY",
			"CO-ROUTINE (subquery-4)",
			"SEARCH events_by_faucet USING PRIMARY KEY (faucet_id=? AND seq>?)",
			"SCAN (subquery-4)",
			"UNION ALL",
			"CO-ROUTINE (subquery-6)"}, recentBlocks("MATERIALIZE", "eblocks", "events"), []string{
			"SEARCH e USING COVERING INDEX events_block_faucet (<expr>=? AND faucet_id=? AND seq>?)",
			"USE TEMP B-TREE FOR ORDER BY",
			"SCAN (subquery-6)"})},
	})
	// The compactor copies blocks from the recent level's index alone, in
	// its order: no table row read, nothing sorted.
	for l, want := range map[string]string{
		"payouts": "SEARCH payouts USING COVERING INDEX payouts_block_faucet (<expr>>? AND <expr><?)",
		"events":  "SEARCH events USING COVERING INDEX events_block_faucet (<expr>>? AND <expr><?)",
	} {
		i := slices.IndexFunc(faucetLevels, func(f faucetLevel) bool { return f.name == l })
		if got := plan(t, conn, faucetLevels[i].copy, 1, 2); !slices.Equal(got, []string{want}) {
			t.Errorf("the compactor's copy of %s: plan %q, want %q", l, got, want)
		}
	}
}

// recentBlocks is the plan of a read's list of recent blocks (D72): the
// recursive query cte run as how ("CO-ROUTINE" or "MATERIALIZE"), from
// the watermark to the last block of table.
func recentBlocks(how, cte, table string) []string {
	return []string{how + " " + cte, "SETUP", "SCAN faucet_blocks", "RECURSIVE STEP", "SCAN " + cte,
		"SCALAR SUBQUERY 2", "SEARCH " + table, "SCAN b"}
}

// explain is the plan SQLite makes for query over the rows cols.
func explain(t *testing.T, conn *sql.DB, query string, cols []sqlstore.Column) []string {
	t.Helper()
	args, release := bindRows(cols)
	defer release()
	return plan(t, conn, query, args...)
}

// plan is the plan SQLite makes for query with args.
func plan(t *testing.T, conn *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}

// planConn opens a migrated database for EXPLAIN QUERY PLAN, on a
// connection with temp.drip_rows for the set forms' statements.
func planConn(t *testing.T) *sql.DB {
	t.Helper()
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
	conn := sql.OpenDB(rowsConnector{Connector: base})
	t.Cleanup(func() { conn.Close() })
	return conn
}

// planCase is a named statement's arguments, and the plan SQLite must
// make for it with them, step by step.
type planCase struct {
	args []any
	want []string
}

// wantPlans fails for each named statement whose plan is not its case's.
func wantPlans(t *testing.T, conn *sql.DB, cases map[string]planCase) {
	t.Helper()
	d := &driver{}
	for name, c := range cases {
		if got := plan(t, conn, d.Rebind(statement(t, name)), c.args...); !slices.Equal(got, c.want) {
			t.Errorf("%s: plan\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// statement is a named statement as SQLite runs it: its own form in
// queries.sql, or else the shared one in sqlstore's.
func statement(t *testing.T, name string) string {
	t.Helper()
	sql, ok := sqlstore.QueryText(overrides, name)
	if !ok {
		t.Fatalf("no queries.sql has a statement %s", name)
	}
	return sql
}

// TestReconcileAccountsSortsOnce: reconcile's check of every balance
// against its journal (D3) reads balances and transfers once each and
// sums them in one sort, never a search of one side for each row of the
// other: joined to the journal's grouped sums, which have no index,
// SQLite scanned all of them for each balance, a time growing with the
// square of the accounts.
func TestReconcileAccountsSortsOnce(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	wantPlans(t, conn, map[string]planCase{"ReconcileAccounts": {nil, []string{
		"CO-ROUTINE entries", "COMPOUND QUERY", "LEFT-MOST SUBQUERY", "SCAN balances",
		"UNION ALL", "SCAN transfers", "UNION ALL", "SCAN transfers", "SCAN entries", "USE TEMP B-TREE FOR GROUP BY"}}})
}

// TestOutboxClaimSearchesItsKind: a claim of one kind's due deliveries
// searches outbox_due from that kind's oldest (migration 0030), never the
// other kind's: the merchant callbacks' claim walked every due webhook
// delivery, ten times a second, inside SQLite's one write transaction.
func TestOutboxClaimSearchesItsKind(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	got := plan(t, conn, (&driver{}).Rebind(statement(t, "OutboxClaim")), 100, 200, 10, "callback")
	if !slices.Contains(got, "SEARCH d USING INDEX outbox_due (kind=? AND next_attempt_at<?)") {
		t.Errorf("OutboxClaim: plan\n%s\nwant a search of outbox_due by kind and time", strings.Join(got, "\n"))
	}
}

// TestPagesSearchFromTheirCursor: the pages listed newest first before a
// cursor (0: from the newest) search their index from the cursor, and a
// list or count of one endpoint's or one merchant's rows searches theirs,
// never a scan of the whole table: under "($4 = 0 OR d.id < $4)" or
// "($2 = 0 OR d.endpoint_id = $2)" SQLite could use neither, and an
// endpoint's page of deliveries read every faucet's from the newest down.
// An arm guarded by the other case ($2 = 0) runs nothing.
func TestPagesSearchFromTheirCursor(t *testing.T) {
	t.Parallel()
	conn := planConn(t)
	d := &driver{}
	wantPlans(t, conn, map[string]planCase{
		"WebhookDeliveryList": {[]any{1, 2, "", 7, 50}, []string{
			"MERGE (UNION ALL)", "LEFT", "CO-ROUTINE one",
			"SEARCH d USING INDEX outbox_endpoint (endpoint_id=? AND id<?)",
			"SEARCH e USING INDEX sqlite_autoindex_events_1 (id=?)",
			"SCAN one", "USE TEMP B-TREE FOR ORDER BY", "RIGHT", "CO-ROUTINE every",
			"SEARCH d USING INTEGER PRIMARY KEY (rowid<?)",
			"SEARCH e USING INDEX sqlite_autoindex_events_1 (id=?)",
			"SCAN every", "USE TEMP B-TREE FOR ORDER BY"}},
		"WebhookDeliveryCount": {[]any{2}, []string{
			"CO-ROUTINE d", "COMPOUND QUERY", "LEFT-MOST SUBQUERY",
			"SEARCH outbox USING INDEX outbox_endpoint (endpoint_id=?)",
			"UNION ALL", "SCAN outbox", "SCAN d", "USE TEMP B-TREE FOR GROUP BY"}},
		"CheckoutList": {[]any{1, 0, 7, 50}, []string{
			"MERGE (UNION ALL)", "LEFT", "CO-ROUTINE received",
			"SEARCH merchant_checkouts USING INDEX merchant_checkouts_merchant (merchant_id=? AND id<?)",
			"SCAN received", "USE TEMP B-TREE FOR ORDER BY", "RIGHT", "CO-ROUTINE paid",
			"SEARCH merchant_checkouts USING INDEX merchant_checkouts_payer (payer_id=? AND id<?)",
			"SCAN paid", "USE TEMP B-TREE FOR ORDER BY"}},
		"UserAddressOwners": {[]any{"addr"}, []string{
			"SEARCH user_addresses USING INDEX user_addresses_address (address=?)",
			"USE TEMP B-TREE FOR ORDER BY"}},
		"AuditList": {[]any{1, 50, 7}, []string{
			"SEARCH a USING INDEX audit_log_faucet (faucet_id=? AND id<?)",
			"SEARCH k USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN",
			"SEARCH u USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN"}},
		"OperatorLogList": {[]any{7, 50}, []string{
			"SEARCH l USING INTEGER PRIMARY KEY (rowid<?)",
			"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)"}},
	})
	// The owner's payouts of one recipient: the two levels by recipient
	// (D71), each from the cursor, not PayoutSearch's ranges by coin.
	got := plan(t, conn, d.Rebind(statement(t, "PayoutSearchByRecipient")), 1, "", 3, "", 7, 50)
	for _, want := range []string{
		"SEARCH c USING PRIMARY KEY (faucet_id=? AND recipient_id=? AND (created_at,payout_id)<(?,?))",
		"SEARCH q USING INDEX payouts_block_recipient (<expr>=? AND recipient_id=? AND faucet_id=? AND created_at<?)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("PayoutSearchByRecipient: plan\n%s\nwant %q in it", strings.Join(got, "\n"), want)
		}
	}
	if i := slices.IndexFunc(got, scansPayouts.MatchString); i >= 0 {
		t.Errorf("PayoutSearchByRecipient: plan %q scans payouts (%q)", strings.Join(got, "; "), got[i])
	}
}

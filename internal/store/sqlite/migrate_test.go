package sqlite

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMigrationSortsOutsideMemory: a migration that builds an index over
// every payout stored sorts in temporary files, not in memory (migrate).
// Under the writer's temp_store=MEMORY, migration 0028 held the sort of
// 10M payouts in memory, a peak of 660 MB. Here 0028 runs again over
// 1M payouts, and the process's peak RSS may not grow by what that sort
// needs in memory (about 60 MB; a few MB in files).
//
// Not parallel: the peak is the whole process's (VmHWM, reset by
// /proc/self/clear_refs), and parallel tests wait for this one.
func TestMigrationSortsOutsideMemory(t *testing.T) {
	if testing.Short() || raceBuild {
		// Under -race the same test takes 4 minutes instead of 8 s, and
		// its instrumentation is memory of its own; one connection
		// migrating has no race to find.
		t.Skip("stores 1M payouts")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "drip.db")
	st, err := open(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw := rawDB(t, path)
	for _, q := range []string{
		`INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
		 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
		 SELECT i, 1 + i % 100, 1 + (i * 7919) % 100000, i, 'u', 'BTC', 1, '', '', i FROM n`,
		// The database as 0027 left it: 0028 rebuilds the index.
		`DROP INDEX payouts_block_recipient`,
		`CREATE INDEX payouts_block_recipient ON payouts (id >> 16, faucet_id, recipient_id, created_at)`,
		`DELETE FROM schema_migrations WHERE version = 28`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	raw.Close()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err) // Linux since 4.0
	}
	before := procStatus(t, "VmHWM")
	if st, err = open(ctx, path, false); err != nil { // migrates: 0028
		t.Fatal(err)
	}
	defer st.Close()
	if ints(t, rawDB(t, path), `SELECT COUNT(*) FROM schema_migrations WHERE version = 28`)[0] != 1 {
		t.Fatal("migration 0028 did not run again")
	}
	const bound = 24 << 10 // kB
	if grew := procStatus(t, "VmHWM") - before; grew > bound {
		t.Errorf("peak RSS grew by %d MB while 0028 indexed 1M payouts, want at most %d MB: the sort ran in memory", grew>>10, bound>>10)
	} else {
		t.Logf("peak RSS grew by %d MB while 0028 indexed 1M payouts", grew>>10)
	}
}

// procStatus is a field of /proc/self/status, in kB.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

package sqlite

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

func TestZZTimeStats(t *testing.T) {
	path := os.Getenv("DRIP_STATS_DB")
	if path == "" {
		t.Skip()
	}
	oldText, _ := os.ReadFile("/tmp/exp/before/internal/store/sqlite/queries.sql")
	base, _ := sqlite.NewConnector("file:" + path + "?_pragma=query_only(1)")
	db := sql.OpenDB(base)
	defer db.Close()
	d := &driver{}
	since := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -29).UnixMicro()
	for _, c := range []struct {
		name string
		args []any
	}{{"StatsUsers", []any{2, "BTC", 50, 0}}, {"StatsUsers", []any{2, "BTC", 50, 9950}}, {"StatsUsersCount", []any{2, "BTC"}}, {"StatsDaily", []any{2, since}}} {
		for _, v := range []string{"old", "new"} {
			var q string
			if v == "old" {
				q, _ = sqlstore.QueryText(string(oldText), c.name)
			} else {
				q, _ = sqlstore.QueryText(overrides, c.name)
			}
			q = d.Rebind(q)
			var times []string
			var n int
			var all []string
			for range 3 {
				start := time.Now()
				rows, err := db.Query(q, c.args...)
				if err != nil {
					t.Fatal(err)
				}
				n = 0
				cols, _ := rows.Columns()
				all = all[:0]
				for rows.Next() {
					n++
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					rows.Scan(ptrs...)
					all = append(all, fmt.Sprint(vals...))
				}
				rows.Close()
				times = append(times, fmt.Sprintf("%.1f", float64(time.Since(start).Microseconds())/1000))
			}
			fmt.Printf("%-16s %v %s: %v ms (%d rows) sum %x\n", c.name, c.args[2:], v, times, n, sha256.Sum256([]byte(fmt.Sprint(all))))
		}
	}
}

func TestZZLag(t *testing.T) {
	path := os.Getenv("DRIP_LAG_DB")
	if path == "" {
		t.Skip()
	}
	ctx := t.Context()
	st, err := open(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, _ := sql.Open("sqlite", "file:"+path)
	defer raw.Close()
	for _, q := range []string{`DELETE FROM stats_users`, `DELETE FROM stats_days`, `DELETE FROM stats_day_users`, `UPDATE stats_mark SET folded = 0`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, end, _ := st.StatsPending(ctx)
	start := time.Now()
	if _, err := st.StatsFold(ctx, end-100_000); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("folded %d in %v\n", end-100_000, time.Since(start))
}

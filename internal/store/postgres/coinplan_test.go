package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestPayoutListsSeekPerCoin: the statements that read a faucet's payouts
// of every coin in time order find them one coin at a time in
// payouts_faucet_coin_time (D65), in the generic plans PostgreSQL keeps
// for drip's prepared statements: never by a scan of the table, nor by
// the faucet's whole range of an index. A plain join of the coins to
// payouts was planned as a hash join over the faucet's range of
// payouts_faucet_recipient; this test fails on it.
func TestPayoutListsSeekPerCoin(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	st, url := storetest.OpenPostgresURL(t)
	db := st.(*sqlstore.DB)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// 30,000 payouts of three faucets in three coins, with statistics:
	// enough rows that a scan costs what it would in use (payouts keeps
	// no foreign keys, D64).
	for _, s := range []string{
		`INSERT INTO payouts (faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
		 SELECT 1 + i % 3, 1 + i % 500, i, 'u', (ARRAY['BTC', 'DOGE', 'LTC'])[1 + i / 3 % 3], 5, '', '', i * 1000
		 FROM generate_series(1, 30000) AS i`,
		`ANALYZE payouts`,
		`SET plan_cache_mode = force_generic_plan`,
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for name, args := range map[string]string{
		"PayoutList":             "2, 100",
		"PayoutListByCoin":       "2, 'BTC', 100",
		"PayoutSearch":           "2, '', 0, '', 0, 50",
		"PayoutWindowFaucet":     "2, 29000000",
		"PayoutWindowFaucetCoin": "2, 29000000, 'BTC'",
		"StatsDaily":             "2, 29000000",
	} {
		sql := db.Statement(name)
		if sql == "" {
			t.Fatalf("no statement %s", name)
		}
		if _, err := conn.Exec(ctx, "PREPARE "+strings.ToLower(name)+" AS "+sql); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
		var out string
		err := conn.QueryRow(ctx, fmt.Sprintf("EXPLAIN (FORMAT JSON) EXECUTE %s(%s)", strings.ToLower(name), args),
			pgx.QueryExecModeSimpleProtocol).Scan(&out)
		if err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		var plans []struct{ Plan planNode }
		if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
			t.Fatalf("%s: plan %s: %v", name, out, err)
		}
		reads := 0
		plans[0].Plan.walk("", func(n *planNode, parent string) {
			if n.Relation != "payouts" && !strings.HasPrefix(n.Index, "payouts_") {
				return
			}
			reads++
			cond := n.IndexCond + n.RecheckCond
			perCoin := n.Index == "payouts_faucet_coin_time" && strings.Contains(cond, "coin =")
			skip := n.Index == "payouts_faucet_coin_time" && parent == "Limit" // PaidCoins: one entry a seek
			byID := n.Index == "payouts_pkey"
			heap := n.Type == "Bitmap Heap Scan" && strings.Contains(cond, "coin =")
			if !perCoin && !skip && !byID && !heap {
				t.Errorf("%s reads payouts by %s %s (%s); want a seek to one coin of the faucet\nplan: %s",
					name, n.Type, n.Index, cond, out)
			}
		})
		if reads == 0 {
			t.Errorf("%s: no read of payouts in its plan: %s", name, out)
		}
	}
}

// planNode is a node of PostgreSQL's EXPLAIN (FORMAT JSON).
type planNode struct {
	Type        string     `json:"Node Type"`
	Relation    string     `json:"Relation Name"`
	Index       string     `json:"Index Name"`
	IndexCond   string     `json:"Index Cond"`
	RecheckCond string     `json:"Recheck Cond"`
	Plans       []planNode `json:"Plans"`
}

// walk calls f on n and each node under it, with its parent's type.
func (n *planNode) walk(parent string, f func(n *planNode, parent string)) {
	f(n, parent)
	for i := range n.Plans {
		n.Plans[i].walk(n.Type, f)
	}
}

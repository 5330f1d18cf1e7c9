package sqlstore

import (
	"errors"
	"reflect"
	"testing"
)

// TestRowCallsChooseTheirForm: a batch's per-row locks and debits run as
// their set form once over two or more rows, and as the one-row statement
// for a batch of one row, on every engine (PostgreSQL's set form costs
// more than one statement for one row: BENCHMARKS.md round twenty-four).
// An engine without the set form runs the one-row statement a row.
func TestRowCallsChooseTheirForm(t *testing.T) {
	one := stmt{name: "BalanceDebit", sql: "UPDATE one"}
	set := stmt{name: "BalancesDebitRows", sql: "UPDATE set"}
	short := errors.New("short")
	cols := func(n int) []Column {
		ids, coins := make([]int64, n), make([]string, n)
		for i := range n {
			ids[i], coins[i] = int64(10+i), "BTC"
		}
		return []Column{ints("account_id", ids), texts("coin", coins)}
	}
	q := &querier{}
	for _, tc := range []struct {
		name string
		set  stmt
		rows int
		want []call
	}{
		{"no rows", set, 0, nil},
		{"one row", set, 1, []call{{s: one, args: []any{int64(10), "BTC"}, want: 1, short: short}}},
		{"two rows", set, 2, []call{{s: set, rows: cols(2), want: 2, short: short}}},
		{"two rows, no set form", stmt{name: "BalancesDebitRows"}, 2, []call{
			{s: one, args: []any{int64(10), "BTC"}, want: 1, short: short},
			{s: one, args: []any{int64(11), "BTC"}, want: 1, short: short},
		}},
	} {
		got := q.rowCalls(one, tc.set, cols(tc.rows), call{short: short})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: rowCalls = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

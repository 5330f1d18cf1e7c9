package sqlite

import (
	"context"
	sqldriver "database/sql/driver"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite/vtab"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// The batch statements of a payout batch (the *Rows queries) read their
// rows from drip_rows, a virtual table whose rows are Go slices: the
// statement binds one handle ($1) to a set of rows registered for the time
// it runs (bindRows), and reads each row's values as columns c0, c1, ...
// in the order the store gives them (sqlstore.PayoutsInsert).
//
// SQLite binds no arrays. The rows went before as one JSON array of
// objects read with jsonb_each and ->>: finding each value by its key was
// a third of each batch statement's work and a fifth of the store's for a
// payout (issue 16). A value read from a slice costs a call.

// rowsModule is the name of the module and of each connection's table
// (temp.drip_rows, made by rowsConnector).
const rowsModule = "drip_rows"

// rowsColumns is how many value columns drip_rows has: the widest batch
// statement's (payouts: nine).
const rowsColumns = 12

func init() {
	if err := vtab.RegisterModule(nil, rowsModule, rowsTable{}); err != nil {
		panic(fmt.Sprintf("sqlite: register %s: %v", rowsModule, err))
	}
}

// rowSets holds the sets of rows bound to statements now running, by
// handle.
var (
	rowSets   sync.Map // int64 -> []sqlstore.Column
	rowHandle atomic.Int64
)

// bindRows registers cols for a statement to read from drip_rows and
// returns its parameter (the set's handle) and the func that forgets the
// set once the statement has run.
func bindRows(cols []sqlstore.Column) ([]any, func()) {
	if len(cols) > rowsColumns {
		// A programming error: the statement's SQL could not name them.
		panic(fmt.Sprintf("sqlite: %d columns of rows; drip_rows has %d", len(cols), rowsColumns))
	}
	h := rowHandle.Add(1)
	rowSets.Store(h, cols)
	return []any{h}, func() { rowSets.Delete(h) }
}

// rowsSchema declares drip_rows: the hidden handle, then the values.
var rowsSchema = func() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE x(handle HIDDEN")
	for i := range rowsColumns {
		fmt.Fprintf(&b, ", c%d", i)
	}
	b.WriteString(")")
	return b.String()
}()

// rowsTable is the module and its table: it keeps no state of its own.
type rowsTable struct{}

func (rowsTable) Create(ctx vtab.Context, _ []string) (vtab.Table, error) {
	return rowsTable{}, ctx.Declare(rowsSchema)
}

func (rowsTable) Connect(ctx vtab.Context, _ []string) (vtab.Table, error) {
	return rowsTable{}, ctx.Declare(rowsSchema)
}

// BestIndex takes handle = ? as the one way in; without it, the table is
// as good as endless, and a scan of it reads no rows.
func (rowsTable) BestIndex(info *vtab.IndexInfo) error {
	for i := range info.Constraints {
		c := &info.Constraints[i]
		if c.Usable && c.Column == 0 && c.Op == vtab.OpEQ {
			c.ArgIndex, c.Omit = 0, true
			info.IdxNum, info.EstimatedCost, info.EstimatedRows = 1, 1, 100
			return nil
		}
	}
	info.IdxNum, info.EstimatedCost = 0, 1e18
	return nil
}

func (rowsTable) Open() (vtab.Cursor, error) { return &rowsCursor{}, nil }
func (rowsTable) Disconnect() error          { return nil }
func (rowsTable) Destroy() error             { return nil }

// rowsCursor reads one bound set of rows.
type rowsCursor struct {
	handle int64
	cols   []sqlstore.Column
	n, row int
}

func (c *rowsCursor) Filter(idxNum int, _ string, vals []vtab.Value) error {
	*c = rowsCursor{}
	if idxNum != 1 || len(vals) != 1 {
		return nil
	}
	h, ok := vals[0].(int64)
	if !ok {
		return fmt.Errorf("%s: handle %v is not an integer", rowsModule, vals[0])
	}
	set, ok := rowSets.Load(h)
	if !ok {
		return fmt.Errorf("%s: no rows bound to handle %d", rowsModule, h)
	}
	c.handle, c.cols = h, set.([]sqlstore.Column)
	if len(c.cols) > 0 {
		c.n = c.cols[0].Len()
	}
	return nil
}

func (c *rowsCursor) Next() error { c.row++; return nil }
func (c *rowsCursor) Eof() bool   { return c.row >= c.n }

func (c *rowsCursor) Column(i int) (vtab.Value, error) {
	if i == 0 {
		return c.handle, nil
	}
	if i > len(c.cols) {
		return nil, nil
	}
	col := &c.cols[i-1]
	switch {
	case col.Ints != nil:
		return col.Ints[c.row], nil
	case col.Texts != nil:
		return col.Texts[c.row], nil
	default:
		return col.Floats[c.row], nil
	}
}

func (c *rowsCursor) Rowid() (int64, error) { return int64(c.row), nil }
func (c *rowsCursor) Close() error          { return nil }

// rowsConnector opens connections each with its own temp.drip_rows (a
// virtual table of the temp schema lives as long as its connection, and
// nothing of it is written to the file), then runs then: a reader's
// query_only, which must come after, as it refuses even the temp
// schema's CREATE.
type rowsConnector struct {
	sqldriver.Connector
	then []string
}

func (c rowsConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(sqldriver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("sqlite: a connection of %T cannot execute", conn)
	}
	if _, err := ex.ExecContext(ctx, "CREATE VIRTUAL TABLE temp."+rowsModule+" USING "+rowsModule, nil); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sqlite: create temp.%s: %w", rowsModule, err)
	}
	for _, q := range c.then {
		if _, err := ex.ExecContext(ctx, q, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("sqlite: %s: %w", q, err)
		}
	}
	return conn, nil
}

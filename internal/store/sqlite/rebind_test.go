package sqlite

import "testing"

// TestRebind: $N becomes ?N, and a LIMIT or OFFSET parameter +?N, which
// SQLite does not re-prepare the statement for at each binding.
func TestRebind(t *testing.T) {
	t.Parallel()
	d := &driver{}
	for _, c := range [][2]string{
		{`SELECT a FROM t WHERE b = $1`, `SELECT a FROM t WHERE b = ?1`},
		{`SELECT a FROM t WHERE b = $1 ORDER BY a LIMIT $2`, `SELECT a FROM t WHERE b = ?1 ORDER BY a LIMIT +?2`},
		{`SELECT a FROM t ORDER BY a LIMIT $12 OFFSET $13`, `SELECT a FROM t ORDER BY a LIMIT +?12 OFFSET +?13`},
		{`SELECT a FROM t ORDER BY a LIMIT 1`, `SELECT a FROM t ORDER BY a LIMIT 1`},
		{"SELECT a FROM t\nORDER BY a LIMIT $3\n", "SELECT a FROM t\nORDER BY a LIMIT +?3\n"},
	} {
		if got := d.Rebind(c[0]); got != c[1] {
			t.Errorf("Rebind(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

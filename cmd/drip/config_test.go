package main

import (
	"context"
	"testing"

	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestOnlyServeFoldsTheStatistics: on either engine, the database flags
// every command registers open a tool's store (sqlite.OpenTool,
// postgres.OpenTool), which folds no statistics; only serve, which sets
// node, opens a node's, whose folder does (D73).
func TestOnlyServeFoldsTheStatistics(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			var d dbFlags
			if engine == "postgres" {
				st, u := storetest.OpenPostgresURL(t) // skips without PostgreSQL
				st.Close()                            // a node's store: its folder would fold the test's payouts
				d.databaseURL = u
			} else {
				d.dataDir = t.TempDir()
			}
			storetest.ToolLeavesTheSums(t, func(node bool) store.Store {
				d := d
				d.node = node
				st, err := openStore(context.Background(), d)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}

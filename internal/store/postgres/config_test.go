package postgres

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testURLEnv is storetest.PostgresEnv (storetest imports this package).
const testURLEnv = "DRIP_TEST_POSTGRES_URL"

// The sessions drip opens run without JIT compilation (D65) and with the
// timeouts it was given, as the server reports them; a URL that sets a
// parameter itself keeps its own value.
func TestSessionParameters(t *testing.T) {
	base := os.Getenv(testURLEnv)
	if base == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL session test (D31)", testURLEnv)
	}
	own, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := own.Query()
	q.Set("jit", "on")
	q.Set("statement_timeout", "2500")
	own.RawQuery = q.Encode()

	for _, c := range []struct {
		name, url, jit, statement string
	}{
		{"default", base, "off", "1500ms"},
		{"the URL's own", own.String(), "on", "2500ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := poolConfig(c.url, Timeouts{Statement: 1500 * time.Millisecond, IdleInTransaction: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for name, want := range map[string]string{
				"jit":                                 c.jit,
				"synchronous_commit":                  "on",
				"statement_timeout":                   c.statement,
				"idle_in_transaction_session_timeout": "2s",
			} {
				var got string
				if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

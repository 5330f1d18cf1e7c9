package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
)

// database is where the bench runs: a SQLite directory or a PostgreSQL
// schema of its own, and the flags that name it to drip serve and admin.
type database struct {
	dataDir string // SQLite
	url     string // PostgreSQL, with search_path set to the bench's schema
	args    []string

	tempDir string // a directory the bench created
	baseURL string // the URL the schema was created in
	schema  string // a schema the bench created
}

// openDatabase makes a new temporary SQLite directory (unless one is
// given), or a new schema drip_bench_<random> in the PostgreSQL database.
func openDatabase(ctx context.Context, cfg Config) (*database, error) {
	if cfg.DatabaseURL == "" {
		d := &database{dataDir: cfg.DataDir}
		if d.dataDir == "" {
			dir, err := os.MkdirTemp("", "drip-bench-")
			if err != nil {
				return nil, err
			}
			d.dataDir, d.tempDir = dir, dir
		}
		d.args = []string{"--data-dir", d.dataDir}
		return d, nil
	}
	u, err := url.Parse(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	d := &database{baseURL: cfg.DatabaseURL, schema: "drip_bench_" + hex.EncodeToString(b)}
	conn, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{d.schema}.Sanitize()); err != nil {
		return nil, fmt.Errorf("postgres: create schema %s: %w", d.schema, err)
	}
	q := u.Query()
	q.Set("search_path", d.schema)
	u.RawQuery = q.Encode()
	d.url = u.String()
	d.args = []string{"--database-url", d.url}
	return d, nil
}

// close removes what openDatabase created, unless keep.
func (d *database) close(keep bool, log io.Writer) error {
	switch {
	case keep && d.tempDir != "":
		fmt.Fprintf(log, "bench: kept the SQLite database in %s\n", d.tempDir)
	case keep && d.schema != "":
		fmt.Fprintf(log, "bench: kept the PostgreSQL schema %s: --database-url '%s'\n", d.schema, d.url)
	case d.tempDir != "":
		return os.RemoveAll(d.tempDir)
	case d.schema != "":
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, d.baseURL)
		if err != nil {
			return fmt.Errorf("postgres: drop schema %s: %w", d.schema, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{d.schema}.Sanitize()+" CASCADE"); err != nil {
			return fmt.Errorf("postgres: drop schema %s: %w", d.schema, err)
		}
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/user"
)

// dbFlags are the flags every command shares to find its database.
type dbFlags struct {
	dataDir     string
	databaseURL string
}

func (d *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.dataDir, "data-dir", "./drip-data", "directory of the embedded SQLite database")
	fs.StringVar(&d.databaseURL, "database-url", "", "postgres://... selects PostgreSQL; empty means SQLite in --data-dir")
}

// parseFlags parses args after applying DRIP_* environment variables as
// defaults, so the command line wins over the environment.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		name := "DRIP_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = usagef("%s: %v", name, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// openStore opens the database the flags name and applies its migrations.
func openStore(ctx context.Context, d dbFlags) (store.Store, error) {
	if d.databaseURL != "" {
		if !strings.HasPrefix(d.databaseURL, "postgres://") && !strings.HasPrefix(d.databaseURL, "postgresql://") {
			return nil, usagef("--database-url must be a postgres:// URL (leave it empty for SQLite)")
		}
		return postgres.Open(ctx, d.databaseURL)
	}
	if err := os.MkdirAll(d.dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	return sqlite.Open(ctx, filepath.Join(d.dataDir, "drip.db"))
}

// services are the application's parts, built once per process.
type services struct {
	store   store.Store
	now     func() time.Time
	users   *user.Registry
	faucets *faucet.Service
	coins   *coin.Catalog
	ledger  *ledger.Ledger
}

func openServices(ctx context.Context, d dbFlags) (*services, error) {
	st, err := openStore(ctx, d)
	if err != nil {
		return nil, err
	}
	now := time.Now
	users, err := user.NewRegistry(ctx, st, now)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &services{
		store: st, now: now, users: users,
		faucets: faucet.NewService(st, now),
		coins:   coin.NewCatalog(st),
		ledger:  ledger.New(st, now),
	}, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drip migrate", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	st, err := openStore(ctx, d) // opening applies pending migrations
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "migrations applied (%s)\n", st.Engine())
	return nil
}

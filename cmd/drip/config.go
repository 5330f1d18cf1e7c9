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

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/errlog"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/sqlite"
)

// dbFlags are the flags every command shares to find its database.
type dbFlags struct {
	dataDir     string
	databaseURL string
	// timeouts bound PostgreSQL's waits; serve sets them from its flags,
	// other commands keep postgres.DefaultTimeouts.
	timeouts *postgres.Timeouts
	// log receives warnings about the database (a data directory others
	// can read); nil writes them to stderr.
	log *slog.Logger
	// node is set by serve: only the serving node runs the store's
	// background writers, SQLite's compactor and either engine's
	// statistics folder (sqlite.OpenTool and postgres.OpenTool say why).
	node bool
}

func (d *dbFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.dataDir, "data-dir", "./drip-data", "directory of the embedded SQLite database")
	fs.StringVar(&d.databaseURL, "database-url", "", "postgres://... selects PostgreSQL; empty means SQLite in --data-dir")
}

// openStore opens the database the flags name and applies its migrations.
func openStore(ctx context.Context, d dbFlags) (store.Store, error) {
	if d.databaseURL != "" {
		if !strings.HasPrefix(d.databaseURL, "postgres://") && !strings.HasPrefix(d.databaseURL, "postgresql://") {
			return nil, usagef("--database-url must be a postgres:// URL (leave it empty for SQLite)")
		}
		if !d.node {
			return postgres.OpenTool(ctx, d.databaseURL)
		}
		if d.timeouts != nil {
			return postgres.OpenTimeouts(ctx, d.databaseURL, *d.timeouts)
		}
		return postgres.Open(ctx, d.databaseURL)
	}
	if d.dataDir == "" {
		return nil, usagef("--data-dir must not be empty")
	}
	// sqlite.Open makes the data directory 0700 and the database files
	// 0600 too; here, what it cannot fix is said.
	path := filepath.Join(d.dataDir, "drip.db")
	warnings, err := sqlite.EnsurePrivate(path)
	if err != nil {
		return nil, err
	}
	log := d.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	for _, w := range warnings {
		log.Warn(w, "data_dir", d.dataDir)
	}
	if d.node {
		return sqlite.Open(ctx, path)
	}
	return sqlite.OpenTool(ctx, path)
}

// openApp opens the database the flags name and builds the services over it.
func openApp(ctx context.Context, d dbFlags, opts app.Options) (*app.App, error) {
	st, err := openStore(ctx, d)
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, st, opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// errorLogInterval is how often an error of one cause is written at most.
const errorLogInterval = 10 * time.Second

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, usagef("--log-format must be json or text, not %q", format)
	}
	// An outage fails every request alike: errlog writes one line per
	// cause per interval, with a count, instead of one per request (D58).
	return slog.New(errlog.Summarize(h, errorLogInterval)), nil
}

func migrate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("drip migrate", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	if err := parseFlags(ctx, fs, args, stdout, withConfig); err != nil {
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

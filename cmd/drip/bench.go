package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/bench"
	"github.com/dripfaucet/drip/internal/store"
)

func benchmark(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drip bench", flag.ContinueOnError)
	var cfg bench.Config
	fs.StringVar(&cfg.DataDir, "data-dir", "", "SQLite directory to bench in (default: a new temporary one, removed afterwards)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", "", "postgres://... benches PostgreSQL, in a new schema drip_bench_<random> dropped afterwards")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temporary directory or schema")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios (default: all, listed in drip bench --help)")
	concurrency := fs.String("concurrency", "", "closed-loop concurrencies (default 1,16,64; --short 1,8)")
	rates := fs.String("rates", "", "open-loop rates in percent of the closed-loop peak (default 50,80; --short 50; \"none\" for none)")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "warm-up before each run (default 2s; --short 50ms)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "measured time of each run (default 10s; --short 250ms)")
	fs.IntVar(&cfg.Recipients, "recipients", 0, "recipients the faucets pay round-robin (default 10000; --short 100)")
	fs.IntVar(&cfg.SpreadFaucets, "spread-faucets", 0, "faucets of the spread scenario (default 100; --short 10)")
	fs.Int64Var(&cfg.DryPayouts, "dry-payouts", 0, "payouts a run-dry faucet is funded for (default 5000; --short 30)")
	fs.IntVar(&cfg.Rounds, "rounds", 0, "measure the ceiling and the scenarios this many times in turn, and each growth step this many times, and sum them up as medians (default 1)")
	fs.BoolVar(&cfg.Growth, "growth", false, "also run the growth run: hot sends and /payouts reads with payouts already stored")
	growthSizes := fs.String("growth-sizes", "", "payouts stored before each growth step (default 0,1M,10M; --short 0,2000)")
	webhookBacklog := fs.String("webhook-backlog", "", "deliveries in the webhooks scenario's backlog (default 100k; --short 2000)")
	batchMax := fs.String("batch-max", "", "passed to drip serve as --batch-max when given")
	batchWait := fs.String("batch-wait", "", "passed to drip serve as --batch-wait when given")
	batchBusyWait := fs.String("batch-busy-wait", "", "passed to drip serve as --batch-busy-wait when given")
	batchWriters := fs.String("batch-writers", "", "passed to drip serve as --batch-writers when given")
	serverProfile := fs.String("server-cpu-profile", "", "passed to drip serve as --cpu-profile: the server's CPU profile over the whole bench")
	serverMemProfile := fs.String("server-mem-profile", "", "passed to drip serve as --mem-profile: the server's allocations over the whole bench")
	serverTrace := fs.String("server-trace", "", "passed to drip serve as --trace: the server's execution trace over the whole bench (large)")
	fs.BoolVar(&cfg.Short, "short", false, "CI mode: small figures, a few seconds in all; the gates are what counts")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	compare := fs.String("compare", "", "also bench the drip executable at this path (a build of main, say), in turn with this one round by round, and report this one's figures over its")
	if err := parseFlags(ctx, fs, args, stdout, noConfig); err != nil {
		return err
	}
	if cfg.DatabaseURL != "" && !strings.HasPrefix(cfg.DatabaseURL, "postgres://") && !strings.HasPrefix(cfg.DatabaseURL, "postgresql://") {
		return usagef("--database-url must be a postgres:// URL (leave it empty for SQLite)")
	}
	var err error
	if *scenarios != "" {
		cfg.Scenarios = *splitList(*scenarios)
		if len(cfg.Scenarios) == 0 {
			return usagef("--scenarios: name at least one")
		}
		for _, name := range cfg.Scenarios {
			if !slices.Contains(bench.Scenarios, name) {
				return usagef("--scenarios: no scenario %q (known: %s)", name, strings.Join(bench.Scenarios, ", "))
			}
		}
	}
	if cfg.Rounds < 0 || cfg.Rounds > 100 {
		return usagef("--rounds: %d is not 1-100", cfg.Rounds)
	}
	if cfg.Concurrency, err = parseCounts[int]("concurrency", *concurrency); err != nil {
		return err
	}
	if *rates == "none" {
		cfg.RatePercents = []int{}
	} else if cfg.RatePercents, err = parseCounts[int]("rates", *rates); err != nil {
		return err
	}
	if cfg.GrowthSizes, err = parseCounts[int64]("growth-sizes", *growthSizes); err != nil {
		return err
	}
	switch backlog, err := parseCounts[int]("webhook-backlog", *webhookBacklog); {
	case err != nil:
		return err
	case len(backlog) > 1 || len(backlog) == 1 && backlog[0] < 1:
		return usagef("--webhook-backlog: one positive count")
	case len(backlog) == 1:
		cfg.WebhookBacklog = backlog[0]
	}
	// The flags passed on to drip serve, as given.
	for _, pass := range []struct {
		serveFlag string
		value     *string
	}{{"--batch-max", batchMax}, {"--batch-wait", batchWait}, {"--batch-busy-wait", batchBusyWait}, {"--batch-writers", batchWriters}, {"--cpu-profile", serverProfile},
		{"--mem-profile", serverMemProfile}, {"--trace", serverTrace}} {
		if *pass.value != "" {
			cfg.ServeArgs = append(cfg.ServeArgs, pass.serveFlag, *pass.value)
		}
	}
	if cfg.Executable, err = os.Executable(); err != nil {
		return err
	}
	if *compare != "" {
		return benchCompare(ctx, fs, cfg.Executable, *compare, max(cfg.Rounds, 1), *asJSON, stdout, stderr)
	}
	cfg.OpenStore = func(ctx context.Context, dataDir, databaseURL string) (store.Store, error) {
		return openStore(ctx, dbFlags{dataDir: dataDir, databaseURL: databaseURL})
	}
	cfg.Log = stderr

	report, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return writeBenchOutcome(stdout, *asJSON, report, report.OK)
}

// writeBenchOutcome prints a bench's report or a comparison, as JSON or a
// table, and fails the command if a gate failed.
func writeBenchOutcome(stdout io.Writer, asJSON bool, out interface {
	WriteJSON(io.Writer) error
	WriteTable(io.Writer) error
}, ok bool) error {
	write := out.WriteTable
	if asJSON {
		write = out.WriteJSON
	}
	if err := write(stdout); err != nil {
		return err
	}
	if !ok {
		return errors.New("bench: a correctness gate failed (see FAILED above)")
	}
	return nil
}

// compareRefuses are the bench flags that name one place for the whole
// bench, which both sides of a comparison would then share: the data
// directory (the second side would find the first's database) and the
// server's records (the second would overwrite the first's). --keep is
// not one: each side keeps its own temporary directory or schema.
var compareRefuses = []string{"data-dir", "server-cpu-profile", "server-mem-profile", "server-trace"}

// benchCompare runs drip bench --compare: this executable's bench and
// base's in turn, rounds times (bench.Compare), each with the flags given
// here but --compare, --rounds and --json.
func benchCompare(ctx context.Context, fs *flag.FlagSet, this, base string, rounds int, asJSON bool, stdout, stderr io.Writer) error {
	var args []string
	var refused error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case slices.Contains(compareRefuses, f.Name):
			refused = usagef("--compare: --%s names one place for both sides; leave it out", f.Name)
		case f.Name != "compare" && f.Name != "rounds" && f.Name != "json":
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	if refused != nil {
		return refused
	}
	path, err := exec.LookPath(base)
	if err != nil {
		return usagef("--compare: %v", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != envName("compare") && name != envName("rounds") && name != envName("json") {
			env = append(env, kv)
		}
	}
	c, err := bench.Compare(ctx, bench.CompareConfig{This: this, Base: path, Args: args, Env: env, Rounds: rounds, Log: stderr})
	if err != nil {
		return err
	}
	return writeBenchOutcome(stdout, asJSON, c, c.OK)
}

// parseCounts reads a comma-separated list of non-negative integers, which
// may end in k or M (thousands, millions); "" is nil (the default).
func parseCounts[T int | int64](name, s string) ([]T, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []T
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		mult := int64(1)
		switch {
		case strings.HasSuffix(f, "k"):
			f, mult = strings.TrimSuffix(f, "k"), 1_000
		case strings.HasSuffix(f, "M"):
			f, mult = strings.TrimSuffix(f, "M"), 1_000_000
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return nil, usagef("--%s: %q is not a non-negative integer", name, f)
		}
		out = append(out, T(n*mult))
	}
	return out, nil
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

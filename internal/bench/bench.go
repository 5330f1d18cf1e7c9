// Package bench is drip bench (issue 5): it runs a real drip serve as a
// child process, drives v1 and v2 requests at it over keep-alive HTTP in
// closed and open loops, and reports for every run the throughput, the
// latency, the replies by status, the server's memory and CPU, the ratio to
// the no-op ceiling of the same server, and correctness gates checked
// against the database afterwards. cmd/drip holds only its flags.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
)

// Config is one bench invocation. Zero values take the defaults of the mode
// (Short or not); see Defaults.
type Config struct {
	// Executable is the drip binary whose serve and admin reconcile the bench
	// runs, so what is measured is what ships.
	Executable string
	// OpenStore opens and migrates the database that serve's --data-dir or
	// --database-url would name. cmd/drip supplies it: it alone picks engines.
	OpenStore func(ctx context.Context, dataDir, databaseURL string) (store.Store, error)
	// DataDir is the SQLite directory; "" means a new temporary one.
	DataDir string
	// DatabaseURL selects PostgreSQL; the bench works in a new schema of it.
	DatabaseURL string
	// Keep keeps the temporary directory or schema for inspection.
	Keep bool

	Scenarios     []string      // default: every scenario
	Concurrency   []int         // closed-loop concurrencies
	RatePercents  []int         // open-loop rates, in percent of the scenario's closed-loop peak
	Warmup        time.Duration // before each measured run
	Duration      time.Duration // measured, per run
	Recipients    int           // users the faucets pay round-robin
	SpreadFaucets int           // faucets of the spread scenario
	DryPayouts    int64         // payouts a run-dry faucet is funded for
	Growth        bool          // run the growth run
	GrowthSizes   []int64       // payouts stored before each growth step
	// WebhookBacklog is how many deliveries the webhooks scenario's
	// backlog holds.
	WebhookBacklog int
	// Rounds is how many times the ceiling and the scenarios' runs are
	// measured, in turn: each round the ceiling, then every scenario, each
	// run's ratio taken to its own round's ceiling. The VM's speed drifts
	// over minutes; figures of several rounds, summed up as medians
	// (Report.Summary), say what one round cannot. Default 1. The batch
	// and webhooks scenarios, which drive their own runs (the webhooks
	// scenario restarts drip serve), run once, in the last round; the
	// growth run, after the last round, measures each of its steps this
	// many times.
	Rounds int
	// ServeArgs are passed to drip serve as given (e.g. --batch-max 64).
	ServeArgs []string
	// Short is the CI mode: small figures, a few seconds in all.
	Short bool

	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Defaults returns the figures of a full run, or of the short CI mode.
func Defaults(short bool) Config {
	if short {
		return Config{
			Concurrency: []int{1, 8}, RatePercents: []int{50},
			Warmup: 50 * time.Millisecond, Duration: 250 * time.Millisecond,
			Recipients: 100, SpreadFaucets: 10, DryPayouts: 30, GrowthSizes: []int64{0, 2000}, WebhookBacklog: 2000,
		}
	}
	return Config{
		Concurrency: []int{1, 16, 64}, RatePercents: []int{50, 80},
		Warmup: 2 * time.Second, Duration: 10 * time.Second,
		Recipients: 10000, SpreadFaucets: 100, DryPayouts: 5000, GrowthSizes: []int64{0, 1_000_000, 10_000_000},
		WebhookBacklog: 100_000,
	}
}

func (c Config) withDefaults() Config {
	d := Defaults(c.Short)
	if len(c.Scenarios) == 0 {
		c.Scenarios = Scenarios
	}
	if len(c.Concurrency) == 0 {
		c.Concurrency = d.Concurrency
	}
	if c.RatePercents == nil {
		c.RatePercents = d.RatePercents
	}
	if c.Warmup == 0 {
		c.Warmup = d.Warmup
	}
	if c.Duration == 0 {
		c.Duration = d.Duration
	}
	if c.Recipients == 0 {
		c.Recipients = d.Recipients
	}
	if c.SpreadFaucets == 0 {
		c.SpreadFaucets = d.SpreadFaucets
	}
	if c.DryPayouts == 0 {
		c.DryPayouts = d.DryPayouts
	}
	if len(c.GrowthSizes) == 0 {
		c.GrowthSizes = d.GrowthSizes
	}
	if c.WebhookBacklog == 0 {
		c.WebhookBacklog = d.WebhookBacklog
	}
	if c.Rounds == 0 {
		c.Rounds = 1
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c
}

func (c Config) validate() error {
	var errs []error
	if c.Executable == "" || c.OpenStore == nil {
		errs = append(errs, errors.New("bench: Executable and OpenStore are required"))
	}
	for _, s := range c.Scenarios {
		if !slices.Contains(Scenarios, s) {
			errs = append(errs, fmt.Errorf("unknown scenario %q (known: %s)", s, strings.Join(Scenarios, ", ")))
		}
	}
	for _, n := range c.Concurrency {
		if n < 1 || n > 4096 {
			errs = append(errs, fmt.Errorf("concurrency %d: must be 1-4096", n))
		}
	}
	for _, p := range c.RatePercents {
		if p < 1 || p > 1000 {
			errs = append(errs, fmt.Errorf("rate %d%%: must be 1-1000", p))
		}
	}
	for _, n := range c.GrowthSizes {
		if n < 0 {
			errs = append(errs, fmt.Errorf("growth size %d: must not be negative", n))
		}
	}
	if c.Warmup < 0 || c.Duration <= 0 {
		errs = append(errs, errors.New("warm-up must not be negative and duration must be positive"))
	}
	if c.Rounds < 1 || c.Rounds > 100 {
		errs = append(errs, fmt.Errorf("rounds %d: must be 1-100", c.Rounds))
	}
	if c.Recipients < 1 || c.SpreadFaucets < 1 || c.DryPayouts < 1 || c.WebhookBacklog < 1 {
		errs = append(errs, errors.New("recipients, spread faucets, dry payouts and the webhook backlog must be positive"))
	}
	return errors.Join(errs...)
}

// bench is one invocation under way.
type bench struct {
	cfg    Config
	db     *database
	app    *app.App
	srv    *server
	client *client
	fix    *fixtures
	report *Report
	// serveFlags are what the scenarios need of drip serve.
	serveFlags []string
	ceiling    map[int]float64 // replies/s of the no-op ceiling by concurrency, this round's
	round      int             // the round under way, from 1
	// recipientBalances caches the recipients' balances after the last run,
	// the "before" of the next one; nil when unknown.
	recipientBalances []int64
}

// Run runs the bench. It returns an error when the bench itself could not
// run; a correctness gate that fails is in the report (Report.OK false).
func Run(ctx context.Context, cfg Config) (rep *Report, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, ceiling: map[int]float64{}}
	if b.db, err = openDatabase(ctx, cfg); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, b.db.close(cfg.Keep, cfg.Log)) }()
	st, err := cfg.OpenStore(ctx, b.db.dataDir, b.db.url)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// The bench's own app serves nothing: it sets up, checks, and saves
	// webhook endpoints whose receiver is the bench's, on loopback.
	if b.app, err = app.New(ctx, st, app.Options{Webhooks: safehttp.Options{AllowInsecure: true}}); err != nil {
		return nil, err
	}
	b.report = newReport(cfg, st.Engine())
	var scenarios []*scenario
	for _, name := range cfg.Scenarios {
		sc := newScenario(name)
		scenarios = append(scenarios, sc)
		for _, f := range sc.serveArgs {
			if !slices.Contains(b.serveFlags, f) {
				b.serveFlags = append(b.serveFlags, f)
			}
		}
	}
	defer func() {
		for _, sc := range scenarios {
			if sc.close != nil {
				sc.close()
			}
		}
	}()

	b.logf("setting up: %d recipients, faucets for %s", cfg.Recipients, strings.Join(cfg.Scenarios, ", "))
	start := time.Now()
	if b.fix, err = newFixtures(ctx, b.app, cfg.Recipients); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	for _, sc := range scenarios {
		if err := sc.setup(ctx, b); err != nil {
			return nil, fmt.Errorf("setup %s: %w", sc.name, err)
		}
	}
	var growth *faucetFix
	if cfg.Growth {
		if growth, err = b.fix.faucet(ctx, "growth", funding); err != nil {
			return nil, fmt.Errorf("setup growth: %w", err)
		}
	}
	b.logf("set up in %s", time.Since(start).Round(time.Millisecond))

	if b.srv, err = startServer(ctx, cfg.Executable, b.serveArgs(), cfg.Log); err != nil {
		return nil, err
	}
	defer func() {
		if b.srv != nil {
			_ = b.srv.stop()
		}
	}()
	b.client = newClient(b.srv.base, b.maxInFlight())
	defer func() { b.client.close() }() // the webhooks scenario starts a new server, and client

	for round := 1; round <= cfg.Rounds; round++ {
		b.round = round
		if err := b.runCeiling(ctx); err != nil {
			return nil, err
		}
		for _, sc := range scenarios {
			if sc.run != nil && round < cfg.Rounds {
				continue // batch and webhooks: once, in the last round (the webhooks scenario restarts drip serve)
			}
			if err := b.runScenario(ctx, sc); err != nil {
				return nil, fmt.Errorf("%s: %w", sc.name, err)
			}
		}
	}
	if cfg.Growth {
		if err := b.runGrowth(ctx, growth); err != nil {
			return nil, fmt.Errorf("growth: %w", err)
		}
	}

	stopErr := b.srv.stop()
	b.srv = nil
	b.report.addGate(gateFrom("drip serve stopped cleanly on SIGTERM", stopErr == nil, errText(stopErr)))
	b.report.addGate(b.reconcile(context.WithoutCancel(ctx)))
	b.report.finish()
	return b.report, ctx.Err()
}

// serveArgs are the flags of the drip serve under test.
func (b *bench) serveArgs() []string {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--bench-noop",
		// info, not warn: "drip serving", which tells the address, is an info
		// line, read as JSON; without the access log (a line per request,
		// at info) serve logs nothing per request, which the figures and
		// the pipe to the bench could not afford.
		"--log-level", "info", "--log-format", "json", "--access-log=false",
		// The request rate per key (D40) would cap every figure at 1/s; the
		// over-limit scenario reaches the owner's send limit instead. Every
		// client is this one IP, whose own limit (D29) is off.
		"--rate-per-minute", "1000000000", "--rate-burst", "1000000000", "--ip-rate-per-minute", "0"}
	args = append(args, b.db.args...)
	args = append(args, b.serveFlags...)
	return append(args, b.cfg.ServeArgs...)
}

// maxInFlight is the most requests the bench ever has in flight: the open
// loop gets twice the largest closed-loop concurrency, so a server that
// falls behind delays requests past their schedule rather than the
// schedule itself.
func (b *bench) maxInFlight() int {
	return 2 * max(8, slices.Max(b.cfg.Concurrency))
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.cfg.Log, "bench: "+format+"\n", args...)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

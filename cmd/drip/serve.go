package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/metrics"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/safehttp"
	httpserver "github.com/dripfaucet/drip/internal/server"
	"github.com/dripfaucet/drip/internal/store/postgres"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drip serve", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve HTTP on")
	baseURL := fs.String("base-url", "", "public URL of the service (default http://<listen address>)")
	demo := fs.Bool("demo", false, "create (once) a funded demo faucet and recipients, and print a working curl line")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logFormat := fs.String("log-format", "json", "json (one object a line) or text (key=value)")
	accessLog := fs.Bool("access-log", true, "log one line per request at info level (the probes /healthz and /readyz at debug)")
	ratePerMinute := fs.Float64("rate-per-minute", ratelimit.Default.PerMinute, "request rate per key (D40)")
	rateBurst := fs.Int("rate-burst", ratelimit.Default.Burst, "request burst per key (D40)")
	ipRate := fs.Float64("ip-rate-per-minute", ratelimit.DefaultCaller.PerMinute, "request rate per caller IP, authenticated or not (D29); a refused key costs 11; 0 turns the limit off")
	defaultCoin := fs.String("default-currency", "BTC", "the coin of a v1 getbalance or checkaddress, and of a v2 balance or check-address of a faucet that selected none, that names no currency (D28)")
	ipBurst := fs.Int("ip-rate-burst", ratelimit.DefaultCaller.Burst, "request burst per caller IP (D29)")
	trustedProxies := fs.String("trusted-proxies", "", "load balancers (addresses or CIDRs, comma-separated) whose X-Forwarded-For tells the caller's IP")
	batchMax := fs.Int("batch-max", 0, "most payouts committed in one transaction (group commit, D5); 0: engine default")
	batchWait := fs.Duration("batch-wait", 0, "how long every batch waits for more payouts before committing; 0: take what is queued")
	batchBusyWait := fs.Duration(busyWaitFlag, 0, "how long a batch waits for more payouts when they come fast (D5); unset: the engine's, 500µs on SQLite, none on PostgreSQL; 0: never")
	batchWriters := fs.Int("batch-writers", 0, "transactions committing payouts at once, each for a shard of faucets; 0: engine default")
	// Only drip bench starts a server with the no-op ceiling endpoint:
	// the flag is hidden from the help and from DRIP_ variables.
	benchNoop := new(bool)
	fs.Var(hiddenFlag{benchNoop}, "bench-noop", "serve POST /bench/noop, the no-op ceiling of drip bench (not for production)")
	var prof profiles
	fs.StringVar(&prof.cpu, "cpu-profile", "", "write a CPU profile of the whole run to this file (for drip bench)")
	fs.StringVar(&prof.mem, "mem-profile", "", "write the allocations of the whole run, sampled, to this file at exit (for drip bench)")
	fs.StringVar(&prof.trace, "trace", "", "write the runtime's execution trace of the whole run to this file (for drip bench; megabytes a second under load)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish at shutdown")
	redisURL := fs.String("redis-url", "", "share request-rate limits (D40) between nodes through this Redis (redis://host:port/db)")
	smtpURL := fs.String("smtp-url", "", "send low-balance emails (D43) through this server: smtp[s]://[user:pass@]host[:port]?from=drip@example.com; without it they are logged")
	redisPrefix := fs.String("redis-prefix", "drip:rate:", "namespace of this deployment's keys in Redis, for deployments sharing one Redis")
	pricesFile := fs.String("prices", "", "USD prices per coin from this JSON file ({\"BTC\": \"65000\"}) instead of the built-in table (D60)")
	priceFeedURL := fs.String("price-feed-url", "", "poll USD prices from this CoinGecko simple-price URL (D60)")
	priceMaxAge := fs.Duration("price-max-age", 10*time.Minute, "oldest feed price a capped send may use (D36, D60)")
	pricePoll := fs.Duration("price-poll", time.Minute, "how often the price feed is polled")
	mcpListen := fs.String("mcp-listen", "", "also serve the MCP tool server for AI assistants on this address, at "+mcpserver.Path+" (it is always at "+mcpserver.Path+" on --listen)")
	metricsListen := fs.String("metrics-listen", "", "serve the Prometheus metrics at "+metrics.Path+" on this address only (without it they are at "+metrics.Path+" on --listen)")
	mcpOrigins := fs.String("mcp-allowed-origins", "", "browser origins (comma-separated, such as https://app.example.com) the tool server admits besides the service's own")
	idemRetention := fs.Duration("idempotency-retention", payout.MinIdempotencyRetention, "how long a paid send's idempotency key is kept (D35; at least 168h)")
	requestTimeout := fs.Duration("request-timeout", httpserver.DefaultRequestTimeout, "every request's deadline: database waits and payouts end before it, and the answer comes by it (D6; at least 3s)")
	dbConnectTimeout := fs.Duration("db-connect-timeout", 2*time.Second, "how long connecting to PostgreSQL may take")
	webhookInsecure := fs.Bool("webhook-allow-insecure", false, "DEVELOPMENT ONLY: admit http and loopback webhook URLs (D53), to try a receiver on this machine; logged loudly")
	// Only drip's own tests shorten the webhook worker's lease, so that the
	// deliveries a killed server had claimed come back in seconds rather
	// than after webhook.DefaultLease: hidden like --bench-noop.
	webhookLease := new(time.Duration)
	fs.Var(hiddenDuration{webhookLease}, "webhook-lease", "how long a webhook worker's claim holds its deliveries (tests only; 0: webhook.DefaultLease)")
	if err := parseFlags(ctx, fs, args, stdout, withConfig); err != nil {
		return err
	}
	if *ratePerMinute <= 0 || *rateBurst < 1 {
		return usagef("--rate-per-minute and --rate-burst must be positive")
	}
	if *ipRate < 0 || *ipBurst < 1 {
		return usagef("--ip-rate-per-minute must be 0 (off) or positive, --ip-rate-burst positive")
	}
	proxies, err := faucet.ParseIPList(*trustedProxies)
	if err != nil {
		return usagef("--trusted-proxies: %s", message(err))
	}
	origins, err := parseOrigins(*mcpOrigins)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	stopProfiles, err := prof.start()
	if err != nil {
		return err
	}
	defer func() {
		if err := stopProfiles(); err != nil {
			log.Error("writing the profiles", "err", err)
		}
	}()
	if *batchMax < 0 || *batchWait < 0 || *batchBusyWait < 0 || *batchWriters < 0 {
		return usagef("--batch-max, --batch-wait, --batch-busy-wait and --batch-writers must not be negative")
	}
	if *requestTimeout < minRequestTimeout || *dbConnectTimeout <= 0 {
		return usagef("--request-timeout must be at least %s and --db-connect-timeout positive", minRequestTimeout)
	}
	if limit := ledger.MaxBatchWait(*requestTimeout); *batchWait >= limit || *batchBusyWait >= limit {
		return usagef("--batch-wait and --batch-busy-wait must be under %s with --request-timeout %s: a batch's wait comes out of its payments' time to commit", limit, *requestTimeout)
	}
	// The server's own waits, within each request's deadline (D6): a
	// statement the request gave up on does not run on, and a transaction
	// whose COMMIT is stuck in the network ends within the ledger's
	// settle margin, so it cannot commit after its caller was answered.
	d.log, d.node = log, true
	d.timeouts = &postgres.Timeouts{Connect: *dbConnectTimeout, Statement: *requestTimeout, IdleInTransaction: ledger.SettleMargin / 2}
	if *webhookLease < 0 {
		return usagef("--webhook-lease must not be negative")
	}
	if *idemRetention < payout.MinIdempotencyRetention {
		return usagef("--idempotency-retention must be at least %s", payout.MinIdempotencyRetention)
	}
	rate := ratelimit.Config{PerMinute: *ratePerMinute, Burst: *rateBurst}
	ipRateCfg := ratelimit.Config{PerMinute: *ipRate, Burst: *ipBurst}
	opts := app.Options{
		Log: log, Rate: rate, CallerRate: ipRateCfg, NoCallerLimit: *ipRate == 0, IdempotencyRetention: *idemRetention, DefaultCoin: *defaultCoin,
		Batch:    ledger.BatchConfig{MaxSize: *batchMax, MaxWait: *batchWait, BusyWait: busyWait(fs, *batchBusyWait), Writers: *batchWriters},
		Webhooks: safehttp.Options{AllowInsecure: *webhookInsecure}, WebhookLease: *webhookLease,
	}
	if *smtpURL != "" {
		sender, err := mail.NewSMTP(*smtpURL) // its errors never contain the password
		if err != nil {
			return usagef("--smtp-url: %v", err)
		}
		opts.Mail = sender
		log.Info("low-balance emails via SMTP", "smtp_url", sender.Redacted())
	}
	prices, feed, err := priceSource(*pricesFile, *priceFeedURL, *priceMaxAge, *pricePoll, log)
	if err != nil {
		return err
	}
	opts.Prices = prices
	var accountLimiters app.AccountLimiters // in memory, per node, without Redis
	if *redisURL != "" {
		ratelimit.RouteRedisLogs(log) // process-wide: go-redis has one logger
		limiter, err := ratelimit.NewRedisPrefixed(*redisURL, *redisPrefix, rate, log)
		if err != nil {
			return fmt.Errorf("--redis-url: %w", err)
		}
		defer limiter.Close()
		opts.Limiter = limiter
		if *ipRate > 0 { // the caller-IP buckets are shared too (D29), beside the keys'
			callers, err := ratelimit.NewRedisPrefixed(*redisURL, *redisPrefix, ipRateCfg, log) // its buckets are named ip:...
			if err != nil {
				return fmt.Errorf("--redis-url: %w", err)
			}
			defer callers.Close()
			opts.CallerLimiter = callers
		}
		// The console's login throttles are shared too, so that guesses
		// spread over the nodes count as one (their buckets are named
		// login-ip:..., login-user:..., code-user:...).
		for _, l := range []struct {
			cfg ratelimit.Config
			to  *ratelimit.Limiter
		}{{account.DefaultLoginPerAccount, &accountLimiters.Account}, {account.DefaultLoginPerIP, &accountLimiters.IP}} {
			r, err := ratelimit.NewRedisPrefixed(*redisURL, *redisPrefix, l.cfg, log)
			if err != nil {
				return fmt.Errorf("--redis-url: %w", err)
			}
			defer r.Close()
			*l.to = r
		}
	}
	svc, err := openApp(ctx, d, opts)
	if err != nil {
		return err
	}
	defer svc.Store.Close()
	defer svc.Close() // runs before the store closes: writers finish first
	// Background work stops, and is waited for, before the ledger and the
	// store close (deferred calls run last-first), so a worker never
	// records an email it sent into a closed store.
	workers, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var running sync.WaitGroup
	defer running.Wait()
	defer stopWorkers()
	running.Go(func() { svc.Run(workers) })
	if feed != nil {
		running.Go(func() { feed.Run(workers) })
	}
	hopts := app.HandlerOptions{TrustedProxies: proxies, BenchNoop: *benchNoop, MCPAllowedOrigins: origins, RequestTimeout: *requestTimeout,
		NoAccessLog: !*accessLog}
	hopts.MetricsElsewhere = *metricsListen != ""

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	var mcpLn net.Listener
	if *mcpListen != "" {
		if mcpLn, err = net.Listen("tcp", *mcpListen); err != nil {
			ln.Close()
			return fmt.Errorf("--mcp-listen: %w", err)
		}
	}
	base := *baseURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	if err := svc.OpenAccounts(ctx, base, accountLimiters); err != nil {
		ln.Close()
		if mcpLn != nil {
			mcpLn.Close()
		}
		return fmt.Errorf("--base-url: %w", err)
	}
	handler := svc.Handler(hopts)
	if *demo {
		if err := runDemo(ctx, svc, base, d.dataDir, stdout); err != nil {
			ln.Close()
			if mcpLn != nil {
				mcpLn.Close()
			}
			return fmt.Errorf("demo: %w", err)
		}
	}
	var metricsLn net.Listener
	if *metricsListen != "" {
		if metricsLn, err = net.Listen("tcp", *metricsListen); err != nil {
			ln.Close()
			if mcpLn != nil {
				mcpLn.Close()
			}
			return fmt.Errorf("--metrics-listen: %w", err)
		}
	}
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      httpserver.WriteTimeout(*requestTimeout), // after every request's deadline
			IdleTimeout:       120 * time.Second,
			MaxHeaderBytes:    64 << 10,
		}
	}
	// Every server and its listener are set before any serves: the
	// goroutines read the lists, which nothing changes after.
	servers, listeners := []*http.Server{newServer(handler)}, []net.Listener{ln}
	log.Info("drip serving", "addr", ln.Addr().String(), "engine", svc.Store.Engine(), "base_url", base, "pid", os.Getpid())
	if mcpLn != nil {
		servers, listeners = append(servers, newServer(svc.MCPHandler(hopts))), append(listeners, mcpLn)
		log.Info("tool server serving", "addr", mcpLn.Addr().String(), "path", mcpserver.Path)
	}
	if metricsLn != nil {
		servers, listeners = append(servers, newServer(svc.MetricsHandler())), append(listeners, metricsLn)
		log.Info("metrics serving", "addr", metricsLn.Addr().String(), "path", metrics.Path)
	}
	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(listeners[i]) }()
	}

	var failed error
	select {
	case failed = <-served: // a listener failed: stop the others too
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish; a payout's transaction
	// either commits before its reply or never happened. Every server is
	// shut down, at once and each whatever became of the others, and waited
	// for before the deferred calls close the ledger and the store: none
	// may still serve then.
	log.Info("drip shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *shutdownTimeout)
	defer cancel()
	shutdown := make([]error, len(servers))
	var stopping sync.WaitGroup
	for i, srv := range servers {
		stopping.Go(func() {
			if err := srv.Shutdown(shutdownCtx); err != nil {
				shutdown[i] = fmt.Errorf("shutdown: %w", err)
			}
		})
	}
	stopping.Wait()
	errs := append([]error{failed}, shutdown...)
	pending := len(servers)
	if failed != nil {
		pending-- // its error is failed
	}
	for range pending { // Serve returns at once when Shutdown begins
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	log.Info("drip stopped")
	return nil
}

// minRequestTimeout leaves a payout time to commit after the ledger's
// settle margin is kept (ledger.SettleMargin).
const minRequestTimeout = ledger.SettleMargin + time.Second

// parseOrigins reads --mcp-allowed-origins: comma-separated http(s)
// origins, scheme and host only.
func parseOrigins(s string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(s, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" {
			return nil, usagef("--mcp-allowed-origins: %q is not an origin such as https://app.example.com", o)
		}
		out = append(out, o)
	}
	return out, nil
}

// priceSource is where USD prices come from (D60): a polled feed, a file,
// or the built-in table. The feed, if any, must be run by the caller.
func priceSource(file, feedURL string, maxAge, poll time.Duration, log *slog.Logger) (price.Source, *price.Feed, error) {
	switch {
	case file != "" && feedURL != "":
		return nil, nil, usagef("give --prices or --price-feed-url, not both")
	case feedURL != "":
		if maxAge <= 0 || poll <= 0 {
			return nil, nil, usagef("--price-max-age and --price-poll must be positive")
		}
		feed := price.NewFeed(price.FeedConfig{URL: feedURL, Every: poll, MaxAge: maxAge, Log: log})
		return feed, feed, nil
	case file != "":
		table, err := price.LoadFile(file)
		if err != nil {
			return nil, nil, fmt.Errorf("--prices: %w", err)
		}
		return price.Static(table, "file", time.Now), nil, nil
	}
	return price.Static(price.Builtin(), "static", time.Now), nil, nil
}

// busyWaitFlag is serve's --batch-busy-wait, named once for busyWait.
const busyWaitFlag = "batch-busy-wait"

// busyWait is --batch-busy-wait, d, as BatchConfig.BusyWait: unset, the
// engine's default (zero); set to 0, no busy wait (ledger.NoWait).
func busyWait(fs *flag.FlagSet, d time.Duration) time.Duration {
	if d == 0 && given(fs, busyWaitFlag) {
		return ledger.NoWait
	}
	return d
}

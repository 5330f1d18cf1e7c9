// Package app builds drip's services and HTTP handler over a store. cmd/drip
// and the tests use it alike, so what the tests run is what serve runs.
package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/console"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/mcpserver"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/metrics"
	"github.com/dripfaucet/drip/internal/notify"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/requestlog"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/server"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
	"github.com/dripfaucet/drip/internal/web"
	"github.com/dripfaucet/drip/internal/webhook"
)

// Options adjust the application; zero values give the defaults.
type Options struct {
	Now     func() time.Time  // the clock; time.Now
	Rate    ratelimit.Config  // request rate per key; ratelimit.Default (D40)
	Limiter ratelimit.Limiter // overrides Rate, e.g. a shared limiter
	// CallerRate is the request rate of each caller IP, authenticated or
	// not (D29); ratelimit.DefaultCaller when zero. CallerLimiter overrides
	// it (a shared limiter); NoCallerLimit sets no such limit.
	CallerRate    ratelimit.Config
	CallerLimiter ratelimit.Limiter
	NoCallerLimit bool
	Log           *slog.Logger // discards when nil
	// DefaultCoin is the coin of a read that names none (D28); BTC when
	// empty.
	DefaultCoin string
	Batch       ledger.BatchConfig // group commit (D5); zero fields take the engine's defaults
	Prices      price.Source       // USD prices (D60); the built-in static table when nil
	Mail        mail.Sender        // owners' low-balance emails (D43); written to the log when nil
	// IdempotencyRetention is how long bound idempotency keys are kept
	// (D35); payout.MinIdempotencyRetention when shorter.
	IdempotencyRetention time.Duration
	// Webhooks are the URL rules of webhook endpoints, checked when saved
	// and when delivering (D53): production's when zero. AllowInsecure
	// (drip serve --webhook-allow-insecure) admits http and loopback for
	// local testing; tests set RootCAs and Resolver too.
	Webhooks safehttp.Options
	// WebhookLease is how long the webhook worker's claim holds its
	// deliveries (webhook.WorkerConfig.Lease); webhook.DefaultLease when
	// zero. Only drip's own tests shorten it (drip serve's hidden
	// --webhook-lease), so that the deliveries a killed node had claimed
	// come back within their test's time.
	WebhookLease time.Duration
}

// App is drip's services over one store.
type App struct {
	Store   store.Store
	Now     func() time.Time
	Users   *user.Registry
	Faucets *faucet.Service
	Keys    *key.Service
	Coins   *coin.Catalog
	Ledger  *ledger.Ledger
	Payouts *payout.Service
	Ops     *operation.Service // the operations v2, the tool server and the pages serve
	Listing *listing.Service
	Audit   *audit.Service
	Notify  *notify.Worker
	// Endpoints are the faucets' webhook endpoints and their deliveries
	// (D50-D54), for the console; Webhooks delivers them.
	Endpoints *webhook.Endpoints
	Webhooks  *webhook.Worker
	// Merchant is the hosted checkout (issue 13, spec 4.4); Callbacks
	// delivers its callbacks (D55).
	Merchant  *merchant.Service
	Callbacks *merchant.CallbackWorker
	Prices    price.Source
	Rate      ratelimit.Config
	Log       *slog.Logger
	Metrics   *metrics.Registry // this app's own (served at /metrics or by MetricsHandler)
	// Accounts is the accounts service of the web console; nil until
	// OpenAccounts, and then Handler mounts the console's pages.
	Accounts *account.Service

	mail    mail.Sender
	baseURL string
	gen     *gencache.Generation // the cache generation's reader (D63)

	idempotencyRetention time.Duration
	limiter              ratelimit.Limiter
}

// New builds the services over st (already migrated).
func New(ctx context.Context, st store.Store, opts Options) (*App, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rate == (ratelimit.Config{}) {
		opts.Rate = ratelimit.Default
	}
	if opts.Prices == nil {
		opts.Prices = price.Static(price.Builtin(), "static", opts.Now)
	}
	if opts.Limiter == nil {
		opts.Limiter = ratelimit.NewMemory(opts.Rate, opts.Now)
	}
	if opts.CallerRate == (ratelimit.Config{}) {
		opts.CallerRate = ratelimit.DefaultCaller
	}
	if opts.CallerLimiter == nil && !opts.NoCallerLimit {
		opts.CallerLimiter = ratelimit.NewMemory(opts.CallerRate, opts.Now)
	}
	if opts.NoCallerLimit {
		opts.CallerLimiter = nil
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// A line logged while serving a request carries its id.
	opts.Log = requestlog.Logger(opts.Log)
	users, err := user.NewRegistry(ctx, st, opts.Now)
	if err != nil {
		return nil, err
	}
	// The services report to this app's registry; the store's
	// transactions too, when it can say (the last app over a store does).
	reg := metrics.New()
	opts.Batch.Observer = reg
	if o, ok := st.(store.Observable); ok {
		o.Observe(reg)
	}
	// A send's key, faucet and recipient come from memory while the cache
	// generation, read after the request arrived, says none changed (D63);
	// the ledger's batches read it too, for the payments of sends that took
	// the latest known (gencache.Optimistic), and tell what they read.
	gen := gencache.NewGeneration(st.CacheGeneration)
	coins := coin.NewCatalog(st, opts.Now)
	faucets := faucet.NewService(st, coins, opts.Now)
	batch := opts.Batch
	batch.Generation = gen.Observe
	// The batches' payouts go straight into the faucets' latest payouts
	// kept in memory (D66).
	batch.Paid = faucets.Paid
	a := &App{
		Metrics: reg, Store: st, Now: opts.Now, Users: users, Log: opts.Log, Prices: opts.Prices, Rate: opts.Rate,
		idempotencyRetention: opts.IdempotencyRetention, limiter: opts.Limiter, mail: opts.Mail, gen: gen,
		Keys:    key.NewService(st, opts.Now),
		Coins:   coins,
		Ledger:  ledger.NewBatched(st, opts.Now, batch),
		Faucets: faucets,
	}
	a.Faucets.UseCache(a.gen)
	a.Keys.UseCache(a.gen)
	users.UseCache(a.gen)
	a.Listing = listing.NewService(st, a.Coins, opts.Now)
	a.Audit = audit.NewService(st, opts.Now)
	if a.mail == nil {
		a.mail = mail.NewLog(opts.Log)
	}
	a.Notify = notify.NewWorker(notify.Config{Store: st, Mail: opts.Mail, Now: opts.Now, Log: opts.Log})
	reg.Outbox("notifications", a.Notify.Backlog, opts.Now)
	if opts.Webhooks.AllowInsecure {
		opts.Log.Warn("WEBHOOK URLS ARE NOT CHECKED AS IN PRODUCTION: http and loopback addresses are admitted (--webhook-allow-insecure); for local testing only (D53)")
	}
	if a.Endpoints, err = webhook.NewEndpoints(ctx, st, webhook.EndpointOptions{HTTP: opts.Webhooks, Now: opts.Now}); err != nil {
		return nil, err
	}
	a.Webhooks = webhook.NewWorker(webhook.WorkerConfig{Store: st, Endpoints: a.Endpoints, Client: safehttp.NewClient(opts.Webhooks),
		Now: opts.Now, Log: opts.Log, Lease: opts.WebhookLease})
	reg.Outbox("webhooks", a.Webhooks.Backlog, opts.Now)
	if a.Merchant, err = merchant.New(ctx, merchant.Deps{Store: st, Users: users, Coins: a.Coins, Prices: opts.Prices,
		HTTP: opts.Webhooks, Now: opts.Now}); err != nil {
		return nil, err
	}
	a.Callbacks = merchant.NewCallbackWorker(merchant.CallbackWorkerConfig{Store: st, Service: a.Merchant,
		Client: safehttp.NewClient(a.Merchant.ClientOptions()), Now: opts.Now, Log: opts.Log, Lease: opts.WebhookLease})
	reg.Outbox("callbacks", a.Callbacks.Backlog, opts.Now)
	a.Payouts = payout.NewService(payout.Deps{
		Store: st, Faucets: a.Faucets, Users: a.Users, Coins: a.Coins, Ledger: a.Ledger,
		Limiter: opts.Limiter, Callers: opts.CallerLimiter, Keys: a.Keys, Prices: opts.Prices,
		DefaultCoin: opts.DefaultCoin, Now: opts.Now, Observer: reg,
	})
	a.Ops = operation.New(operation.Deps{Payouts: a.Payouts, Faucets: a.Faucets, Listing: a.Listing, Audit: a.Audit, Events: webhook.NewFeed(st),
		Rate: a.Rate, Now: opts.Now})
	return a, nil
}

// AccountLimiters count the console's login and code attempts per
// account and per IP; a nil one is in memory, per node (pass Redis ones
// to share the counts across nodes, D40).
type AccountLimiters struct {
	Account, IP ratelimit.Limiter
}

// OpenAccounts builds the accounts service (D10, D15) of a service
// served at baseURL, where its emailed links point, through the app's
// mail sender (written to the log without one); Handler mounts the
// console's pages from then on.
func (a *App) OpenAccounts(ctx context.Context, baseURL string, limiters AccountLimiters) error {
	// The console checks the URL (the cookie's Secure depends on it).
	if _, err := console.New(console.Deps{Accounts: &account.Service{}, BaseURL: baseURL}); err != nil {
		return err
	}
	svc, err := account.New(ctx, account.Params{Store: a.Store, Users: a.Users, Mail: a.mail, Log: a.Log, Now: a.Now,
		Config: account.Config{BaseURL: baseURL}, AccountLimiter: limiters.Account, IPLimiter: limiters.IP})
	if err != nil {
		return err
	}
	a.Accounts, a.baseURL = svc, baseURL
	return nil
}

// Run runs the application's background work until ctx is done: the
// delivery of owners' emails (D43), of webhooks and merchant callbacks
// (D50), and the pruning of idempotency keys past their retention (D35),
// hourly. Every node may run it.
func (a *App) Run(ctx context.Context) {
	var notifying sync.WaitGroup
	defer notifying.Wait() // Run returns once every worker has
	notifying.Go(func() { a.Notify.Run(ctx) })
	notifying.Go(func() { a.Webhooks.Run(ctx) })
	notifying.Go(func() { a.Callbacks.Run(ctx) })
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if n, err := a.Payouts.PruneIdempotency(ctx, a.idempotencyRetention); err != nil && ctx.Err() == nil {
			a.Log.Warn("pruning idempotency keys failed", "err", err)
		} else if n > 0 {
			a.Log.Info("pruned idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close stops the application's workers after they finish what they hold
// (the ledger's writers answer every payment handed to them). The store
// stays open: whoever opened it closes it.
func (a *App) Close() {
	a.Ledger.Close()
	a.gen.Close()
}

// HandlerOptions adjust the HTTP interface.
type HandlerOptions struct {
	// TrustedProxies are the load balancers whose X-Forwarded-For is
	// believed when telling a caller's IP (server.ClientIP).
	TrustedProxies []netip.Prefix
	// BenchNoop mounts the no-op endpoint drip bench measures the ceiling with.
	BenchNoop bool
	// MCPAllowedOrigins are the browser origins the tool server admits
	// besides the service's own (mcpserver.Deps.AllowedOrigins).
	MCPAllowedOrigins []string
	// RequestTimeout is every request's deadline (server.Handlers).
	RequestTimeout time.Duration
	// MetricsElsewhere leaves /metrics out: MetricsHandler serves it on a
	// listener of its own (drip serve --metrics-listen).
	MetricsElsewhere bool
	// NoAccessLog turns the per-request log line off (server.Handlers).
	NoAccessLog bool
}

// Handler is the HTTP interface of the application.
func (a *App) Handler(opts HandlerOptions) http.Handler {
	clientIP := server.ClientIP(opts.TrustedProxies)
	v1 := apiv1.New(a.Payouts, a.Log, apiv1.Options{ClientIP: clientIP, Replied: a.Metrics.V1Replied})
	v2 := apiv2.New(apiv2.Deps{Ops: a.Ops, Payouts: a.Payouts, Log: a.Log, Now: a.Now, ClientIP: clientIP})
	dir := web.NewDirectory(a.Listing, a.Log)
	var pages http.Handler
	if a.Accounts != nil {
		c, err := console.New(console.Deps{Accounts: a.Accounts, Ops: a.Ops, Store: a.Store, Users: a.Users, Faucets: a.Faucets,
			Keys: a.Keys, Coins: a.Coins, Ledger: a.Ledger, Listing: a.Listing, Audit: a.Audit, Prices: a.Prices, Now: a.Now,
			Webhooks: a.Endpoints, Merchant: a.Merchant, Log: a.Log, BaseURL: a.baseURL, ClientIP: clientIP})
		if err != nil { // OpenAccounts built one already: it cannot fail here
			panic(err)
		}
		pages = c
	}
	return a.instrument(opts, v1, v2, server.New(server.Handlers{V1: v1, V2: v2, MCP: a.tools(opts, clientIP), Directory: dir, Console: pages, BenchNoop: opts.BenchNoop,
		RequestTimeout: opts.RequestTimeout, Ready: a.readiness(), ClientIP: clientIP, NoAccessLog: opts.NoAccessLog}, a.Log))
}

// MCPHandler is the tool server alone, for a listener of its own (drip
// serve --mcp-listen); Handler serves it too, at mcpserver.Path.
func (a *App) MCPHandler(opts HandlerOptions) http.Handler {
	clientIP := server.ClientIP(opts.TrustedProxies)
	return a.instrumentMCP(server.NewMCP(server.Handlers{MCP: a.tools(opts, clientIP), RequestTimeout: opts.RequestTimeout, Ready: a.readiness(),
		ClientIP: clientIP, NoAccessLog: opts.NoAccessLog}, a.Log))
}

// readiness is what /readyz checks (D58): the database, and the shared
// rate limiter's Redis when there is one (optional: without it limits
// fall back to per node).
func (a *App) readiness() []server.Check {
	checks := []server.Check{{Name: "database", Ping: a.Store.Ping}}
	if p, ok := a.limiter.(interface{ Ping(context.Context) error }); ok {
		checks = append(checks, server.Check{Name: "redis", Ping: p.Ping, Optional: true})
	}
	return checks
}

// tools is the tool server over the operations v2 serves.
func (a *App) tools(opts HandlerOptions, clientIP func(*http.Request) netip.Addr) *mcpserver.Handler {
	return mcpserver.New(mcpserver.Deps{Ops: a.Ops, Payouts: a.Payouts, Audit: a.Audit, Log: a.Log,
		ClientIP: clientIP, AllowedOrigins: opts.MCPAllowedOrigins})
}

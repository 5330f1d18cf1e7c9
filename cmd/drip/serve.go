package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("drip serve", flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve HTTP on")
	baseURL := fs.String("base-url", "", "public URL of the service (default http://<listen address>)")
	demo := fs.Bool("demo", false, "create (once) a funded demo faucet and recipients, and print a working curl line")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	ratePerMinute := fs.Float64("rate-per-minute", ratelimit.Default.PerMinute, "request rate per key (D40)")
	rateBurst := fs.Int("rate-burst", ratelimit.Default.Burst, "request burst per key (D40)")
	trustedProxies := fs.String("trusted-proxies", "", "load balancers (addresses or CIDRs, comma-separated) whose X-Forwarded-For tells the caller's IP")
	batchMax := fs.Int("batch-max", 0, "most payouts committed in one transaction (group commit, D5); 0: engine default")
	batchWait := fs.Duration("batch-wait", 0, "how long a batch waits for more payouts before committing; 0: take what is queued")
	batchWriters := fs.Int("batch-writers", 0, "transactions committing payouts at once, each for a shard of faucets; 0: engine default")
	benchNoop := fs.Bool("bench-noop", false, "serve POST /bench/noop, the no-op ceiling of drip bench (not for production)")
	cpuProfile := fs.String("cpu-profile", "", "write a CPU profile of the whole run to this file (for drip bench)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 30*time.Second, "how long in-flight requests may take to finish at shutdown")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *ratePerMinute <= 0 || *rateBurst < 1 {
		return usagef("--rate-per-minute and --rate-burst must be positive")
	}
	proxies, err := faucet.ParseIPList(*trustedProxies)
	if err != nil {
		return usagef("--trusted-proxies: %s", message(err))
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *batchMax < 0 || *batchWait < 0 || *batchWriters < 0 {
		return usagef("--batch-max, --batch-wait and --batch-writers must not be negative")
	}
	svc, err := openApp(ctx, d, app.Options{
		Log: log, Rate: ratelimit.Config{PerMinute: *ratePerMinute, Burst: *rateBurst},
		Batch: ledger.BatchConfig{MaxSize: *batchMax, MaxWait: *batchWait, Writers: *batchWriters},
	})
	if err != nil {
		return err
	}
	defer svc.Store.Close()
	defer svc.Close() // runs before the store closes: writers finish first
	handler := svc.Handler(app.HandlerOptions{TrustedProxies: proxies, BenchNoop: *benchNoop})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	base := *baseURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	if *demo {
		if err := runDemo(ctx, svc, base, stdout); err != nil {
			ln.Close()
			return fmt.Errorf("demo: %w", err)
		}
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	log.Info("drip serving", "addr", ln.Addr().String(), "engine", svc.Store.Engine(), "base_url", base, "pid", os.Getpid())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish; a payout's transaction
	// either commits before its reply or never happened.
	log.Info("drip shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), *shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("drip stopped")
	return nil
}

package bench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// runSpec says how one run drives the server.
type runSpec struct {
	scenario    string
	variant     string  // a part of the scenario: webhooks "off" or "on"
	mode        string  // "closed" or "open"
	concurrency int     // closed: workers; open: the most requests in flight
	ratePercent int     // open: percent of the closed-loop peak
	rate        float64 // open: requests per second
}

func (s runSpec) String() string {
	name := s.scenario
	if s.variant != "" {
		name += " " + s.variant
	}
	if s.mode == "open" {
		return fmt.Sprintf("%s open %d%% (%.0f/s)", name, s.ratePercent, s.rate)
	}
	return fmt.Sprintf("%s closed c=%d", name, s.concurrency)
}

// runCeiling measures the no-op endpoint at every concurrency: the most the
// same clients get from the same server when a request does no work.
func (b *bench) runCeiling(ctx context.Context) error {
	noop := request{op: opNoop, path: "/bench/noop", body: "api_key=" + fixedKey + sendFields + b.fix.recipients[0].to}
	sc := &scenario{name: "ceiling"}
	for _, c := range b.cfg.Concurrency {
		wl := &workload{next: func(uint64, bool) request { return noop }}
		run, err := b.run(ctx, sc, wl, runSpec{scenario: "ceiling", mode: "closed", concurrency: c})
		if err != nil {
			return err
		}
		b.ceiling[c] = run.RepliesPerS
		run.CeilingRatio = 1
		b.report.Ceiling = append(b.report.Ceiling, run)
	}
	return nil
}

// fixedKey stands in the no-op request's body for a key, so the ceiling's
// requests are as long as a send's.
const fixedKey = "0000000000000000000000000000000000000000000000000000000000000000"

// runScenario runs sc closed-loop at every concurrency, then open-loop at
// each rate, a percentage of the best closed-loop reply rate.
func (b *bench) runScenario(ctx context.Context, sc *scenario) error {
	if sc.run != nil {
		return sc.run(ctx, b)
	}
	var peak float64
	for _, c := range b.cfg.Concurrency {
		expect := int64(b.ceiling[c]*(b.cfg.Warmup+b.cfg.Duration).Seconds()*1.5) + 1
		run, err := b.runScenarioOnce(ctx, sc, expect, runSpec{scenario: sc.name, mode: "closed", concurrency: c})
		if err != nil {
			return err
		}
		peak = max(peak, run.RepliesPerS)
	}
	for _, p := range b.cfg.RatePercents {
		rate := peak * float64(p) / 100
		if rate < 1 {
			b.logf("%s: no closed-loop peak to take %d%% of; open loop skipped", sc.name, p)
			continue
		}
		expect := int64(rate*(b.cfg.Warmup+b.cfg.Duration).Seconds()) + 1
		spec := runSpec{scenario: sc.name, mode: "open", concurrency: b.maxInFlight(), ratePercent: p, rate: rate}
		if _, err := b.runScenarioOnce(ctx, sc, expect, spec); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) runScenarioOnce(ctx context.Context, sc *scenario, expect int64, spec runSpec) (*Result, error) {
	wl, err := sc.begin(ctx, b, expect)
	if err != nil {
		return nil, err
	}
	run, err := b.run(ctx, sc, wl, spec)
	if err != nil {
		return nil, err
	}
	run.CeilingRatio = b.ratio(run, spec)
	b.report.Runs = append(b.report.Runs, run)
	return run, nil
}

// ratio is the run's reply rate over the ceiling at its concurrency (for
// an open loop, the ceiling at the largest concurrency).
func (b *bench) ratio(run *Result, spec runSpec) float64 {
	c := spec.concurrency
	if spec.mode == "open" {
		c = slices.Max(b.cfg.Concurrency)
	}
	if b.ceiling[c] <= 0 {
		return 0
	}
	return run.RepliesPerS / b.ceiling[c]
}

// run drives one run of wl and checks its gates.
func (b *bench) run(ctx context.Context, sc *scenario, wl *workload, spec runSpec) (*Result, error) {
	if err := b.srv.alive(); err != nil {
		return nil, err
	}
	before, err := b.ledgerView(ctx, wl.faucets)
	if err != nil {
		return nil, err
	}
	errMark := b.srv.errorLines.Load()
	since := time.Now()
	rss := b.srv.sample(100 * time.Millisecond)
	var cpuStart usage // written by atMeasure, which the drivers wait for
	p := phases{warmup: b.cfg.Warmup, duration: b.cfg.Duration, atMeasure: func() { cpuStart, _ = b.srv.usage() }}
	var o *outcome
	if spec.mode == "open" {
		o = openLoop(ctx, b.client, wl.next, spec.rate, spec.concurrency, p)
	} else {
		o = closedLoop(ctx, b.client, wl.next, spec.concurrency, p)
	}
	cpuEnd, cpuErr := b.srv.usage()
	peak := rss.peak()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	run := summarize(o, spec)
	if b.cfg.Rounds > 1 {
		run.Round = b.round
	}
	run.RSSMaxMB = float64(peak) / 1e6
	if cpuErr == nil && cpuStart.cpu > 0 {
		run.CPUSeconds = (cpuEnd.cpu - cpuStart.cpu).Seconds()
		if run.Payouts > 0 {
			run.CPUPer1kPayouts = run.CPUSeconds * 1000 / float64(run.Payouts)
		}
	}
	run.Gates = b.gates(ctx, sc, wl, o, before, since, errMark)
	b.logf("%-34s %8.0f payouts/s %8.0f replies/s  p99 %7.2f ms  %s", spec, run.PayoutsPerS, run.RepliesPerS, run.Latency.P99, gateSummary(run.Gates))
	return run, nil
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is the outcome of a bench: one Result per line of the table.
type Report struct {
	Engine   string   `json:"engine"`
	Machine  Machine  `json:"machine"`
	Settings Settings `json:"settings"`
	// Ceiling holds the no-op runs, one per concurrency.
	Ceiling []*Result `json:"ceiling"`
	Runs    []*Result `json:"runs"`
	Growth  []*Result `json:"growth,omitempty"`
	// Summary is, in a bench of several rounds, each run's figures over
	// the rounds.
	Summary []Summary `json:"summary,omitempty"`
	// Drain is the webhooks scenario's backlog (issue 12).
	Drain *Drain `json:"webhook_drain,omitempty"`
	// Gates are the checks of the bench as a whole, after the last run.
	Gates []Gate `json:"gates"`
	// OK is true when no gate of any run failed.
	OK bool `json:"ok"`
}

// Machine describes where the bench ran.
type Machine struct {
	CPUs     int    `json:"cpus"`
	CPUModel string `json:"cpu_model,omitempty"`
	MemoryMB int64  `json:"memory_mb,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
}

// Settings are the figures the bench ran with.
type Settings struct {
	WarmupS        float64  `json:"warmup_s"`
	DurationS      float64  `json:"duration_s"`
	Concurrency    []int    `json:"concurrency"`
	RatePercents   []int    `json:"rate_percents"`
	Recipients     int      `json:"recipients"`
	SpreadFaucets  int      `json:"spread_faucets"`
	DryPayouts     int64    `json:"dry_payouts"`
	WebhookBacklog int      `json:"webhook_backlog"`
	ServeArgs      []string `json:"serve_args"`
	Short          bool     `json:"short"`
	Rounds         int      `json:"rounds"`
}

// Result is one measured run.
type Result struct {
	Scenario string `json:"scenario"`
	// Variant is a part of the scenario: webhooks "off" (no endpoint) or
	// "on" (an endpoint taking payout.sent).
	Variant string `json:"variant,omitempty"`
	// Mode is "closed" (each worker waits for its reply) or "open" (a fixed
	// arrival rate, latency counted from each request's scheduled time).
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency"` // open: the most requests in flight
	RatePercent int     `json:"rate_percent,omitempty"`
	TargetRate  float64 `json:"target_rate,omitempty"` // open: requests/s
	// Stored is, in the growth run, how many payouts were bulk-loaded before it.
	Stored *int64 `json:"stored_payouts,omitempty"`
	// Round is the run's round of a bench of several (Config.Rounds), from 1.
	Round int `json:"round,omitempty"`

	Replies int64 `json:"replies"` // measured
	// Payouts are the measured sends answered 200 that paid: every one, but
	// a v2 replay of an earlier payout (Idempotent-Replayed).
	Payouts int64 `json:"payouts"`
	// Replayed are the measured sends answered 200 as replays.
	Replayed int64 `json:"replayed,omitempty"`
	// Overlapping are the measured copies of an idempotency key sent before
	// its first copy had answered (retry-storm).
	Overlapping  int64   `json:"overlapping_copies,omitempty"`
	PayoutsPerS  float64 `json:"payouts_per_s"`
	RepliesPerS  float64 `json:"replies_per_s"`
	CeilingRatio float64 `json:"ceiling_ratio"`
	// Latency is over every measured request, in milliseconds; ByOp splits
	// it by kind of request.
	Latency  Latency            `json:"latency_ms"`
	ByOp     map[string]Latency `json:"latency_by_op_ms"`
	Statuses map[string]int64   `json:"statuses"` // measured replies by v1 or v2 status ("error": no reply)
	Dropped  int64              `json:"dropped,omitempty"`

	RSSMaxMB        float64 `json:"rss_max_mb"`
	CPUSeconds      float64 `json:"cpu_s"`
	CPUPer1kPayouts float64 `json:"cpu_s_per_1k_payouts"`

	// Webhooks is, for a webhooks run with the endpoint, what the
	// receiver got.
	Webhooks *WebhookRun `json:"webhooks,omitempty"`
	// Batch is, for a batch run, its payouts/s over hot's and over the
	// no-op ceiling's replies/s.
	Batch *BatchRun `json:"batch,omitempty"`

	Gates []Gate `json:"gates"`
}

// Latency holds percentiles in milliseconds.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func newReport(cfg Config, engine string) *Report {
	return &Report{
		Engine:  engine,
		Machine: machine(),
		Settings: Settings{
			WarmupS: cfg.Warmup.Seconds(), DurationS: cfg.Duration.Seconds(),
			Concurrency: cfg.Concurrency, RatePercents: cfg.RatePercents,
			Recipients: cfg.Recipients, SpreadFaucets: cfg.SpreadFaucets, DryPayouts: cfg.DryPayouts, WebhookBacklog: cfg.WebhookBacklog,
			ServeArgs: append([]string{}, cfg.ServeArgs...), Short: cfg.Short, Rounds: cfg.Rounds,
		},
	}
}

func (r *Report) addGate(g Gate) { r.Gates = append(r.Gates, g) }

// finish sets OK from every gate, and the summary of several rounds.
func (r *Report) finish() {
	if r.Settings.Rounds > 1 {
		r.Summary = summarizeRounds(r.Ceiling, slices.Concat(r.Runs, r.Growth))
	}
	r.OK = true
	for _, g := range r.allGates() {
		if g.Status == "fail" {
			r.OK = false
		}
	}
}

func (r *Report) allGates() []Gate {
	gs := slices.Clone(r.Gates)
	for _, run := range r.all() {
		gs = append(gs, run.Gates...)
	}
	if r.Drain != nil {
		gs = append(gs, r.Drain.Gates...)
	}
	return gs
}

func (r *Report) all() []*Result {
	return slices.Concat(r.Ceiling, r.Runs, r.Growth)
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				m.MemoryMB = kb * 1024 / 1e6
			}
		}
	}
	return m
}

// summarize computes a run's figures from its measured samples.
func summarize(o *outcome, spec runSpec) *Result {
	run := &Result{
		Scenario: spec.scenario, Variant: spec.variant, Mode: spec.mode, Concurrency: spec.concurrency,
		RatePercent: spec.ratePercent, TargetRate: math.Round(spec.rate),
		Statuses: map[string]int64{}, ByOp: map[string]Latency{}, Dropped: o.dropped,
	}
	var all []time.Duration
	byOp := map[op][]time.Duration{}
	for _, s := range o.samples {
		if s.warm {
			continue
		}
		run.Replies++
		run.Statuses[statusName(s.status)]++
		switch {
		case s.op == opBatch && s.batch != nil:
			run.Payouts += int64(len(s.batch.paid))
			run.Replayed += int64(s.batch.replayed)
		case s.op != opSend || s.status != 200:
		case s.replayed:
			run.Replayed++
		default:
			run.Payouts++
		}
		if s.overlap {
			run.Overlapping++
		}
		all = append(all, s.latency)
		byOp[s.op] = append(byOp[s.op], s.latency)
	}
	run.Latency = percentiles(all)
	for o, ls := range byOp {
		run.ByOp[o.String()] = percentiles(ls)
	}
	if secs := o.measured.Seconds(); secs > 0 {
		run.PayoutsPerS = float64(run.Payouts) / secs
		run.RepliesPerS = float64(run.Replies) / secs
	}
	return run
}

// percentiles returns nearest-rank percentiles of ls in milliseconds.
func percentiles(ls []time.Duration) Latency {
	if len(ls) == 0 {
		return Latency{}
	}
	slices.Sort(ls)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(ls)))) - 1
		return ms(ls[max(0, min(i, len(ls)-1))])
	}
	return Latency{N: len(ls), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(ls[len(ls)-1])}
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v as indented JSON: a report or a comparison.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteTable writes the report as a table, one line per run, and the
// details of any gate that failed.
func (r *Report) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "drip bench: %s, %d CPUs (%s), %d MB memory, %s %s; warm-up %gs, %gs measured per run\n",
		r.Engine, m.CPUs, m.CPUModel, m.MemoryMB, m.Go, m.OS, r.Settings.WarmupS, r.Settings.DurationS)
	if len(r.Settings.ServeArgs) > 0 {
		fmt.Fprintf(w, "serve flags: %s\n", strings.Join(r.Settings.ServeArgs, " "))
	}
	fmt.Fprintln(w)
	const head = "%-22s %-9s %4s %9s %9s %7s %8s %8s %8s %8s %7s %8s  %-28s %s\n"
	fmt.Fprintf(w, head, "scenario", "loop", "c", "payouts/s", "replies/s", "ceiling", "p50 ms", "p90 ms", "p99 ms", "max ms", "RSS MB", "CPU/1k", "replies by status", "gates")
	// In the order they ran: of several rounds, each round's ceiling
	// first; the growth run last, each step's rounds in turn.
	ran := slices.Concat(r.Ceiling, r.Runs)
	slices.SortStableFunc(ran, func(a, b *Result) int { return a.Round - b.Round })
	ran = append(ran, r.Growth...)
	for _, run := range ran {
		cpu := "-"
		if run.CPUPer1kPayouts > 0 {
			cpu = fmt.Sprintf("%.3f", run.CPUPer1kPayouts)
		}
		ratio := "-"
		if run.CeilingRatio > 0 {
			ratio = fmt.Sprintf("%.2f", run.CeilingRatio)
		}
		name := run.label()
		if run.Round > 0 {
			name += fmt.Sprintf(" #%d", run.Round) // its round, of several
		}
		fmt.Fprintf(w, "%-22s %-9s %4d %9.0f %9.0f %7s %8.2f %8.2f %8.2f %8.2f %7.1f %8s  %-28s %s\n",
			name, run.loop(), run.Concurrency, run.PayoutsPerS, run.RepliesPerS, ratio,
			run.Latency.P50, run.Latency.P90, run.Latency.P99, run.Latency.Max, run.RSSMaxMB, cpu,
			statusText(run.Statuses, run.Dropped), gateSummary(run.Gates))
	}
	var replays bool
	for _, run := range r.all() {
		if run.Replayed > 0 {
			if !replays {
				fmt.Fprintln(w)
				replays = true
			}
			fmt.Fprintf(w, "%s %s c=%d: %.0f%% of replies were replays (%d of %d); %d copies sent before their key's first copy answered\n",
				run.label(), run.loop(), run.Concurrency, 100*float64(run.Replayed)/float64(run.Replies), run.Replayed, run.Replies, run.Overlapping)
		}
	}
	r.writeWebhooks(w)
	r.writeBatches(w)
	r.writeSummary(w)
	fmt.Fprintf(w, "\nceiling: replies/s over the no-op endpoint's at the same concurrency (open loops: at the largest)."+
		"\npayouts/s: new payouts, not v2 replays. CPU/1k: server CPU seconds per 1,000 payouts."+
		"\nOpen loops: latency from each request's scheduled time.\n")
	fmt.Fprintf(w, "gates of every run: expected statuses, paid sends = new payout rows (v2: payouts = distinct idempotency keys),\n"+
		"faucet debits = recipient credits, no negative balance, payout ids distinct, drip admin reconcile, no server error;\n"+
		"v2 also: replays carry Idempotent-Replayed, one copy a key paid; every copy of a key answered the same payout_id.\n")
	for _, g := range r.Gates {
		fmt.Fprintf(w, "%s: %s\n", g.Name, g.Status)
	}
	r.writeFailures(w, "")
	writeVerdict(w, r.OK)
	return nil
}

// writeFailures writes a line for each gate that failed, with its detail,
// each after prefix (which bench of a comparison it is).
func (r *Report) writeFailures(w io.Writer, prefix string) {
	for _, run := range r.all() {
		for _, g := range run.Gates {
			if g.Status == "fail" {
				fmt.Fprintf(w, "FAILED %s%s %s c=%d: %s: %s\n", prefix, run.label(), run.loop(), run.Concurrency, g.Name, g.Detail)
			}
		}
	}
	if r.Drain != nil {
		for _, g := range r.Drain.Gates {
			if g.Status == "fail" {
				fmt.Fprintf(w, "FAILED %swebhooks drain: %s: %s\n", prefix, g.Name, g.Detail)
			}
		}
	}
	for _, g := range r.Gates {
		if g.Status == "fail" {
			fmt.Fprintf(w, "FAILED %s%s: %s\n", prefix, g.Name, g.Detail)
		}
	}
}

// writeVerdict ends a report's or a comparison's table.
func writeVerdict(w io.Writer, ok bool) {
	if ok {
		fmt.Fprintln(w, "all gates passed")
	} else {
		fmt.Fprintln(w, "SOME GATES FAILED")
	}
}

func (run *Result) label() string {
	switch {
	case run.Stored != nil:
		return fmt.Sprintf("growth %s %s", humanCount(*run.Stored), run.Scenario)
	case run.Variant != "":
		return run.Scenario + " " + run.Variant
	}
	return run.Scenario
}

// writeWebhooks writes what the webhooks scenario's receiver got: for
// each run with the endpoint, its throughput over the run without one,
// its deliveries and their lag; then the backlog's drain.
func (r *Report) writeWebhooks(w io.Writer) {
	var headed bool
	for _, run := range r.Runs {
		h := run.Webhooks
		if h == nil {
			continue
		}
		if !headed {
			fmt.Fprintf(w, "\nwebhooks: lag from a send's reply at the bench to its payout.sent at the bench's receiver (measured payouts)\n")
			headed = true
		}
		ratio := ""
		if h.WithoutRatio > 0 {
			ratio = fmt.Sprintf("%.3f× the payouts/s without endpoint; ", h.WithoutRatio)
		}
		fmt.Fprintf(w, "%s %s c=%d: %slag p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d of %d payouts delivered, %d duplicates; %d behind at the last reply, the last %.2fs after it\n",
			run.label(), run.loop(), run.Concurrency, ratio, h.Lag.P50, h.Lag.P99, h.Lag.Max, h.Delivered, h.Paid, h.Duplicates, h.Behind, h.CatchUpS)
	}
	if d := r.Drain; d != nil {
		fmt.Fprintf(w, "webhooks drain: a backlog of %d deliveries (made in %.1fs with drip serve stopped) drained in %.2fs from starting drip serve: %.0f/s "+
			"(first to last arrival %.2fs, %.0f/s); %d delivered, %d duplicates; gates %s\n",
			d.Backlog, d.BuildS, d.DrainS, d.PerS, d.FirstToLastS, d.FirstToLastPerS, d.Delivered, d.Duplicates, gateSummary(d.Gates))
	}
}

func (run *Result) loop() string {
	if run.Mode == "open" {
		return fmt.Sprintf("open %d%%", run.RatePercent)
	}
	return "closed"
}

func humanCount(n int64) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dM", n/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%dk", n/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// statusText is "200:1234 450:300", in status order.
func statusText(m map[string]int64, dropped int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	if dropped > 0 {
		parts = append(parts, fmt.Sprintf("dropped:%d", dropped))
	}
	return strings.Join(parts, " ")
}

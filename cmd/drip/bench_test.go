package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/bench"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// issue5Scenarios are the scenarios TestBenchShort runs: every one but
// webhooks, which TestBenchShortWebhooks runs.
var issue5Scenarios = []string{"hot", "spread", "v2-idempotent", "retry-storm", "over-limit", "run-dry", "mixed"}

// TestBenchShort runs drip bench --short, the CI mode, end to end: the real
// binary starts a real drip serve, drives the scenarios of issue 5, and
// checks its gates. The figures are only checked for sanity (no timings
// are asserted): every run measured something, and every reply is counted
// under a status.
func TestBenchShort(t *testing.T) {
	t.Parallel()
	engines := map[string][]string{"sqlite": nil}
	if u := os.Getenv(storetest.PostgresEnv); u != "" {
		engines["postgres"] = []string{"--database-url", u} // bench makes and drops its own schema
	} else {
		t.Logf("%s not set: drip bench --short runs on SQLite only", storetest.PostgresEnv)
	}
	for engine, dbArgs := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			// A measured second per run, not --short's 250 ms: the suite's
			// packages run in parallel on CI's two cores, and once a
			// PostgreSQL run measured no reply at all in 250 ms (every
			// request of the window outlasted it), which says nothing
			// about drip.
			args := []string{"bench", "--short", "--duration", "1s", "--json", "--scenarios", strings.Join(issue5Scenarios, ",")}
			rep := runBenchReport(t, append(args, dbArgs...))
			checkShortReport(t, engine, rep)
		})
	}
}

// runBenchReport runs drip with args, which ask for a --json report, and
// returns the report; a failed run or an output that is no report fails t.
func runBenchReport(t *testing.T, args []string) *bench.Report {
	t.Helper()
	cmd := exec.Command(dripBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drip %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, stdout.String())
	}
	return &rep
}

func checkShortReport(t *testing.T, engine string, rep *bench.Report) {
	t.Helper()
	if rep.Engine != engine || !rep.OK {
		t.Errorf("engine %q ok %v; want %q and ok", rep.Engine, rep.OK, engine)
	}
	var gates []string
	for _, g := range rep.Gates {
		gates = append(gates, g.Name+": "+g.Status)
	}
	if diff := cmp.Diff([]string{"drip serve stopped cleanly on SIGTERM: pass", "drip admin reconcile: pass"}, gates); diff != "" {
		t.Errorf("final gates (-want +got):\n%s", diff)
	}

	// Every scenario ran closed at 1 and 8, then open at 50% of its peak.
	var got []string
	for _, run := range rep.Runs {
		got = append(got, fmt.Sprintf("%s %s %d%%", run.Scenario, run.Mode, run.RatePercent))
	}
	var want []string
	for _, sc := range issue5Scenarios {
		want = append(want, sc+" closed 0%", sc+" closed 0%", sc+" open 50%")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
	if len(rep.Ceiling) != 2 || rep.Ceiling[0].Concurrency != 1 || rep.Ceiling[1].Concurrency != 8 {
		t.Errorf("ceiling runs: %+v; want concurrency 1 and 8", rep.Ceiling)
	}

	sendStatuses := map[string][]string{"over-limit": {"200", "450"}, "run-dry": {"200", "402"}}
	for _, run := range slices.Concat(rep.Ceiling, rep.Runs) {
		name := fmt.Sprintf("%s %s c=%d", run.Scenario, run.Mode, run.Concurrency)
		var counted int64
		for status, n := range run.Statuses {
			counted += n
			allowed := sendStatuses[run.Scenario]
			if allowed == nil {
				allowed = []string{"200"}
			}
			if !slices.Contains(allowed, status) {
				t.Errorf("%s: %d replies of status %s", name, n, status)
			}
		}
		if counted != run.Replies || run.Replies == 0 || run.RepliesPerS <= 0 {
			t.Errorf("%s: %d replies, %d counted by status, %.0f/s; want every reply counted, and some", name, run.Replies, counted, run.RepliesPerS)
		}
		l := run.Latency
		if l.N != int(run.Replies) || l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s: latency %+v over %d replies; want ordered positive percentiles of every reply", name, l, run.Replies)
		}
		if run.RSSMaxMB <= 0 || run.CeilingRatio <= 0 {
			t.Errorf("%s: RSS %.1f MB, ceiling ratio %.2f; want both positive", name, run.RSSMaxMB, run.CeilingRatio)
		}
		if run.Scenario != "ceiling" && run.Scenario != "run-dry" && run.Payouts == 0 {
			t.Errorf("%s: no payouts measured", name)
		}
		// Only retry-storm sends a key more than once, 4 times: at most 3
		// replays a payout, and 3 more for each key of the warm-up still in
		// flight when the measurement began.
		storm := run.Scenario == "retry-storm"
		if (run.Replayed > 0) != storm || storm && (run.Payouts+run.Replayed != run.Statuses["200"] || run.Replayed > 3*(run.Payouts+int64(run.Concurrency))) {
			t.Errorf("%s: %d payouts, %d replays of %d replies 200", name, run.Payouts, run.Replayed, run.Statuses["200"])
		}
		var names []string
		for _, g := range run.Gates {
			names = append(names, g.Name)
			if g.Status == "fail" {
				t.Errorf("%s: gate %q failed: %s", name, g.Name, g.Detail)
			}
		}
		if run.Scenario == "ceiling" {
			continue
		}
		want := []string{
			"every reply has an expected status", "faucet debits = recipient credits = paid amounts",
			"no negative balance", "acknowledged payout ids distinct", "drip admin reconcile", "server logged no error",
		}
		switch run.Scenario {
		case "v2-idempotent":
			want = append(want, "payouts = distinct idempotency keys", "replays carry Idempotent-Replayed, one copy a key paid")
		case "retry-storm":
			want = append(want, "payouts = distinct idempotency keys", "replays carry Idempotent-Replayed, one copy a key paid",
				"every copy of a key answered the same payout_id")
		default:
			want = append(want, "paid sends = new payout rows")
		}
		for _, want := range want {
			if !slices.Contains(names, want) {
				t.Errorf("%s: no gate %q among %q", name, want, names)
			}
		}
	}
}

// TestBenchShortWebhooks runs the webhooks scenario briefly, end to end:
// a real drip serve delivers its payouts' payout.sent to the bench's
// receiver, which verifies every delivery, then drains a small backlog.
// Only its gates and counts are checked, never a timing: every payout of
// every run with the endpoint delivered (and verified), none of the
// faucet without one, the backlog all delivered and the outbox empty.
func TestBenchShortWebhooks(t *testing.T) {
	t.Parallel()
	engines := map[string][]string{"sqlite": nil}
	if u := os.Getenv(storetest.PostgresEnv); u != "" {
		engines["postgres"] = []string{"--database-url", u}
	}
	for engine, dbArgs := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			args := []string{"bench", "--short", "--scenarios", "webhooks", "--concurrency", "8", "--duration", "1s", "--webhook-backlog", "500", "--json"}
			rep := runBenchReport(t, append(args, dbArgs...))
			checkWebhooksReport(t, engine, rep)
		})
	}
}

func checkWebhooksReport(t *testing.T, engine string, rep *bench.Report) {
	t.Helper()
	if rep.Engine != engine || !rep.OK {
		t.Errorf("engine %q ok %v; want %q and ok", rep.Engine, rep.OK, engine)
	}
	var got []string
	for _, run := range rep.Runs {
		got = append(got, fmt.Sprintf("%s %s %s %d %d%%", run.Scenario, run.Variant, run.Mode, run.Concurrency, run.RatePercent))
	}
	want := []string{"webhooks off closed 8 0%", "webhooks on closed 8 0%", "webhooks on open 16 50%"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("runs (-want +got):\n%s", diff)
	}
	runGates := []string{"every reply has an expected status", "paid sends = new payout rows", "drip admin reconcile",
		"server logged no error", "deliveries only of the endpoint's faucet's payout.sent"}
	for _, run := range rep.Runs {
		name := fmt.Sprintf("webhooks %s %s", run.Variant, run.Mode)
		want := runGates
		if run.Variant == "on" {
			want = append(slices.Clone(runGates), "every payout delivered at least once", "every delivery verified (both signatures)")
			h := run.Webhooks
			switch {
			case h == nil:
				t.Errorf("%s: no webhook figures", name)
			case h.Paid < run.Payouts || run.Payouts == 0 || h.Delivered != h.Paid || h.Lag.N != int(run.Payouts):
				t.Errorf("%s: %d payouts measured; %d paid in all, %d delivered, lag over %d; want every one delivered and its lag measured",
					name, run.Payouts, h.Paid, h.Delivered, h.Lag.N)
			}
		} else if run.Webhooks != nil {
			t.Errorf("%s: webhook figures %+v for the faucet without an endpoint", name, run.Webhooks)
		}
		checkGates(t, name, run.Gates, want)
	}
	d := rep.Drain
	if d == nil {
		t.Fatal("no webhook drain in the report")
	}
	if d.Backlog != 500 || d.Delivered != 500 {
		t.Errorf("drain: backlog %d, %d delivered; want 500 and 500", d.Backlog, d.Delivered)
	}
	checkGates(t, "drain", d.Gates, []string{"drip serve stopped cleanly on SIGTERM", "the outbox holds one pending delivery a payout",
		"every payout delivered at least once", "every delivery verified (both signatures)", "deliveries only of the endpoint's faucet's payout.sent",
		"the outbox is empty once drained", "server logged no error", "drip admin reconcile"})
	var final []string
	for _, g := range rep.Gates {
		final = append(final, g.Name+": "+g.Status)
	}
	if diff := cmp.Diff([]string{"drip serve stopped cleanly on SIGTERM: pass", "drip admin reconcile: pass"}, final); diff != "" {
		t.Errorf("final gates (-want +got):\n%s", diff)
	}
}

// checkGates wants every gate named in want among gs, and none failed.
func checkGates(t *testing.T, name string, gs []bench.Gate, want []string) {
	t.Helper()
	var names []string
	for _, g := range gs {
		names = append(names, g.Name)
		if g.Status != "pass" {
			t.Errorf("%s: gate %q %s: %s", name, g.Name, g.Status, g.Detail)
		}
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s: no gate %q among %q", name, w, names)
		}
	}
}

// TestBenchShortBatch runs the batch scenario briefly, end to end: hot,
// then v2 /send/batch in batches of 50 and 500, at one concurrency. Only
// its gates and counts are checked, never a timing: every batch item was
// answered and paid, the payout rows are the items paid, the ledger
// reconciles, and each batch run carries its ratios to hot and the
// ceiling.
func TestBenchShortBatch(t *testing.T) {
	t.Parallel()
	engines := map[string][]string{"sqlite": nil}
	if u := os.Getenv(storetest.PostgresEnv); u != "" {
		engines["postgres"] = []string{"--database-url", u}
	}
	for engine, dbArgs := range engines {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			args := []string{"bench", "--short", "--scenarios", "batch", "--concurrency", "4", "--duration", "2s", "--rates", "none", "--json"}
			rep := runBenchReport(t, append(args, dbArgs...))
			if rep.Engine != engine || !rep.OK {
				t.Errorf("engine %q ok %v; want %q and ok", rep.Engine, rep.OK, engine)
			}
			var got []string
			for _, run := range rep.Runs {
				got = append(got, fmt.Sprintf("%s %s %s %d", run.Scenario, run.Variant, run.Mode, run.Concurrency))
			}
			if diff := cmp.Diff([]string{"batch hot closed 4", "batch 50 closed 4", "batch 500 closed 4"}, got); diff != "" {
				t.Fatalf("runs (-want +got):\n%s", diff)
			}
			runGates := []string{"every reply has an expected status", "paid sends = new payout rows", "faucet debits = recipient credits = paid amounts",
				"acknowledged payout ids distinct", "drip admin reconcile", "server logged no error"}
			for _, run := range rep.Runs {
				name := "batch " + run.Variant
				want := runGates
				if run.Variant == "hot" {
					if run.Batch != nil || run.Payouts == 0 {
						t.Errorf("%s: %d payouts, batch figures %+v; want payouts and no batch figures", name, run.Payouts, run.Batch)
					}
				} else {
					want = append(slices.Clone(runGates), "every batch item answered, and paid")
					if f := run.Batch; f == nil || f.Items == 0 || f.Refused != 0 || f.Size != map[string]int{"50": 50, "500": 500}[run.Variant] ||
						run.Payouts > 0 && (f.HotRatio <= 0 || f.CeilingRatio <= 0) {
						t.Errorf("%s: batch figures %+v over %d payouts; want items, none refused, and both ratios", name, f, run.Payouts)
					}
				}
				checkGates(t, name, run.Gates, want)
			}
		})
	}
}

func TestBenchRefusesBadFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown scenario", []string{"--scenarios", "hot,cold"}, `no scenario "cold"`},
		{"bad concurrency", []string{"--concurrency", "1,x"}, `--concurrency: "x"`},
		{"negative growth size", []string{"--growth-sizes", "0,-5"}, `--growth-sizes: "-5"`},
		{"empty webhook backlog", []string{"--webhook-backlog", "0"}, "--webhook-backlog: one positive count"},
		{"not postgres", []string{"--database-url", "mysql://x"}, "postgres://"},
		{"too many rounds", []string{"--rounds", "101"}, "--rounds: 101 is not 1-100"},
		{"negative rounds", []string{"--rounds", "-1"}, "--rounds: -1 is not 1-100"},
		{"nothing to compare with", []string{"--compare", "/nonexistent/drip"}, "--compare: exec: \"/nonexistent/drip\""},
		{"one data directory for both sides", []string{"--compare", dripBin, "--data-dir", "/tmp/x"}, "--compare: --data-dir names one place for both sides"},
		{"one profile for both sides", []string{"--compare", dripBin, "--server-cpu-profile", "/tmp/x"}, "--compare: --server-cpu-profile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			cmd := exec.Command(dripBin, append([]string{"bench"}, c.args...)...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("exit %v, want exit code 2 (usage)", err)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want it to mention %q", stderr.String(), c.want)
			}
		})
	}
}

func TestParseCountsReadsSuffixes(t *testing.T) {
	t.Parallel()
	got, err := parseCounts[int64]("growth-sizes", "0, 1M,10M,2k,7")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{0, 1_000_000, 10_000_000, 2_000, 7}, got); diff != "" {
		t.Errorf("parseCounts (-want +got):\n%s", diff)
	}
	if got, err := parseCounts[int]("concurrency", ""); got != nil || err != nil {
		t.Errorf("empty list: %v, %v; want nil (the defaults)", got, err)
	}
}

// TestBenchRounds: with --rounds 2, each round measures the ceiling, then
// every scenario, each run's ratio taken to its own round's ceiling, and
// the report sums the rounds up, spread's figure over hot's paired by
// round. The batch scenario, which drives its own runs, runs once, in the
// last round; the growth run, after it, measures each step once a round.
func TestBenchRounds(t *testing.T) {
	t.Parallel()
	args := []string{"bench", "--short", "--duration", "1s", "--json", "--scenarios", "hot,spread,batch", "--concurrency", "8", "--rates", "none", "--rounds", "2", "--growth"}
	rep := runBenchReport(t, args)
	if !rep.OK {
		t.Errorf("drip bench --rounds 2: a gate failed")
	}
	if rep.Settings.Rounds != 2 {
		t.Errorf("settings: rounds %d, want 2", rep.Settings.Rounds)
	}
	var ran []string
	for _, r := range slices.Concat(rep.Ceiling, rep.Runs) {
		ran = append(ran, strings.TrimSpace(fmt.Sprintf("%s %s #%d", r.Scenario, r.Variant, r.Round)))
	}
	want := []string{"ceiling  #1", "ceiling  #2", "hot  #1", "spread  #1", "hot  #2", "spread  #2", "batch hot #2", "batch 50 #2", "batch 500 #2"}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	for _, r := range rep.Runs {
		if r.Scenario == "batch" {
			continue // its figures are its own (BatchRun)
		}
		ceiling := rep.Ceiling[r.Round-1].RepliesPerS
		if want := r.RepliesPerS / ceiling; r.CeilingRatio != want {
			t.Errorf("%s #%d: ratio %v, want its round's %v", r.Scenario, r.Round, r.CeilingRatio, want)
		}
	}
	var summed []string
	for _, s := range rep.Summary {
		summed = append(summed, fmt.Sprintf("%s %s %d", s.Scenario, s.Variant, s.Rounds))
		if s.RepliesPerS <= 0 {
			t.Errorf("summary of %s %s: no replies", s.Scenario, s.Variant)
		}
	}
	if diff := cmp.Diff([]string{"ceiling  2", "hot  2", "spread  2", "batch hot 1", "batch 50 1", "batch 500 1",
		"send  2", "payouts  2", "send  2", "payouts  2"}, summed); diff != "" {
		t.Errorf("summary: scenario, variant, rounds (-want +got):\n%s", diff)
	}
	// The growth run, after the last round: each step measured once a
	// round, in turn (--short's steps: 0 and 2,000 stored).
	var grew []string
	for _, r := range rep.Growth {
		grew = append(grew, fmt.Sprintf("%d %s #%d", *r.Stored, r.Scenario, r.Round))
	}
	want = []string{"0 send #1", "0 payouts #1", "0 send #2", "0 payouts #2",
		"2000 send #1", "2000 payouts #1", "2000 send #2", "2000 payouts #2"}
	if diff := cmp.Diff(want, grew); diff != "" {
		t.Errorf("growth runs (-want +got):\n%s", diff)
	}
	for _, s := range rep.Summary {
		if s.Scenario == "send" && (s.Stored == nil || s.OfHot != 0) {
			t.Errorf("a growth step's summary: stored %v, of hot %v; want its step, and no figure against hot", s.Stored, s.OfHot)
		}
	}
	if len(rep.Summary) > 2 && rep.Summary[2].OfHot <= 0 {
		t.Errorf("spread's summary: of hot %v, want its payouts over hot's", rep.Summary[2].OfHot)
	}
}

// TestBenchCompare: drip bench --compare runs a whole bench of each side
// a round, in turn (this first in odd rounds), each with the flags given
// but --compare, --rounds and --json, and pairs their runs by round. The
// comparison and its rounds are given here through the environment, which
// the sides must not inherit: a side that did would compare again rather
// than write its report.
func TestBenchCompare(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(dripBin, "bench", "--short", "--duration", "1s", "--scenarios", "hot", "--concurrency", "8", "--rates", "none")
	cmd.Env = append(os.Environ(), "DRIP_COMPARE="+dripBin, "DRIP_ROUNDS=2", "DRIP_JSON=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("drip bench --compare: %v\nstderr:\n%s", err, stderr.String())
	}
	var c bench.Comparison
	if err := json.Unmarshal(stdout.Bytes(), &c); err != nil {
		t.Fatalf("output is not a comparison: %v\n%s", err, stdout.String())
	}
	if !c.OK || c.Rounds != 2 || c.Base != dripBin {
		t.Errorf("ok %v, rounds %d, base %q; want ok, 2, %q", c.OK, c.Rounds, c.Base, dripBin)
	}
	var ran []string
	for _, b := range c.Benches {
		var runs []string
		for _, r := range slices.Concat(b.Report.Ceiling, b.Report.Runs) {
			runs = append(runs, fmt.Sprintf("%s c=%d", r.Scenario, r.Concurrency))
		}
		ran = append(ran, fmt.Sprintf("#%d %s rounds=%d: %s", b.Round, b.Side, b.Report.Settings.Rounds, strings.Join(runs, ", ")))
	}
	want := []string{
		"#1 this rounds=1: ceiling c=8, hot c=8",
		"#1 base rounds=1: ceiling c=8, hot c=8",
		"#2 base rounds=1: ceiling c=8, hot c=8",
		"#2 this rounds=1: ceiling c=8, hot c=8",
	}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("benches (-want +got):\n%s", diff)
	}
	var paired []string
	for _, p := range c.Pairs {
		paired = append(paired, fmt.Sprintf("%s c=%d rounds=%d", p.Label, p.Concurrency, p.Rounds))
		if p.Ratio <= 0 || p.This.RepliesPerS <= 0 || p.Base.RepliesPerS <= 0 {
			t.Errorf("pair %s: ratio %v, this %v, base %v replies/s; want each measured", p.Label, p.Ratio, p.This.RepliesPerS, p.Base.RepliesPerS)
		}
	}
	if diff := cmp.Diff([]string{"ceiling c=8 rounds=2", "hot c=8 rounds=2"}, paired); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
}

// TestBenchPassesServerProfiles: --server-cpu-profile,
// --server-mem-profile and --server-trace reach the drip serve under test,
// which writes each whole (TestServeWritesProfiles checks what they hold).
func TestBenchPassesServerProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"--server-cpu-profile": filepath.Join(dir, "cpu.pprof"),
		"--server-mem-profile": filepath.Join(dir, "allocs.pprof"),
		"--server-trace":       filepath.Join(dir, "run.trace"),
	}
	args := []string{"bench", "--short", "--duration", "1s", "--json", "--scenarios", "hot", "--concurrency", "8", "--rates", "none"}
	for flag, path := range files {
		args = append(args, flag, path)
	}
	if rep := runBenchReport(t, args); !rep.OK {
		t.Errorf("drip bench with the server's profiles: a gate failed")
	}
	for flag, path := range files {
		fi, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v; want the server's record", flag, err)
		} else if fi.Size() == 0 {
			t.Errorf("%s: %s is empty; want the server's record", flag, path)
		}
	}
}

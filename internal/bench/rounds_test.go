package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestSummaryPairsEachRunWithItsRound: the summary's figures are medians
// over the rounds, and a scenario's figure against hot is the median of
// each round's own pair, not one median over another.
func TestSummaryPairsEachRunWithItsRound(t *testing.T) {
	t.Parallel()
	run := func(scenario string, round int, payouts, replies, ratio, p99 float64) *Result {
		return &Result{Scenario: scenario, Mode: "closed", Concurrency: 64, Round: round,
			PayoutsPerS: payouts, RepliesPerS: replies, CeilingRatio: ratio, Latency: Latency{P50: p99 / 2, P99: p99}}
	}
	ceiling := []*Result{run("ceiling", 1, 0, 10000, 1, 10), run("ceiling", 2, 0, 12000, 1, 9), run("ceiling", 3, 0, 11000, 1, 8)}
	runs := []*Result{
		run("hot", 1, 4000, 4000, 0.40, 20), run("spread", 1, 3600, 3600, 0.36, 30),
		run("hot", 2, 5000, 5000, 0.417, 18), run("spread", 2, 4000, 4000, 0.333, 28),
		run("hot", 3, 4500, 4500, 0.409, 19), run("spread", 3, 4500, 4500, 0.409, 26),
		// mixed: every reply counts, a payout only of its sends
		run("mixed", 3, 3000, 4200, 0.38, 25),
		// an open loop: no figure against hot
		{Scenario: "hot", Mode: "open", Concurrency: 128, RatePercent: 50, Round: 3, PayoutsPerS: 2250, RepliesPerS: 2250, CeilingRatio: 0.2},
	}
	got := summarizeRounds(ceiling, runs)
	want := []Summary{
		{Scenario: "ceiling", Mode: "closed", Concurrency: 64, Rounds: 3, RepliesPerS: 11000, CeilingRatio: 1, CeilingRatioMin: 1, CeilingRatioMax: 1, P50: 4.5, P99: 9},
		{Scenario: "hot", Mode: "closed", Concurrency: 64, Rounds: 3, PayoutsPerS: 4500, RepliesPerS: 4500, CeilingRatio: 0.409, CeilingRatioMin: 0.40, CeilingRatioMax: 0.417, P50: 9.5, P99: 19},
		// of hot: 0.9, 0.8 and 1.0 by round, median 0.9; the medians'
		// ratio (4000 / 4500) would be 0.889.
		{Scenario: "spread", Mode: "closed", Concurrency: 64, Rounds: 3, PayoutsPerS: 4000, RepliesPerS: 4000, CeilingRatio: 0.36, CeilingRatioMin: 0.333, CeilingRatioMax: 0.409, P50: 14, P99: 28, OfHot: 0.9, OfHotReplies: 0.9},
		{Scenario: "mixed", Mode: "closed", Concurrency: 64, Rounds: 1, PayoutsPerS: 3000, RepliesPerS: 4200, CeilingRatio: 0.38, CeilingRatioMin: 0.38, CeilingRatioMax: 0.38, P50: 12.5, P99: 25, OfHot: 3000.0 / 4500, OfHotReplies: 4200.0 / 4500},
		{Scenario: "hot", Mode: "open", Concurrency: 128, RatePercent: 50, Rounds: 1, PayoutsPerS: 2250, RepliesPerS: 2250, CeilingRatio: 0.2, CeilingRatioMin: 0.2, CeilingRatioMax: 0.2},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}

	rep := &Report{Settings: Settings{Rounds: 3}, Ceiling: ceiling, Runs: runs, Summary: got}
	var out bytes.Buffer
	rep.writeSummary(&out)
	for _, line := range []string{"over 3 rounds", "spread ", "0.90 (0.90)", "0.33-0.41", "open 50%"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the summary's table lacks %q:\n%s", line, out.String())
		}
	}
}

// TestSummaryOfGrowthSteps: each step of the growth run is summed up over
// its rounds on its own, named by what it had stored, and set against no
// hot run (its sends are hot's, on another faucet, after every round).
func TestSummaryOfGrowthSteps(t *testing.T) {
	t.Parallel()
	empty, full := int64(0), int64(10_000_000)
	step := func(stored *int64, round int, payouts float64) *Result {
		return &Result{Scenario: "send", Mode: "closed", Concurrency: 64, Stored: stored, Round: round,
			PayoutsPerS: payouts, RepliesPerS: payouts, CeilingRatio: payouts / 30000, Latency: Latency{P50: 4, P99: 12}}
	}
	reads := &Result{Scenario: "payouts", Mode: "closed", Concurrency: 1, Stored: &full, Round: 1, RepliesPerS: 2100, Latency: Latency{P50: 0.4, P99: 1.4}}
	runs := []*Result{
		{Scenario: "hot", Mode: "closed", Concurrency: 64, Round: 1, PayoutsPerS: 13000, RepliesPerS: 13000, CeilingRatio: 0.4},
		step(&empty, 1, 14300), step(&empty, 2, 13300), step(&empty, 3, 13900),
		step(&full, 1, 12700), step(&full, 2, 14400), step(&full, 3, 13500),
		reads,
	}
	got := summarizeRounds(nil, runs)
	if len(got) != 4 {
		t.Fatalf("%d summaries, want hot's and one a step: %+v", len(got), got)
	}
	for i, c := range []struct {
		stored  *int64
		payouts float64
	}{{&empty, 13900}, {&full, 13500}} {
		s := got[i+1]
		if s.Stored == nil || *s.Stored != *c.stored || s.Rounds != 3 || s.PayoutsPerS != c.payouts {
			t.Errorf("step %d: stored %v, %d rounds, %v payouts/s; want %d, 3, %v", i, s.Stored, s.Rounds, s.PayoutsPerS, *c.stored, c.payouts)
		}
		if s.OfHot != 0 || s.OfHotReplies != 0 {
			t.Errorf("step %d: of hot %v (%v), want none", i, s.OfHot, s.OfHotReplies)
		}
	}
	rep := &Report{Settings: Settings{Rounds: 3}, Summary: got}
	var out bytes.Buffer
	rep.writeSummary(&out)
	for _, line := range []string{"growth 0 send ", "growth 10M send "} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the summary's table lacks %q:\n%s", line, out.String())
		}
	}
	// The reads have no ceiling to be a ratio of: "-", not 0.00.
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "growth 10M payouts") && strings.Contains(line, "0.00") {
			t.Errorf("the reads' line shows a ratio: %s", line)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{7}, 7}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestPairSidesByRound: a comparison sets each run of this side beside the
// base's of the same round. Its figure is the median of the rounds' own
// ratios (not the ratio of the medians), by payouts, or by replies for a
// run that pays nothing; a run only one side has is left out.
func TestPairSidesByRound(t *testing.T) {
	t.Parallel()
	run := func(scenario string, payouts, replies, p99 float64) *Result {
		return &Result{Scenario: scenario, Mode: "closed", Concurrency: 64, PayoutsPerS: payouts, RepliesPerS: replies,
			CeilingRatio: replies / 10000, Latency: Latency{P99: p99}, CPUPer1kPayouts: 0.1}
	}
	bench := func(round int, side string, ceiling float64, runs ...*Result) SideBench {
		return SideBench{Round: round, Side: side, Report: &Report{Ceiling: []*Result{run("ceiling", 0, ceiling, 5)}, Runs: runs}}
	}
	benches := []SideBench{
		bench(1, "this", 10000, run("hot", 4400, 4400, 20), run("spread", 3960, 3960, 25)),
		bench(1, "base", 10000, run("hot", 4000, 4000, 22), run("spread", 3200, 3200, 30)),
		bench(2, "base", 12000, run("hot", 5000, 5000, 18), run("spread", 4000, 4000, 28), run("mixed", 3000, 4000, 20)),
		bench(2, "this", 11000, run("hot", 4500, 4500, 19), run("spread", 3600, 3600, 24)),
		bench(3, "this", 9000, run("hot", 5100, 5100, 17), run("spread", 5100, 5100, 23)),
		bench(3, "base", 10000, run("hot", 5100, 5100, 21), run("spread", 3570, 3570, 29)),
	}
	got := pairSides(benches)
	summary := func(scenario string, payouts, p99, min, max, ofHot float64) Summary {
		return Summary{Scenario: scenario, Mode: "closed", Concurrency: 64, Rounds: 3, PayoutsPerS: payouts, RepliesPerS: payouts,
			CeilingRatio: payouts / 10000, CeilingRatioMin: min, CeilingRatioMax: max, P99: p99, CPUPer1kPayouts: 0.1,
			OfHot: ofHot, OfHotReplies: ofHot}
	}
	want := []Pair{
		// 1.0, 0.917 and 0.9 by round; the medians' ratio would be 1.0.
		{Label: "ceiling", Mode: "closed", Concurrency: 64, Rounds: 3,
			This: Summary{Scenario: "ceiling", Mode: "closed", Concurrency: 64, Rounds: 3, RepliesPerS: 10000, CeilingRatio: 1,
				CeilingRatioMin: 0.9, CeilingRatioMax: 1.1, P99: 5, CPUPer1kPayouts: 0.1},
			Base: Summary{Scenario: "ceiling", Mode: "closed", Concurrency: 64, Rounds: 3, RepliesPerS: 10000, CeilingRatio: 1,
				CeilingRatioMin: 1, CeilingRatioMax: 1.2, P99: 5, CPUPer1kPayouts: 0.1},
			Ratio: 11000.0 / 12000, RatioMin: 0.9, RatioMax: 1, Ahead: 0},
		// 1.1, 0.9 and 1.0 by round: ahead only in the first.
		{Label: "hot", Mode: "closed", Concurrency: 64, Rounds: 3,
			This: summary("hot", 4500, 19, 0.44, 0.51, 0), Base: summary("hot", 5000, 21, 0.40, 0.51, 0),
			Ratio: 1, RatioMin: 0.9, RatioMax: 1.1, Ahead: 1},
		// Of hot, each side's own round by round: this 0.9, 0.8, 1.0; the
		// base 0.8, 0.8, 0.7.
		{Label: "spread", Mode: "closed", Concurrency: 64, Rounds: 3,
			This: summary("spread", 3960, 24, 0.36, 0.51, 0.9), Base: summary("spread", 3570, 29, 0.32, 0.40, 0.8),
			Ratio: 3960.0 / 3200, RatioMin: 0.9, RatioMax: 5100.0 / 3570, Ahead: 2},
		// mixed ran on the base's side only: nothing to pair.
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}

	c := &Comparison{This: "/tmp/drip", Base: "/tmp/drip-main", Rounds: 3, Benches: benches, Pairs: got, OK: true}
	var out bytes.Buffer
	if err := c.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"this /tmp/drip against base /tmp/drip-main, 3 rounds",
		"hot                    closed      64      3      4500      5000     1.000 0.900-1.100   1/3      0.450      0.500    19.00    21.00        -        -",
		"spread                 closed      64      3      3960      3570     1.238 0.900-1.429   2/3      0.396      0.357    24.00    29.00    0.900    0.800",
		"all gates passed",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, out.String())
		}
	}
}

// TestCompareTableNamesFailedGates: a comparison whose side failed a gate
// says which round, side, run and gate, with its detail, as a bench's own
// table does, the webhooks drain's included.
func TestCompareTableNamesFailedGates(t *testing.T) {
	t.Parallel()
	failed := Gate{Name: "paid sends = new payout rows", Status: "fail", Detail: "3 sends answered 200, 4 payout rows"}
	hot := &Result{Scenario: "hot", Mode: "closed", Concurrency: 64, PayoutsPerS: 100, RepliesPerS: 100, Gates: []Gate{failed}}
	drain := &Drain{Gates: []Gate{{Name: "every delivery arrived", Status: "fail", Detail: "9 of 10"}}}
	c := &Comparison{This: "a", Base: "b", Rounds: 2, Benches: []SideBench{
		{Round: 2, Side: "base", Report: &Report{Runs: []*Result{hot}, Drain: drain}},
	}}
	var out bytes.Buffer
	if err := c.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"FAILED round 2 base: hot closed c=64: paid sends = new payout rows: 3 sends answered 200, 4 payout rows",
		"FAILED round 2 base: webhooks drain: every delivery arrived: 9 of 10",
		"SOME GATES FAILED",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, out.String())
		}
	}
}

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
		bench(1, "this", 10000, run("hot", 4400, 4400, 20)),
		bench(1, "base", 10000, run("hot", 4000, 4000, 22)),
		bench(2, "base", 12000, run("hot", 5000, 5000, 18), run("spread", 4000, 4000, 30)),
		bench(2, "this", 11000, run("hot", 4500, 4500, 19)),
		bench(3, "this", 9000, run("hot", 5100, 5100, 17)),
		bench(3, "base", 10000, run("hot", 5100, 5100, 21)),
	}
	got := pairSides(benches)
	side := func(payouts, replies, p99 float64) Side {
		return Side{PayoutsPerS: payouts, RepliesPerS: replies, CeilingRatio: replies / 10000, P99: p99, CPUPer1kPayouts: 0.1}
	}
	want := []Pair{
		// 1.0, 0.917 and 0.9 by round; the medians' ratio would be 1.0.
		{Label: "ceiling", Mode: "closed", Concurrency: 64, Rounds: 3, This: side(0, 10000, 5), Base: side(0, 10000, 5),
			Ratio: 11000.0 / 12000, RatioMin: 0.9, RatioMax: 1, Ahead: 0},
		// 1.1, 0.9 and 1.0 by round: ahead only in the first.
		{Label: "hot", Mode: "closed", Concurrency: 64, Rounds: 3, This: side(4500, 4500, 19), Base: side(5000, 5000, 21),
			Ratio: 1, RatioMin: 0.9, RatioMax: 1.1, Ahead: 1},
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
		"hot                    closed      64      3        4500        5000     1.000 0.900-1.100    1/3",
		"all gates passed",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, out.String())
		}
	}
}

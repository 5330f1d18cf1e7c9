package bench

import (
	"fmt"
	"io"
	"slices"
)

// Summary is one run of a bench of several rounds (Config.Rounds) summed
// up over its rounds: the median of each figure, and the range of its
// ratio to the ceiling. The median rather than the mean: a round in a
// slow phase of the VM moves it least.
type Summary struct {
	Scenario    string `json:"scenario"`
	Variant     string `json:"variant,omitempty"`
	Mode        string `json:"mode"`
	Concurrency int    `json:"concurrency"`
	RatePercent int    `json:"rate_percent,omitempty"`
	// Stored is, for a step of the growth run, the payouts loaded before it.
	Stored *int64 `json:"stored_payouts,omitempty"`
	// Rounds is how many rounds ran it: fewer than the bench's for the
	// scenarios that run once (batch, webhooks).
	Rounds          int     `json:"rounds"`
	PayoutsPerS     float64 `json:"payouts_per_s"`
	RepliesPerS     float64 `json:"replies_per_s"`
	CeilingRatio    float64 `json:"ceiling_ratio"`
	CeilingRatioMin float64 `json:"ceiling_ratio_min"`
	CeilingRatioMax float64 `json:"ceiling_ratio_max"`
	P50             float64 `json:"p50_ms"`
	P99             float64 `json:"p99_ms"`
	CPUPer1kPayouts float64 `json:"cpu_s_per_1k_payouts"`
	// OfHot is, for a closed loop of another scenario, the median over
	// the rounds of its payouts/s over hot's at the same concurrency in
	// the same round, and OfHotReplies of its replies/s: the figure of
	// issue 16's goals for spread, over-limit, mixed and v2-idempotent,
	// each round's pair measured minutes apart at most. 0 when hot did
	// not run beside it.
	OfHot        float64 `json:"of_hot,omitempty"`
	OfHotReplies float64 `json:"of_hot_replies,omitempty"`
}

// summarizeRounds sums up the runs of every round, one Summary for each
// run of a round (scenario, variant, loop, concurrency, rate), in the
// order they first ran.
func summarizeRounds(ceiling, runs []*Result) []Summary {
	type key struct {
		label, mode      string
		concurrency, pct int
	}
	type at struct{ round, concurrency int }
	hot := map[at]*Result{}
	for _, r := range runs {
		if r.Scenario == "hot" && r.Variant == "" && r.Mode == "closed" {
			hot[at{r.Round, r.Concurrency}] = r
		}
	}
	var order []key
	groups := map[key][]*Result{}
	for _, r := range slices.Concat(ceiling, runs) {
		k := key{r.label(), r.Mode, r.Concurrency, r.RatePercent}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		rs := groups[k]
		first := rs[0]
		s := Summary{
			Scenario: first.Scenario, Variant: first.Variant, Mode: first.Mode,
			Concurrency: first.Concurrency, RatePercent: first.RatePercent, Stored: first.Stored, Rounds: len(rs),
		}
		var payouts, replies, ratios, p50s, p99s, cpus, ofHot, ofHotReplies []float64
		for _, r := range rs {
			payouts = append(payouts, r.PayoutsPerS)
			replies = append(replies, r.RepliesPerS)
			ratios = append(ratios, r.CeilingRatio)
			p50s = append(p50s, r.Latency.P50)
			p99s = append(p99s, r.Latency.P99)
			cpus = append(cpus, r.CPUPer1kPayouts)
			if h := hot[at{r.Round, r.Concurrency}]; h != nil && h != r && r.Scenario != "ceiling" && r.Stored == nil && r.Mode == "closed" && h.PayoutsPerS > 0 {
				ofHot = append(ofHot, r.PayoutsPerS/h.PayoutsPerS)
				ofHotReplies = append(ofHotReplies, r.RepliesPerS/h.RepliesPerS)
			}
		}
		s.PayoutsPerS, s.RepliesPerS = median(payouts), median(replies)
		s.CeilingRatio, s.CeilingRatioMin, s.CeilingRatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
		s.P50, s.P99, s.CPUPer1kPayouts = median(p50s), median(p99s), median(cpus)
		s.OfHot, s.OfHotReplies = median(ofHot), median(ofHotReplies)
		out = append(out, s)
	}
	return out
}

// median is the middle value of vs, the mean of the two middle ones for
// an even count; 0 for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// writeSummary writes the summary of several rounds, if any.
func (r *Report) writeSummary(w io.Writer) {
	if len(r.Summary) == 0 {
		return
	}
	fmt.Fprintf(w, "\nover %d rounds, the median of each figure; the ceiling's ratio also at its lowest and highest;\n"+
		"of hot: payouts/s (replies/s) over hot's at the same concurrency in the same round\n", r.Settings.Rounds)
	const head = "%-22s %-9s %4s %6s %9s %9s %7s %13s %8s %8s %8s  %s\n"
	fmt.Fprintf(w, head, "scenario", "loop", "c", "rounds", "payouts/s", "replies/s", "ceiling", "ceiling range", "p50 ms", "p99 ms", "CPU/1k", "of hot")
	for _, s := range r.Summary {
		run := Result{Scenario: s.Scenario, Variant: s.Variant, Mode: s.Mode, RatePercent: s.RatePercent, Stored: s.Stored}
		cpu, ofHot, ratio, span := "-", "-", "-", "-"
		if s.CPUPer1kPayouts > 0 {
			cpu = fmt.Sprintf("%.3f", s.CPUPer1kPayouts)
		}
		if s.CeilingRatio > 0 { // none for a growth step's reads: no ceiling at c=1
			ratio, span = fmt.Sprintf("%.2f", s.CeilingRatio), fmt.Sprintf("%.2f-%.2f", s.CeilingRatioMin, s.CeilingRatioMax)
		}
		if s.OfHotReplies > 0 {
			ofHot = fmt.Sprintf("%.2f (%.2f)", s.OfHot, s.OfHotReplies)
		}
		fmt.Fprintf(w, "%-22s %-9s %4d %6d %9.0f %9.0f %7s %13s %8.2f %8.2f %8s  %s\n",
			run.label(), run.loop(), s.Concurrency, s.Rounds, s.PayoutsPerS, s.RepliesPerS, ratio, span, s.P50, s.P99, cpu, ofHot)
	}
}

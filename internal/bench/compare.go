package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"
)

// A comparison benches two drip executables in turn, round by round, and
// pairs their figures by round: the before and after of a change measured
// in one sitting, as BENCHMARKS.md's rule asks, without a script of one's
// own. Each side of a round is a whole bench of its executable (its own
// database, fixtures and drip serve, built by its own code), run as a
// child `drip bench --json` of one round: two builds with different
// migrations can be compared, and neither side's setup runs in the
// other's process. The sides take turns: this one first in odd rounds,
// the base first in even ones (A B B A ...), so a drift of the machine
// over the sitting falls on both alike.

// CompareConfig says what to compare.
type CompareConfig struct {
	// This and Base are the two executables: this binary, and the one it
	// is compared with (for instance a build of main).
	This, Base string
	// Args are the bench flags both sides run with, as given (neither
	// --rounds, --json nor --compare).
	Args []string
	// Env is both sides' environment: this process's, less the variables
	// of --compare, --rounds and --json.
	Env    []string
	Rounds int
	Log    io.Writer // each side's progress, as it writes it
}

// Comparison is the outcome of a comparison.
type Comparison struct {
	This   string `json:"this"`
	Base   string `json:"base"`
	Rounds int    `json:"rounds"`
	// Benches are each side's report of each round, in the order they ran.
	Benches []SideBench `json:"benches"`
	// Pairs are each run of the benches (scenario, loop, concurrency)
	// summed up over the rounds, this side's figure over the base's.
	Pairs []Pair `json:"pairs"`
	// OK is true when every gate of every bench passed.
	OK bool `json:"ok"`
}

// SideBench is one side's bench of one round.
type SideBench struct {
	Round  int     `json:"round"`
	Side   string  `json:"side"` // "this" or "base"
	Report *Report `json:"report"`
}

// Pair is one run of both sides summed up over the rounds.
type Pair struct {
	Label       string `json:"label"` // the scenario, and its variant
	Mode        string `json:"mode"`
	Concurrency int    `json:"concurrency"`
	RatePercent int    `json:"rate_percent,omitempty"`
	// This and Base are each side's medians over the rounds, as a bench of
	// several rounds sums itself up (its of hot too, paired by round).
	This Summary `json:"this"`
	Base Summary `json:"base"`
	// Rounds is in how many rounds both sides ran it.
	Rounds int `json:"rounds"`
	// Ratio is the median over the rounds of this side's payouts/s over
	// the base's in the same round (replies/s for a run that pays
	// nothing, such as the ceiling); RatioMin and RatioMax its range.
	Ratio    float64 `json:"ratio"`
	RatioMin float64 `json:"ratio_min"`
	RatioMax float64 `json:"ratio_max"`
	// Ahead is in how many rounds this side's figure was the higher.
	Ahead int `json:"ahead"`
}

// Compare runs cfg.Rounds rounds, each a bench of both sides in turn.
// A side whose gate fails is reported (OK false) and the rounds go on; a
// side that gives no report (a usage error, a crash) ends the comparison
// with an error.
func Compare(ctx context.Context, cfg CompareConfig) (*Comparison, error) {
	c := &Comparison{This: cfg.This, Base: cfg.Base, Rounds: cfg.Rounds, OK: true}
	for round := 1; round <= cfg.Rounds; round++ {
		sides := []string{"this", "base"}
		if round%2 == 0 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			exe := cfg.This
			if side == "base" {
				exe = cfg.Base
			}
			fmt.Fprintf(cfg.Log, "bench: round %d of %d, %s: %s\n", round, cfg.Rounds, side, exe)
			rep, err := benchOnce(ctx, exe, cfg.Args, cfg.Env, cfg.Log)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s (%s): %w", round, side, exe, err)
			}
			c.OK = c.OK && rep.OK
			c.Benches = append(c.Benches, SideBench{Round: round, Side: side, Report: rep})
		}
	}
	c.Pairs = pairSides(c.Benches)
	return c, nil
}

// benchOnce runs exe's bench of one round and reads its JSON report. The
// bench exits 1 when a gate fails, having written its report; that is a
// report, not an error.
func benchOnce(ctx context.Context, exe string, args, env []string, log io.Writer) (*Report, error) {
	// No --rounds: one is each bench's default (the environment's is not
	// passed on), and a build from before --rounds can be compared too.
	cmd := exec.CommandContext(ctx, exe, append([]string{"bench", "--json"}, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, log, env
	// Stopped early, a side is interrupted as a terminal would, so that it
	// stops its drip serve and removes its database; killed only if it
	// has not within a minute.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	runErr := cmd.Run()
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted: no report is owed
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("no report on its output: %w", err))
	}
	if runErr != nil && rep.OK {
		return nil, fmt.Errorf("%w, with every gate passed", runErr)
	}
	return &rep, nil
}

// pairSides pairs each run of this side's benches with the base's of the
// same round, in the order the runs first ran. The growth run, which has
// no summary of its rounds either, is left out.
func pairSides(benches []SideBench) []Pair {
	type key struct {
		label, mode      string
		concurrency, pct int
	}
	type at struct {
		key
		round int
	}
	runs := map[string]map[at]*Result{"this": {}, "base": {}}
	sides := map[string][]*Result{}
	rounds := 0
	for _, b := range benches {
		rounds = max(rounds, b.Round)
		for _, r := range slices.Concat(b.Report.Ceiling, b.Report.Runs) {
			r.Round = b.Round // the comparison's round: each side's bench has one
			runs[b.Side][at{key{r.label(), r.Mode, r.Concurrency, r.RatePercent}, b.Round}] = r
			sides[b.Side] = append(sides[b.Side], r)
		}
	}
	base := map[key]Summary{}
	for _, s := range summarizeRounds(nil, sides["base"]) {
		base[key{s.label(), s.Mode, s.Concurrency, s.RatePercent}] = s
	}
	var out []Pair
	for _, this := range summarizeRounds(nil, sides["this"]) {
		k := key{this.label(), this.Mode, this.Concurrency, this.RatePercent}
		b, ok := base[k]
		if !ok {
			continue // this side's only: nothing to pair
		}
		p := Pair{Label: k.label, Mode: k.mode, Concurrency: k.concurrency, RatePercent: k.pct, This: this, Base: b}
		var ratios []float64
		for round := 1; round <= rounds; round++ {
			t, b := runs["this"][at{k, round}], runs["base"][at{k, round}]
			if t == nil || b == nil {
				continue
			}
			p.Rounds++
			if tf, bf := t.figure(), b.figure(); bf > 0 {
				ratios = append(ratios, tf/bf)
				if tf > bf {
					p.Ahead++
				}
			}
		}
		if len(ratios) > 0 {
			p.Ratio, p.RatioMin, p.RatioMax = median(ratios), slices.Min(ratios), slices.Max(ratios)
		}
		out = append(out, p)
	}
	return out
}

// figure is what a comparison sets side by side: payouts a second, or
// replies a second for a run that pays nothing (the ceiling).
func (run *Result) figure() float64 { return figure(run.PayoutsPerS, run.RepliesPerS) }

func figure(payouts, replies float64) float64 {
	if payouts > 0 {
		return payouts
	}
	return replies
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error { return writeJSON(w, c) }

// WriteTable writes each bench's runs in the order they ran, then the
// pairs, and the gates that failed.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "drip bench --compare: this %s against base %s, %d rounds, this first in odd rounds\n\n", c.This, c.Base, c.Rounds)
	const head = "%-6s %-5s %-22s %-9s %4s %9s %9s %7s %8s %8s  %s\n"
	fmt.Fprintf(w, head, "round", "side", "scenario", "loop", "c", "payouts/s", "replies/s", "ceiling", "p99 ms", "CPU/1k", "gates")
	for _, b := range c.Benches {
		for _, r := range b.Report.all() {
			fmt.Fprintf(w, "%-6d %-5s %-22s %-9s %4d %9.0f %9.0f %7.3f %8.2f %8.3f  %s\n", b.Round, b.Side, r.label(), r.loop(),
				r.Concurrency, r.PayoutsPerS, r.RepliesPerS, r.CeilingRatio, r.Latency.P99, r.CPUPer1kPayouts, gateSummary(r.Gates))
		}
		if gates := gateSummary(b.Report.Gates); gates != "ok" {
			fmt.Fprintf(w, "%-6d %-5s the bench's own gates: %s\n", b.Round, b.Side, gates)
		}
	}
	for _, b := range c.Benches {
		b.Report.writeFailures(w, fmt.Sprintf("round %d %s: ", b.Round, b.Side))
	}
	fmt.Fprintf(w, "\nover the rounds, medians; this/base: this side's payouts/s (replies/s for the ceiling) over the base's\n"+
		"in the same round, the median and its range; ahead: rounds in which this side's was the higher;\n"+
		"of hot: payouts/s over hot's of the same side in the same round\n")
	const pairHead = "%-22s %-9s %4s %6s %9s %9s %9s %11s %5s %10s %10s %8s %8s %8s %8s\n"
	fmt.Fprintf(w, pairHead, "scenario", "loop", "c", "rounds", "this /s", "base /s", "this/base", "range", "ahead",
		"this ratio", "base ratio", "this p99", "base p99", "this hot", "base hot")
	for _, p := range c.Pairs {
		run := Result{Mode: p.Mode, RatePercent: p.RatePercent}
		ofHot := func(s Summary) string {
			if s.OfHot == 0 {
				return "-"
			}
			return fmt.Sprintf("%.3f", s.OfHot)
		}
		fmt.Fprintf(w, "%-22s %-9s %4d %6d %9.0f %9.0f %9.3f %11s %5s %10.3f %10.3f %8.2f %8.2f %8s %8s\n",
			p.Label, run.loop(), p.Concurrency, p.Rounds, p.This.figure(), p.Base.figure(), p.Ratio,
			fmt.Sprintf("%.3f-%.3f", p.RatioMin, p.RatioMax), fmt.Sprintf("%d/%d", p.Ahead, p.Rounds),
			p.This.CeilingRatio, p.Base.CeilingRatio, p.This.P99, p.Base.P99, ofHot(p.This), ofHot(p.Base))
	}
	fmt.Fprintln(w)
	writeVerdict(w, c.OK)
	return nil
}

// figure is the summary's median payouts/s, or replies/s if it paid
// nothing.
func (s Summary) figure() float64 { return figure(s.PayoutsPerS, s.RepliesPerS) }

// label is the summary's run's name in a table.
func (s Summary) label() string {
	run := Result{Scenario: s.Scenario, Variant: s.Variant}
	return run.label()
}

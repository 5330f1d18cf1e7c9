package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/dripfaucet/drip/internal/drip"
)

// Scenarios are the scenarios of issue 5, in its order, issue 12's and
// issue 17's.
var Scenarios = []string{"hot", "spread", "v2-idempotent", "retry-storm", "over-limit", "run-dry", "mixed", "batch", "webhooks"}

// ScenarioHelp describes the scenarios for drip bench -h.
const ScenarioHelp = `hot: one faucet paying the recipients round-robin
spread: many faucets, each with its own key, paying the recipients
v2-idempotent: hot through v2 /api/v2/send, each send a new idempotency key
retry-storm: v2 sends, each idempotency key sent 4 times: the first, a retry at once
  (while the first is in flight), two more after the first answered; 3 in 4 are replays
over-limit: an owner per-recipient send limit refuses about 20% of sends (status 450)
run-dry: a faucet funded for a fixed number of payouts paid until empty, then 402
mixed: 70% sends, 20% /payouts count=100, 10% /getbalance on one faucet
batch: hot, then v2 /send/batch in batches of 50 and of 500 (same run, closed loops only):
  payouts/s against hot's and against the no-op ceiling's replies/s
webhooks: hot from a faucet without a webhook endpoint, then from one whose endpoint takes
  payout.sent on a receiver in the bench (same run); open loops with it for the delivery
  lag; then drip serve is stopped, a backlog of --webhook-backlog deliveries is made and
  a new drip serve's worker drains it (restarts drip serve: run it last)`

// scenario is a workload the bench measures.
type scenario struct {
	name string
	// sendStatuses are the statuses a send may get in this scenario; reads
	// must always get 200.
	sendStatuses []int
	setup        func(ctx context.Context, b *bench) error
	// begin prepares one run that may send up to about expect requests.
	begin func(ctx context.Context, b *bench, expect int64) (*workload, error)
	// run, when set, runs the scenario instead of runScenario's closed
	// loops then open loops.
	run func(ctx context.Context, b *bench) error
	// serveArgs are flags drip serve needs for the scenario.
	serveArgs []string
	// close releases what setup made, once the bench is over.
	close func()
}

// workload is one run of a scenario.
type workload struct {
	next generator
	// faucets are those the run pays from, whose payouts the gates count.
	faucets []*faucetFix
	// copies is, for v2 sends with idempotency keys, how many times each key
	// is sent; 0 for v1 sends, which have none.
	copies int
	// check adds the scenario's own gates, once the run is over.
	check func(ctx context.Context, o *outcome) []Gate
}

func newScenario(name string) *scenario {
	switch name {
	case "hot":
		return hotScenario()
	case "spread":
		return spreadScenario()
	case "v2-idempotent":
		return v2IdempotentScenario()
	case "retry-storm":
		return retryStormScenario()
	case "over-limit":
		return overLimitScenario()
	case "run-dry":
		return runDryScenario()
	case "mixed":
		return mixedScenario()
	case "webhooks":
		return webhooksScenario()
	case "batch":
		return batchScenario()
	}
	panic("bench: no scenario " + name) // validate rejects unknown names
}

// hotScenario is one faucet, one hot balance row, paying every recipient in turn.
func hotScenario() *scenario {
	var f *faucetFix
	return &scenario{
		name: "hot", sendStatuses: []int{200},
		setup: func(ctx context.Context, b *bench) (err error) {
			f, err = b.fix.faucet(ctx, "hot", funding)
			return err
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			return hotWorkload(b, f), nil
		},
	}
}

func hotWorkload(b *bench, f *faucetFix) *workload {
	rs := b.fix.recipients
	return &workload{
		faucets: []*faucetFix{f},
		next:    func(seq uint64, _ bool) request { return f.send(rs[seq%uint64(len(rs))]) },
	}
}

// spreadScenario spreads the sends over many faucets, each its own row.
func spreadScenario() *scenario {
	var fs []*faucetFix
	return &scenario{
		name: "spread", sendStatuses: []int{200},
		setup: func(ctx context.Context, b *bench) error {
			for range b.cfg.SpreadFaucets {
				f, err := b.fix.faucet(ctx, "spread", funding)
				if err != nil {
					return err
				}
				fs = append(fs, f)
			}
			return nil
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			rs := b.fix.recipients
			return &workload{
				faucets: fs,
				next: func(seq uint64, _ bool) request {
					return fs[seq%uint64(len(fs))].send(rs[seq%uint64(len(rs))])
				},
			}, nil
		},
	}
}

// overLimitPer is how many consecutive sends go to one recipient of one
// faucet whose owner allows overLimitPer-1 payouts per recipient: one in
// overLimitPer (20%) is refused with 450.
const overLimitPer = 5

// overLimitScenario: every run gets new faucets with a per-recipient send
// limit (D41), enough of them that no recipient is sent to more than
// overLimitPer times by one faucet.
func overLimitScenario() *scenario {
	return &scenario{
		name: "over-limit", sendStatuses: []int{200, 450},
		setup: func(ctx context.Context, b *bench) error { return nil },
		begin: func(ctx context.Context, b *bench, expect int64) (*workload, error) {
			rs := b.fix.recipients
			perFaucet := int64(overLimitPer * len(rs))
			n := int(expect/perFaucet) + 1
			limit := []drip.Limit{{Coin: coin, Per: drip.PerRecipient, WindowSeconds: 7 * 86400, MaxCount: overLimitPer - 1}}
			var fs []*faucetFix
			for range n {
				f, err := b.fix.faucet(ctx, "over-limit", funding)
				if err != nil {
					return nil, err
				}
				if _, f.f, err = b.app.Faucets.SetLimits(ctx, f.f.ID, limit); err != nil {
					return nil, err
				}
				fs = append(fs, f)
			}
			return &workload{
				faucets: fs,
				next: func(seq uint64, _ bool) request {
					group := seq / overLimitPer
					return fs[(group/uint64(len(rs)))%uint64(len(fs))].send(rs[group%uint64(len(rs))])
				},
				check: func(ctx context.Context, o *outcome) []Gate { return []Gate{overLimitGate(o, len(rs)*len(fs))} },
			}, nil
		},
	}
}

// overLimitGate checks the send limit held exactly: of each group of
// overLimitPer sends to one recipient of one faucet, min(sent, limit) paid.
func overLimitGate(o *outcome, groups int) Gate {
	type tally struct{ sent, paid int }
	byGroup := map[uint64]*tally{}
	for _, s := range o.samples {
		g := (s.seq / overLimitPer) % uint64(groups)
		t := byGroup[g]
		if t == nil {
			t = &tally{}
			byGroup[g] = t
		}
		t.sent++
		if s.status == 200 {
			t.paid++
		}
	}
	var bad []string
	for g, t := range byGroup {
		if t.paid != min(t.sent, overLimitPer-1) && len(bad) < 3 {
			bad = append(bad, fmt.Sprintf("group %d: %d of %d sends paid", g, t.paid, t.sent))
		}
	}
	return gateFrom(fmt.Sprintf("send limit: %d of every %d sends to a recipient paid", overLimitPer-1, overLimitPer),
		len(bad) == 0, fmt.Sprint(bad))
}

// runDryScenario: each run gets a new faucet funded for DryPayouts and pays
// from it until it is empty; the warm-up pays from a well-funded faucet.
func runDryScenario() *scenario {
	var warm *faucetFix
	return &scenario{
		name: "run-dry", sendStatuses: []int{200, 402},
		setup: func(ctx context.Context, b *bench) (err error) {
			warm, err = b.fix.faucet(ctx, "run-dry-warm-up", funding)
			return err
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			funded := b.cfg.DryPayouts * amount
			dry, err := b.fix.faucet(ctx, "run-dry", funded)
			if err != nil {
				return nil, err
			}
			rs := b.fix.recipients
			return &workload{
				faucets: []*faucetFix{warm, dry},
				next: func(seq uint64, isWarm bool) request {
					f := dry
					if isWarm {
						f = warm
					}
					return f.send(rs[seq%uint64(len(rs))])
				},
				check: func(ctx context.Context, o *outcome) []Gate {
					left, err := b.app.Store.BalanceGet(ctx, dry.f.AccountID, coin)
					if err != nil {
						return []Gate{gateFrom("run-dry: paid until empty", false, err.Error())}
					}
					var paid, refused int64
					for _, s := range o.samples {
						switch {
						case s.warm:
						case s.status == 200:
							paid++
						case s.status == 402:
							refused++
						}
					}
					ok := paid*amount+left == funded && (refused == 0 || left < amount)
					return []Gate{gateFrom("run-dry: paid until empty, then 402", ok,
						fmt.Sprintf("funded %d, paid %d, refused %d, left %d", funded, paid*amount, refused, left))}
				},
			}, nil
		},
	}
}

// mixedScenario interleaves sends with the reads a faucet makes.
func mixedScenario() *scenario {
	var f *faucetFix
	return &scenario{
		name: "mixed", sendStatuses: []int{200},
		setup: func(ctx context.Context, b *bench) (err error) {
			f, err = b.fix.faucet(ctx, "mixed", funding)
			return err
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			rs := b.fix.recipients
			return &workload{
				faucets: []*faucetFix{f},
				next: func(seq uint64, _ bool) request {
					switch seq % 10 {
					case 7, 8:
						return f.payouts()
					case 9:
						return f.balance()
					default:
						return f.send(rs[seq%uint64(len(rs))])
					}
				},
			}, nil
		},
	}
}

// expected reports whether a reply's status belongs to the scenario.
func (sc *scenario) expected(s sample) bool {
	if s.op == opSend {
		return slices.Contains(sc.sendStatuses, s.status)
	}
	return s.status == 200
}

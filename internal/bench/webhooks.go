package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

// The webhooks scenario (issue 12: delivery must not slow payouts). At
// each concurrency, hot sends from a faucet without a webhook endpoint,
// then from one whose endpoint takes payout.sent on the bench's own
// receiver, so the two throughputs are from the same run; after each run
// with the endpoint, every payout's delivery is awaited. Then the open
// loops send at a fixed rate, a percentage of the peak with the endpoint,
// for the delivery lag. Last, a backlog: drip serve is stopped, payouts
// are made in the bench's own process (whose delivery worker does not
// run), each fanned out to a pending delivery, and a new drip serve's
// worker drains them.

// webhookStall is how long the bench waits without a new delivery before
// it calls the missing ones lost.
const webhookStall = 30 * time.Second

// WebhookRun is what the receiver got of a run with the endpoint.
type WebhookRun struct {
	// Paid counts the run's payouts, warm-up included: each must arrive.
	Paid       int64 `json:"paid"`
	Delivered  int64 `json:"delivered"`  // of them, received and verified at least once
	Duplicates int64 `json:"duplicates"` // deliveries of a payout that had arrived before
	// Behind is how many had not arrived when the run's last reply came,
	// and CatchUpS how long after that reply the last one arrived.
	Behind   int64   `json:"behind_at_last_reply"`
	CatchUpS float64 `json:"catch_up_s"`
	// Lag is, over the measured payouts, the time from a send's reply
	// reaching the bench to its payout.sent reaching the receiver.
	Lag Latency `json:"lag_ms"`
	// WithoutRatio is the run's payouts/s over that of the run without an
	// endpoint just before it, at the same concurrency (closed loops).
	WithoutRatio float64 `json:"without_endpoint_ratio,omitempty"`
}

// Drain is the webhooks scenario's backlog and how fast it went.
type Drain struct {
	Backlog int64   `json:"backlog"`
	BuildS  float64 `json:"build_s"` // paying it with drip serve stopped
	// DrainS is from starting drip serve to the last payout's first
	// arrival, and PerS the backlog over it; FirstToLast is from the first
	// arrival, without drip serve's start.
	DrainS          float64 `json:"drain_s"`
	PerS            float64 `json:"per_s"`
	FirstToLastS    float64 `json:"first_to_last_s"`
	FirstToLastPerS float64 `json:"first_to_last_per_s"`
	Delivered       int64   `json:"delivered"`
	Duplicates      int64   `json:"duplicates"`
	Gates           []Gate  `json:"gates"`
}

func webhooksScenario() *scenario {
	w := &webhooks{}
	return &scenario{
		name: "webhooks", sendStatuses: []int{200},
		// The receiver is on loopback, over http (D53's development flag).
		serveArgs: []string{"--webhook-allow-insecure"},
		setup:     w.setup,
		run:       w.run,
		close: func() {
			if w.rcv != nil {
				w.rcv.close()
			}
		},
	}
}

type webhooks struct {
	without, with *faucetFix // a faucet without an endpoint, and one with
	rcv           *receiver
	last          *WebhookRun // of the last run with the endpoint, for run to attach
}

func (w *webhooks) setup(ctx context.Context, b *bench) (err error) {
	if w.rcv, err = newReceiver(); err != nil {
		return err
	}
	if w.without, err = b.fix.faucet(ctx, "webhooks-without", funding); err != nil {
		return err
	}
	if w.with, err = b.fix.faucet(ctx, "webhooks-with", funding); err != nil {
		return err
	}
	// As an owner would from the console (D54): the bench holds the store.
	_, secret, err := b.app.Endpoints.Create(ctx, w.with.f.ID, w.rcv.url, []string{drip.EventPayoutSent})
	if err != nil {
		return fmt.Errorf("webhook endpoint: %w", err)
	}
	w.rcv.start(secret, w.with.f.ID)
	return nil
}

// run is the whole scenario: closed loops without and with the endpoint,
// open loops with it, the backlog.
func (w *webhooks) run(ctx context.Context, b *bench) error {
	without := &scenario{name: "webhooks", sendStatuses: []int{200}, begin: w.beginWithout}
	with := &scenario{name: "webhooks", sendStatuses: []int{200}, begin: w.beginWith}
	var peak float64
	for _, c := range b.cfg.Concurrency {
		off, err := b.runScenarioOnce(ctx, without, 0, runSpec{scenario: "webhooks", variant: "off", mode: "closed", concurrency: c})
		if err != nil {
			return err
		}
		on, err := b.runScenarioOnce(ctx, with, 0, runSpec{scenario: "webhooks", variant: "on", mode: "closed", concurrency: c})
		if err != nil {
			return err
		}
		if on.Webhooks = w.last; off.PayoutsPerS > 0 {
			on.Webhooks.WithoutRatio = on.PayoutsPerS / off.PayoutsPerS
		}
		peak = max(peak, on.RepliesPerS)
	}
	for _, p := range b.cfg.RatePercents {
		rate := peak * float64(p) / 100
		if rate < 1 {
			b.logf("webhooks: no closed-loop peak to take %d%% of; open loop skipped", p)
			continue
		}
		spec := runSpec{scenario: "webhooks", variant: "on", mode: "open", concurrency: b.maxInFlight(), ratePercent: p, rate: rate}
		run, err := b.runScenarioOnce(ctx, with, 0, spec)
		if err != nil {
			return err
		}
		run.Webhooks = w.last
	}
	return w.drain(ctx, b)
}

func (w *webhooks) beginWithout(_ context.Context, b *bench, _ int64) (*workload, error) {
	wl := hotWorkload(b, w.without)
	mark := w.rcv.counts()
	wl.check = func(context.Context, *outcome) []Gate {
		n := w.rcv.counts().since(mark)
		return []Gate{strayGate(n)}
	}
	return wl, nil
}

func (w *webhooks) beginWith(_ context.Context, b *bench, _ int64) (*workload, error) {
	wl := hotWorkload(b, w.with)
	mark := w.rcv.counts()
	wl.check = func(ctx context.Context, o *outcome) []Gate {
		var ids []int64
		var lastReply time.Time
		for _, s := range o.samples {
			if s.op == opSend && s.status == 200 && s.payoutID > 0 {
				ids = append(ids, s.payoutID)
				if s.done.After(lastReply) {
					lastReply = s.done
				}
			}
		}
		missing, err := w.rcv.await(ctx, ids, webhookStall)
		n := w.rcv.counts().since(mark)
		fig := &WebhookRun{Paid: int64(len(ids)), Delivered: int64(len(ids) - missing), Duplicates: n.duplicates}
		var lags []time.Duration
		var lastArrival time.Time
		i := 0
		arrived := w.rcv.arrivals(ids)
		for _, s := range o.samples {
			if s.op != opSend || s.status != 200 || s.payoutID <= 0 {
				continue
			}
			at := arrived[i]
			i++
			switch {
			case at.IsZero():
				continue
			case at.After(lastReply):
				fig.Behind++
			}
			if at.After(lastArrival) {
				lastArrival = at
			}
			if !s.warm {
				lags = append(lags, at.Sub(s.done))
			}
		}
		fig.Lag = percentiles(lags)
		if lastArrival.After(lastReply) {
			fig.CatchUpS = lastArrival.Sub(lastReply).Seconds()
		}
		w.last = fig
		return []Gate{deliveredGate(fig.Paid, int64(missing), err), verifiedGate(n), strayGate(n)}
	}
	return wl, nil
}

func deliveredGate(paid, missing int64, err error) Gate {
	return gateFrom("every payout delivered at least once", missing == 0 && err == nil,
		fmt.Sprintf("%d of %d payouts not delivered (%v within %s)", missing, paid, err, webhookStall))
}

func verifiedGate(n receiverCounts) Gate {
	return gateFrom("every delivery verified (both signatures)", n.refused == 0, fmt.Sprintf("%d deliveries refused", n.refused))
}

func strayGate(n receiverCounts) Gate {
	return gateFrom("deliveries only of the endpoint's faucet's payout.sent", n.stray == 0, fmt.Sprintf("%d other deliveries", n.stray))
}

// drain stops drip serve, pays Backlog payouts from the faucet with the
// endpoint in the bench's own process (each fanned out to a pending
// delivery by the events trigger, and delivered by no one), starts a new
// drip serve and times its worker until the receiver has every one.
func (w *webhooks) drain(ctx context.Context, b *bench) error {
	n := b.cfg.WebhookBacklog
	d := &Drain{Backlog: int64(n)}
	b.report.Drain = d
	b.logf("webhooks: stopping drip serve to build a backlog of %d deliveries", n)
	stopErr := b.srv.stop()
	b.srv = nil
	b.client.close()
	d.Gates = append(d.Gates, gateFrom("drip serve stopped cleanly on SIGTERM", stopErr == nil, errText(stopErr)))

	start := time.Now()
	ids, err := w.payInProcess(ctx, b, n)
	if err != nil {
		return fmt.Errorf("webhooks backlog: %w", err)
	}
	b.recipientBalances = nil // paid behind the gates' cache
	d.BuildS = time.Since(start).Seconds()
	pending, _, err := b.app.Store.OutboxBacklog(ctx, store.DeliveryWebhook)
	if err != nil {
		return err
	}
	d.Gates = append(d.Gates, gateFrom("the outbox holds one pending delivery a payout", pending == int64(n),
		fmt.Sprintf("%d pending deliveries for %d payouts", pending, n)))
	b.logf("webhooks: %d payouts made in %.1fs, %d deliveries pending; starting drip serve", n, d.BuildS, pending)

	mark := w.rcv.counts()
	started := time.Now()
	if b.srv, err = startServer(ctx, b.cfg.Executable, b.serveArgs(), b.cfg.Log); err != nil {
		return err
	}
	b.client = newClient(b.srv.base, b.maxInFlight())
	missing, waitErr := w.rcv.await(ctx, ids, webhookStall)
	var first, last time.Time
	for _, at := range w.rcv.arrivals(ids) {
		if at.IsZero() {
			continue
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		last = later(last, at)
	}
	if !last.IsZero() {
		d.DrainS, d.FirstToLastS = last.Sub(started).Seconds(), last.Sub(first).Seconds()
	}
	if missing == 0 && d.DrainS > 0 {
		d.PerS = float64(n) / d.DrainS
		if d.FirstToLastS > 0 {
			d.FirstToLastPerS = float64(n-1) / d.FirstToLastS
		}
	}
	// The receiver answers before the worker records: wait for the record.
	empty, emptyErr := awaitEmptyOutbox(ctx, b)
	c := w.rcv.counts().since(mark)
	d.Delivered, d.Duplicates = int64(n-missing), c.duplicates
	b.logf("webhooks: drained %d deliveries in %.2fs from starting drip serve (%.0f/s), %d duplicates", d.Delivered, d.DrainS, d.PerS, d.Duplicates)
	errs, lines := b.srv.errorsSince(0)
	d.Gates = append(d.Gates,
		deliveredGate(int64(n), int64(missing), waitErr), verifiedGate(c), strayGate(c),
		gateFrom("the outbox is empty once drained", empty == 0 && emptyErr == nil, fmt.Sprintf("%d pending (%v)", empty, emptyErr)),
		gateFrom("server logged no error", errs == 0, fmt.Sprintf("%d ERROR lines; last:\n%s", errs, lines)),
		b.reconcile(ctx))
	return nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// payInProcess pays n payouts from the faucet with the endpoint through
// the bench's own ledger (group-committed, as drip serve's), and returns
// their payout ids.
func (w *webhooks) payInProcess(ctx context.Context, b *bench, n int) ([]int64, error) {
	const workers = 256
	rs := b.fix.recipients
	ids := make([]int64, n)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				r := rs[i%len(rs)]
				rec, err := b.app.Ledger.Pay(ctx, &ledger.Payment{Faucet: w.with.f, Recipient: r.user, To: r.user.Username, Coin: coin, Amount: amount})
				if err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					return
				}
				ids[i] = rec.PayoutID
			}
		})
	}
	wg.Wait()
	return ids, errors.Join(first, ctx.Err())
}

// awaitEmptyOutbox waits until no delivery is pending, for webhookStall at most.
func awaitEmptyOutbox(ctx context.Context, b *bench) (int64, error) {
	deadline := time.Now().Add(webhookStall)
	for {
		pending, _, err := b.app.Store.OutboxBacklog(ctx, store.DeliveryWebhook)
		if err != nil || pending == 0 || time.Now().After(deadline) {
			return pending, err
		}
		select {
		case <-ctx.Done():
			return pending, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

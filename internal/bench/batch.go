package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The batch scenario (issue 17): hot's payouts sent through v2
// /send/batch (D61), in batches of 50 and of 500, against hot itself in
// the same run. At each concurrency, hot runs first, then each batch size
// from a faucet of its own, so the three figures are from one server in
// one state; each batch run's payouts/s is set over hot's and over the
// no-op ceiling's replies/s. Closed loops only: a batch's arrival rate
// says little by itself. drip serve runs with a 30 s request deadline
// (serveArgs) for every scenario of the bench; no other figure depends
// on it.

// batchSizes are the batch sizes the scenario measures.
var batchSizes = []int{50, 500}

// BatchRun is a batch run's throughput against hot's and the ceiling's.
type BatchRun struct {
	Size int `json:"size"` // items a batch
	// HotRatio is the run's payouts/s over that of hot just before it, at
	// the same concurrency.
	HotRatio float64 `json:"hot_ratio"`
	// CeilingRatio is the run's payouts/s over the no-op ceiling's
	// replies/s at the same concurrency: a payout's cost against a
	// request's that does nothing.
	CeilingRatio float64 `json:"ceiling_payout_ratio"`
	// Items counts the measured batches' items, and Refused those not paid.
	Items   int64 `json:"items"`
	Refused int64 `json:"refused"`
}

type batches struct {
	hot   *faucetFix
	sized map[int]*faucetFix // a faucet and v2 key per batch size
	// lastItems and lastRefused are the items of the last run's batches
	// and how many were not paid, set by its gate.
	lastItems, lastRefused int64
}

func batchScenario() *scenario {
	bs := &batches{sized: map[int]*faucetFix{}}
	return &scenario{
		name: "batch", sendStatuses: []int{200},
		// 64 clients each sending 500 sends keep 32,000 payouts queued:
		// more than drip serve pays within the default 5 s deadline of a
		// request (D61), which would answer the last items of each batch
		// 503 unavailable.
		serveArgs: []string{"--request-timeout=30s"},
		setup:     bs.setup,
		run:       bs.run,
	}
}

func (bs *batches) setup(ctx context.Context, b *bench) (err error) {
	if bs.hot, err = b.fix.faucet(ctx, "batch-hot", funding); err != nil {
		return err
	}
	for _, n := range batchSizes {
		f, err := b.fix.faucet(ctx, fmt.Sprintf("batch-%d", n), funding)
		if err != nil {
			return err
		}
		if err := b.fix.mintSendKey(ctx, f); err != nil {
			return err
		}
		bs.sized[n] = f
	}
	return nil
}

// run is the whole scenario: at each concurrency, hot, then each batch
// size.
func (bs *batches) run(ctx context.Context, b *bench) error {
	if len(b.cfg.RatePercents) > 0 {
		b.logf("batch: closed loops only; the open-loop rates are not run")
	}
	hot := &scenario{name: "batch", sendStatuses: []int{200},
		begin: func(_ context.Context, b *bench, _ int64) (*workload, error) { return hotWorkload(b, bs.hot), nil }}
	for _, c := range b.cfg.Concurrency {
		h, err := b.runScenarioOnce(ctx, hot, 0, runSpec{scenario: "batch", variant: "hot", mode: "closed", concurrency: c})
		if err != nil {
			return err
		}
		for _, n := range batchSizes {
			sized := &scenario{name: "batch", sendStatuses: []int{200},
				begin: func(_ context.Context, b *bench, _ int64) (*workload, error) { return bs.workload(b, n), nil }}
			run, err := b.runScenarioOnce(ctx, sized, 0, runSpec{scenario: "batch", variant: strconv.Itoa(n), mode: "closed", concurrency: c})
			if err != nil {
				return err
			}
			fig := &BatchRun{Size: n}
			if h.PayoutsPerS > 0 {
				fig.HotRatio = run.PayoutsPerS / h.PayoutsPerS
			}
			if b.ceiling[c] > 0 {
				fig.CeilingRatio = run.PayoutsPerS / b.ceiling[c]
			}
			fig.Items, fig.Refused = bs.lastItems, bs.lastRefused
			run.Batch = fig
		}
	}
	return nil
}

// workload sends batches of n sends from the faucet of size n, to the
// recipients round-robin, each send under an idempotency key of its own.
func (bs *batches) workload(b *bench, n int) *workload {
	f, rs, prefix := bs.sized[n], b.fix.recipients, b.fix.idempotencyPrefix()
	return &workload{
		faucets: []*faucetFix{f},
		next: func(seq uint64, _ bool) request {
			var body strings.Builder
			body.WriteString(`{"items":[`)
			for i := range n {
				k := seq*uint64(n) + uint64(i)
				if i > 0 {
					body.WriteByte(',')
				}
				// Usernames are a-z, 0-9 and _ (D10): no JSON escaping needed.
				body.WriteString(`{"idempotency_key":"` + prefix + strconv.FormatUint(k, 10) + `","to":"` + rs[k%uint64(len(rs))].user.Username +
					`","amount":` + strconv.Itoa(amount) + `,"currency":"` + coin + `"}`)
			}
			body.WriteString(`]}`)
			return request{op: opBatch, path: "/api/v2/send/batch", body: body.String(), authorization: f.bearer, items: n}
		},
		check: func(_ context.Context, o *outcome) []Gate { return []Gate{bs.itemsGate(o, n)} },
	}
}

// itemsGate checks that every batch answered 200 (the warm-up's too) had
// as many items as it sent, each paid: the faucet is funded far beyond
// the run, and every key is new, so none is refused or replayed.
func (bs *batches) itemsGate(o *outcome, n int) Gate {
	var items, refused, short int64
	var first string
	for _, s := range o.samples {
		if s.op != opBatch || s.status != 200 {
			continue
		}
		if s.batch == nil || s.batch.items != n {
			short++
			continue
		}
		items += int64(s.batch.items)
		bad := int64(s.batch.items - len(s.batch.paid))
		refused += bad
		if bad > 0 && first == "" {
			first = s.batch.firstRefusal
		}
	}
	bs.lastItems, bs.lastRefused = items, refused
	return gateFrom("every batch item answered, and paid", refused == 0 && short == 0,
		fmt.Sprintf("%d of %d items not paid (first: %s); %d batches answered without their %d items", refused, items, first, short, n))
}

// batchReply is what the bench reads of a /send/batch reply.
type batchReply struct {
	items        int     // items answered
	paid         []int64 // the payout ids of the items paid now
	replayed     int     // items answered as replays
	firstRefusal string  // the first item not paid: "<status> <code>"
}

// parseBatchReply reads a /send/batch reply of n items: the envelope's
// status and each item's outcome.
func parseBatchReply(body []byte, n int) reply {
	var v struct {
		Status *int `json:"status"`
		Data   *struct {
			Items []struct {
				Success  bool `json:"success"`
				Status   int  `json:"status"`
				Replayed bool `json:"replayed"`
				Data     *struct {
					PayoutID int64 `json:"payout_id"`
				} `json:"data"`
				Error *struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"items"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &v) != nil || v.Status == nil {
		return reply{status: statusGarbled}
	}
	r := reply{status: *v.Status}
	if v.Data == nil {
		return r
	}
	br := &batchReply{items: len(v.Data.Items), paid: make([]int64, 0, n)}
	for _, it := range v.Data.Items {
		switch {
		case it.Success && it.Replayed:
			br.replayed++
		case it.Success && it.Data != nil && it.Data.PayoutID > 0:
			br.paid = append(br.paid, it.Data.PayoutID)
		case br.firstRefusal == "":
			code := ""
			if it.Error != nil {
				code = it.Error.Code
			}
			br.firstRefusal = fmt.Sprintf("%d %s", it.Status, code)
		}
	}
	r.batch = br
	return r
}

// writeBatches writes each batch run's payouts/s against hot's and the
// ceiling's.
func (r *Report) writeBatches(w io.Writer) {
	var headed bool
	for _, run := range r.Runs {
		fig := run.Batch
		if fig == nil {
			continue
		}
		if !headed {
			fmt.Fprintf(w, "\nbatch: payouts/s of /send/batch against hot's (same run, same concurrency) and the no-op ceiling's replies/s\n")
			headed = true
		}
		fmt.Fprintf(w, "batch %d c=%d: %.0f payouts/s = %.2f× hot, %.2f× the ceiling; %d items, %d not paid\n",
			fig.Size, run.Concurrency, run.PayoutsPerS, fig.HotRatio, fig.CeilingRatio, fig.Items, fig.Refused)
	}
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// Gate is one correctness check of a run: Status is "pass" or "fail"
// (with what failed in Detail).
type Gate struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func gateFrom(name string, ok bool, detail string) Gate {
	if ok {
		return Gate{Name: name, Status: "pass"}
	}
	return Gate{Name: name, Status: "fail", Detail: detail}
}

// ledgerView is the balances a run moves: its faucets' and every recipient's.
type ledgerView struct {
	faucets    []int64
	recipients []int64
}

func (b *bench) ledgerView(ctx context.Context, faucets []*faucetFix) (*ledgerView, error) {
	v := &ledgerView{recipients: b.recipientBalances}
	for _, f := range faucets {
		n, err := b.app.Store.BalanceGet(ctx, f.f.AccountID, coin)
		if err != nil {
			return nil, err
		}
		v.faucets = append(v.faucets, n)
	}
	if v.recipients != nil {
		return v, nil
	}
	// Read in parallel: the full bench has 10,000 recipients.
	rs := b.fix.recipients
	v.recipients = make([]int64, len(rs))
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(rs) && errs[w] == nil; i += len(errs) {
				v.recipients[i], errs[w] = b.app.Store.BalanceGet(ctx, rs[i].user.AccountID, coin)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	b.recipientBalances = v.recipients
	return v, nil
}

// gates checks a run once its last reply is in: every reply is one the
// scenario allows; every paid payout is one new payout row and every payout
// row a paid payout; what the faucets lost the recipients gained; no
// balance went negative; no payout id was acknowledged for two payouts;
// drip admin reconcile passes; the server logged no error. A paid payout is
// a v1 send answered 200, or an idempotency key with a copy answered 200
// (issue 5's "payouts = distinct idempotency keys"); with keys, keyGates
// check their copies too.
func (b *bench) gates(ctx context.Context, sc *scenario, wl *workload, o *outcome, before *ledgerView, since time.Time, errMark int64) []Gate {
	var gs []Gate
	unexpected := map[string]int{}
	var ids []int64 // one a paid payout
	for _, s := range o.samples {
		if !sc.expected(s) {
			unexpected[fmt.Sprintf("%s %s", s.op, statusName(s.status))]++
		}
		if s.op == opSend && s.status == 200 && s.idem == 0 {
			ids = append(ids, s.payoutID)
		}
		if s.op == opBatch && s.batch != nil {
			ids = append(ids, s.batch.paid...)
		}
	}
	keys := tallyKeys(o.samples)
	for _, t := range keys {
		ids = append(ids, t.payoutID)
	}
	paid := int64(len(ids))
	rowsGate, paidText := "paid sends = new payout rows", "sends answered 200"
	if wl.copies > 0 {
		rowsGate, paidText = "payouts = distinct idempotency keys", "idempotency keys answered 200"
	}
	gs = append(gs, gateFrom("every reply has an expected status", len(unexpected) == 0, fmt.Sprint(unexpected)))
	if n, lines := b.srv.errorsSince(errMark); n > 0 {
		gs = append(gs, gateFrom("server logged no error", false, fmt.Sprintf("%d ERROR lines; last:\n%s", n, lines)))
	} else {
		gs = append(gs, gateFrom("server logged no error", true, ""))
	}
	if len(wl.faucets) == 0 {
		return gs // the ceiling: nothing was paid
	}

	var rows, rowSum int64
	for _, f := range wl.faucets {
		n, sum, err := b.app.Store.PayoutWindow(ctx, &store.PayoutWindowParams{FaucetID: f.f.ID, Since: since})
		if err != nil {
			return append(gs, gateFrom(rowsGate, false, err.Error()))
		}
		rows, rowSum = rows+n, rowSum+sum
	}
	gs = append(gs, gateFrom(rowsGate, rows == paid, fmt.Sprintf("%d %s, %d payout rows", paid, paidText, rows)))

	b.recipientBalances = nil // read them afresh
	after, err := b.ledgerView(ctx, wl.faucets)
	if err != nil {
		return append(gs, gateFrom("faucet debits = recipient credits", false, err.Error()))
	}
	var debits, credits int64
	negative := []string{}
	for i, f := range wl.faucets {
		debits += before.faucets[i] - after.faucets[i]
		if after.faucets[i] < 0 {
			negative = append(negative, fmt.Sprintf("faucet %d: %d", f.f.ID, after.faucets[i]))
		}
	}
	for i, r := range b.fix.recipients {
		credits += after.recipients[i] - before.recipients[i]
		if after.recipients[i] < 0 {
			negative = append(negative, fmt.Sprintf("user %d: %d", r.user.ID, after.recipients[i]))
		}
	}
	gs = append(gs,
		gateFrom("faucet debits = recipient credits = paid amounts", debits == credits && credits == paid*amount && rowSum == credits,
			fmt.Sprintf("debits %d, credits %d, paid payouts × amount %d, payout rows' sum %d", debits, credits, paid*amount, rowSum)),
		gateFrom("no negative balance", len(negative) == 0, strings.Join(negative, ", ")))

	slices.Sort(ids)
	dup := []int64{}
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] && len(dup) < 5 {
			dup = append(dup, ids[i])
		}
	}
	zero := len(ids) > 0 && ids[0] <= 0
	gs = append(gs, gateFrom("acknowledged payout ids distinct", len(dup) == 0 && !zero, fmt.Sprintf("repeated: %v; missing id: %v", dup, zero)))
	if wl.copies > 0 {
		gs = append(gs, keyGates(keys, wl.copies)...)
	}
	if wl.check != nil {
		gs = append(gs, wl.check(ctx, o)...)
	}
	return append(gs, b.reconcile(ctx))
}

// reconcile runs the real drip admin reconcile against the bench's database.
func (b *bench) reconcile(ctx context.Context) Gate {
	const name = "drip admin reconcile"
	cmd := exec.CommandContext(ctx, b.cfg.Executable, append([]string{"admin", "reconcile", "--json"}, b.db.args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r struct {
		OK *bool `json:"ok"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil || r.OK == nil {
		return gateFrom(name, false, fmt.Sprintf("%v: %s %s", err, strings.TrimSpace(stdout.String()), strings.TrimSpace(stderr.String())))
	}
	return gateFrom(name, err == nil && *r.OK, strings.TrimSpace(stdout.String()))
}

func statusName(s int) string {
	switch s {
	case statusTransport:
		return "error"
	case statusGarbled:
		return "garbled"
	}
	return fmt.Sprint(s)
}

// gateSummary is a run's gates in a word or two: "ok", or what failed.
func gateSummary(gs []Gate) string {
	var failed []string
	for _, g := range gs {
		if g.Status == "fail" {
			failed = append(failed, g.Name)
		}
	}
	if len(failed) == 0 {
		return "ok"
	}
	sort.Strings(failed)
	return "FAIL: " + strings.Join(failed, "; ")
}

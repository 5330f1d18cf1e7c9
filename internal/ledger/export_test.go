package ledger

import "time"

// CommitInOrder applies payments as one batch, decided in the order given,
// through the writers' own path (commit, then applyBatch), and returns
// each payment's receipt or error. A writer orders its batch by recipient
// first; tests choose the order to know what each payment is judged after.
func (l *Ledger) CommitInOrder(payments []*Payment) ([]*Receipt, []error) {
	deadline := time.Now().Add(payTimeout)
	reqs := make([]*request, len(payments))
	for i, p := range payments {
		if p.ID == "" {
			p.ID = newEventID()
		}
		reqs[i] = &request{p: p, deadline: deadline, done: make(chan outcome, 1)}
	}
	l.batcher.commit(append([]*request(nil), reqs...))
	receipts, errs := make([]*Receipt, len(payments)), make([]error, len(payments))
	for i, r := range reqs {
		o := <-r.done
		receipts[i], errs[i] = o.receipt, o.err
		if o.refusal != nil {
			errs[i] = o.refusal
		}
	}
	return receipts, errs
}

// Queued is how many payments wait in the writers' queues, not yet taken
// into a batch.
func (l *Ledger) Queued() int {
	b := l.batcher
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, q := range b.queues {
		n += len(q)
	}
	return n
}

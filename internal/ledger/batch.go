package ledger

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/store"
)

// BatchConfig bounds group commit (D5): concurrent payments are gathered
// into one transaction, so one commit (one fsync) serves many payouts.
type BatchConfig struct {
	// MaxSize is the most payments one transaction carries.
	MaxSize int
	// MaxWait is how long a writer holding fewer than MaxSize payments
	// waits for more before it commits, at every batch. Zero takes what is
	// queued: under load, payments queue while the previous batch
	// commits, so batches grow with the load and an idle service adds no
	// delay.
	MaxWait time.Duration
	// BusyWait is how long a writer waits for more payments while it is
	// busy (pace.begin says when), if longer than MaxWait. Zero takes the
	// engine's default (DefaultBatch); NoWait waits never.
	BusyWait time.Duration
	// Writers is how many transactions run at once, each for its own shard
	// of faucets. One hot faucet batches in one writer; payouts spread over
	// many faucets batch per writer, not per faucet. SQLite has one writer
	// connection, so more writers than one only queue for it there.
	// DefaultBatch says why one is the default on PostgreSQL too.
	Writers int
	// Observer is told of each committed batch (metrics); nil: no one.
	Observer Observer
	// Generation, when set, is told each cache generation a batch read to
	// check its payments' (Payment.Generation), so that the requests that
	// follow take it (gencache.Generation.Observe).
	Generation func(gen store.CacheGen)
	// Paid, when set, is told each committed batch's payouts of a faucet
	// in one coin, as the store reads them back, with the faucet's debit
	// count of that coin before the batch, which the batch raised by one
	// (D66): memory of the faucet's latest payouts takes them in rather
	// than read them again (faucet.Service.Paid). It is called by the
	// writer before the batch's callers are answered, so it must be quick.
	Paid func(faucetID int64, coin string, debitsBefore int64, payouts []drip.Payout)
}

// Observer is told of group commit's work, for metrics: each committed
// transaction's number of payments, and each payment's wait from its
// hand-over (Pay) to its commit. It is called by the writer, so it must
// be quick.
type Observer interface {
	BatchCommitted(payments int)
	PaymentCommitted(wait time.Duration)
}

// DefaultBatch is the batching a node runs with on engine (store.Store's
// Engine) unless told otherwise.
//
// One writer on either engine. On PostgreSQL, four writers (the default
// until round seventeen of issue 16) split payouts spread over many
// faucets into four transactions at once, each about a quarter the size
// of one writer's batch, each with its own statements and commit, all
// inserting at the same newest ids of the payout tables. The ledger
// alone spent twice the machine's CPU a payout that way, and over
// HTTP a node paid 22-39% fewer payouts at twice the p99 (BENCHMARKS.md,
// round seventeen). One writer's batches grow with the load instead.
// Several nodes still write at once, one writer each.
//
// A busy wait of 500 µs on SQLite, none on PostgreSQL (D5). SQLite's
// writer and the HTTP server share the node's CPU, and each commit costs
// it about as much as ten payouts: with no wait, a busy writer commits
// the few payments that came during its last commit while the rest are
// still being read, and the node spends its CPU on commits. On a VM where
// SQLite's `hot` is bound by the CPU, a wait of every batch of 500 µs
// paid 10% more payouts at 13% less CPU each (250 µs gained less, 1-2 ms
// lost); the busy wait, ten pairs against no wait, 0.460 of the ceiling
// against 0.424 at 5% less CPU a payout. PostgreSQL's one writer waits on
// the database's round trips instead, with CPU to spare: the wait did
// not help it (BENCHMARKS.md, round thirty-five).
func DefaultBatch(engine string) BatchConfig {
	c := BatchConfig{MaxSize: 512, MaxWait: 0, BusyWait: NoWait, Writers: 1}
	if engine == "sqlite" {
		c.BusyWait = 500 * time.Microsecond
	}
	return c
}

// NoWait, as BatchConfig.BusyWait, is no busy wait.
const NoWait time.Duration = -1

// request is one payment waiting for its batch.
type request struct {
	p         *Payment
	deadline  time.Time    // when its caller needs the outcome (D6)
	submitted time.Time    // for BatchConfig.Observer
	done      chan outcome // buffered: the writer never blocks on a caller
}

type outcome struct {
	receipt *Receipt
	refusal *drip.Error
	err     error
}

// written is what a batch wrote that BatchConfig.Paid is told once it
// commits: its payouts, and the debit counts before it of the balances
// that paid them (D66).
type written struct {
	payouts []store.BatchPayout
	debits  map[store.BalanceKey]int64
}

// batcher runs the writers.
type batcher struct {
	l      *Ledger
	cfg    BatchConfig
	seed   maphash.Seed
	mu     sync.Mutex
	queues []chan *request // one per writer, started on first use
	closed bool
	wg     sync.WaitGroup
}

func newBatcher(l *Ledger, cfg BatchConfig) *batcher {
	def := DefaultBatch(l.store.Engine())
	if cfg.MaxSize <= 0 {
		cfg.MaxSize = def.MaxSize
	}
	if cfg.Writers <= 0 {
		cfg.Writers = def.Writers
	}
	if cfg.MaxWait < 0 {
		cfg.MaxWait = 0
	}
	if cfg.BusyWait == 0 {
		cfg.BusyWait = def.BusyWait
	}
	if cfg.BusyWait < 0 {
		cfg.BusyWait = 0
	}
	return &batcher{l: l, cfg: cfg, seed: maphash.MakeSeed(), queues: make([]chan *request, cfg.Writers)}
}

var errClosed = errors.New("ledger: closed")

// submit hands a payment to its faucet's writer and waits for the
// outcome, which comes by the deadline (or a little after it: the writer
// answers as soon as it knows it cannot tell).
func (b *batcher) submit(p *Payment, deadline time.Time) outcome {
	q, err := b.queue(p.Faucet.ID)
	if err != nil {
		return outcome{err: err}
	}
	r := &request{p: p, deadline: deadline, done: make(chan outcome, 1)}
	if b.cfg.Observer != nil {
		r.submitted = time.Now()
	}
	q <- r
	return <-r.done
}

// queue returns the writer queue of a faucet's shard, starting its writer.
func (b *batcher) queue(faucetID int64) (chan *request, error) {
	shard := int(maphash.Comparable(b.seed, faucetID) % uint64(len(b.queues)))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errClosed
	}
	if b.queues[shard] == nil {
		q := make(chan *request, 4*b.cfg.MaxSize)
		b.queues[shard] = q
		b.wg.Add(1)
		go b.write(q)
	}
	return b.queues[shard], nil
}

// close stops the writers once every submitted payment has its outcome.
func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		for _, q := range b.queues {
			if q != nil {
				close(q)
			}
		}
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// write is one writer: it takes the first waiting payment, whatever else is
// queued (up to MaxSize, waiting up to MaxWait for more, or BusyWait if
// longer while busy), and commits them together.
func (b *batcher) write(q chan *request) {
	defer b.wg.Done()
	batch := make([]*request, 0, b.cfg.MaxSize)
	var p pace
	for first := range q {
		batch = append(batch[:0], first)
		wait, want := b.cfg.MaxWait, b.cfg.MaxSize
		if p.begin(time.Now(), b.cfg.BusyWait) && b.cfg.BusyWait > wait {
			wait, want = b.cfg.BusyWait, min(p.peak(), b.cfg.MaxSize)
		}
		batch = b.fill(q, batch, wait, want)
		p.taken = len(batch)
		// Rows shared between writers are locked in ascending order
		// (faucets, then the senders' balances, then the recipients'
		// balances, all set-based), so two writers seldom deadlock on
		// them; when the engine breaks a deadlock, the transaction reruns
		// (Transact), and at worst the batch is retried payment by payment.
		// The payments are decided in this order (applyBatch).
		sort.SliceStable(batch, func(i, j int) bool {
			return batch[i].p.Recipient.AccountID < batch[j].p.Recipient.AccountID
		})
		b.commit(batch)
	}
}

// pace is what a writer has seen of its recent batches: moving averages
// of the payments a batch took and of the time from a batch's start to
// the next's, each sample weighing 1/paceWeight.
type pace struct {
	start time.Time // when the last batch began; zero before the first
	taken int       // the payments the last batch took
	size  float64   // payments a batch
	cycle float64   // seconds from a batch's start to the next's
	top   float64   // the largest recent batch, fading by 1/16 a batch
}

const paceWeight = 4

// begin takes the last batch into the averages as the next begins, at
// now, and reports whether the writer is busy for a wait of w: its
// batches take two payments or more on average, and at the rate they
// come (size / cycle) at least two more come within w. Then a wait
// gathers more payments into the batch, and one commit serves them all.
//
// A lone caller's batches take one payment each, so a writer that only
// it uses never waits. When the load falls to one caller the averages
// take a few batches to follow (about five of 500 µs from c=64); after a
// pause, the long cycle keeps the writer from waiting until its batches
// come quickly again.
func (p *pace) begin(now time.Time, w time.Duration) bool {
	if !p.start.IsZero() {
		p.size += (float64(p.taken) - p.size) / paceWeight
		p.cycle += (now.Sub(p.start).Seconds() - p.cycle) / paceWeight
		p.top = max(float64(p.taken), p.top*15/16)
	}
	p.start = now
	return p.size >= 2 && p.size*w.Seconds() >= 2*p.cycle
}

// peak is the most payments a busy wait gathers before it ends early:
// the largest of the recent batches. A few callers, all of them in the
// batch, send no more until it commits, so waiting on would only idle;
// many callers fill the recent largest batch seldom, and the wait runs
// its length.
func (p *pace) peak() int { return int(math.Ceil(p.top)) }

// fill adds to batch what is queued, up to MaxSize, then waits up to wait
// for more while it holds fewer than want.
func (b *batcher) fill(q chan *request, batch []*request, wait time.Duration, want int) []*request {
	for len(batch) < b.cfg.MaxSize {
		select {
		case r, ok := <-q:
			if !ok {
				return batch
			}
			batch = append(batch, r)
			continue
		default:
		}
		break
	}
	if wait <= 0 || len(batch) >= want {
		return batch
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(batch) < want {
		select {
		case r, ok := <-q:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		case <-timer.C:
			return batch
		}
	}
	return batch
}

// commit applies a batch in one transaction and answers every caller. Each
// payment keeps its own outcome: one that would overdraw is refused while
// the others commit. If the transaction fails as a whole, nothing of it was
// applied, and each payment is retried in a transaction of its own, so one
// bad payment cannot fail the others.
//
// No payment is ever applied twice (D6). Each carries an identity, the id
// of its outcome event, which the database holds unique in the payment's
// transaction, so applying it again fails instead of paying. When a commit
// was sent but its answer lost (store.ErrCommitUnknown), the batch is
// settled by asking the database until it answers (settle), and retried,
// payment by payment, only once it is known not to have committed. What
// cannot be settled by the payments' deadline is answered
// ErrOutcomeUnknown, never retried.
func (b *batcher) commit(batch []*request) {
	batch = b.dropLate(batch)
	if len(batch) == 0 {
		return
	}
	deadline := batch[0].deadline
	payments := make([]*Payment, len(batch))
	for i, r := range batch {
		payments[i] = r.p
		if r.deadline.Before(deadline) {
			deadline = r.deadline
		}
	}
	// The transaction must end, COMMIT included, SettleMargin before the
	// earliest deadline; the margin is for settling an unknown commit.
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-SettleMargin))
	defer cancel()
	var results []outcome
	var wrote written
	err := b.l.store.Transact(ctx, func(tx store.Tx) error {
		var err error
		results, wrote, err = b.l.applyBatch(ctx, tx, payments, b.l.now())
		return err
	})
	if errors.Is(err, store.ErrCommitUnknown) {
		settleCtx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		committed, serr := b.settle(settleCtx, payments[0])
		switch {
		case serr != nil:
			for _, r := range batch {
				r.done <- outcome{err: fmt.Errorf("%w: %w", ErrOutcomeUnknown, serr)}
			}
			return
		case committed:
			err = nil
		default:
			// Known not to have committed, and the database answers again:
			// each payment is tried again, alone, while its deadline allows.
			for _, r := range batch {
				b.commit([]*request{r})
			}
			return
		}
	}
	if err == nil {
		if b.cfg.Paid != nil {
			b.tellPaid(wrote)
		}
		if o := b.cfg.Observer; o != nil {
			// The payments decided, paid or refused: not those left
			// undecided (applyBatch), whose outcome is an error.
			committed, decided := time.Now(), 0
			for i, r := range batch {
				if results[i].err == nil {
					decided++
					o.PaymentCommitted(committed.Sub(r.submitted))
				}
			}
			if decided > 0 {
				o.BatchCommitted(decided)
			}
		}
		for i, r := range batch {
			r.done <- results[i]
		}
		return
	}
	// A batch that failed because the database is unreachable or out of
	// time fails alike payment by payment: answer rather than retry.
	if len(batch) == 1 || errors.Is(err, store.ErrUnavailable) {
		for _, r := range batch {
			r.done <- b.l.applied(r.p, err)
		}
		return
	}
	for _, r := range batch {
		b.commit([]*request{r})
	}
}

// tellPaid tells BatchConfig.Paid a committed batch's payouts, faucet by
// faucet and coin by coin.
func (b *batcher) tellPaid(w written) {
	// The faucets' balances as first paid from, and their runs of payouts
	// in one list laid out balance by balance: each run is counted, then
	// filled in batch order, with no list grown payout by payout.
	var order []store.BalanceKey
	run := map[store.BalanceKey]int{} // index in order
	var size []int                    // of each run
	for _, bp := range w.payouts {
		k := store.BalanceKey{Account: bp.From, Coin: bp.Payout.Coin}
		g, ok := run[k]
		if !ok {
			g = len(order)
			run[k], order, size = g, append(order, k), append(size, 0)
		}
		size[g]++
	}
	start, next := make([]int, len(order)), make([]int, len(order)) // next: where each run's next payout goes
	for g := 1; g < len(order); g++ {
		start[g] = start[g-1] + size[g-1]
		next[g] = start[g]
	}
	all := make([]drip.Payout, len(w.payouts))
	for _, bp := range w.payouts {
		g := run[store.BalanceKey{Account: bp.From, Coin: bp.Payout.Coin}]
		all[next[g]] = bp.Payout
		all[next[g]].CreatedAt = store.AsStored(bp.Payout.CreatedAt)
		next[g]++
	}
	for g, k := range order {
		ps := all[start[g]:next[g]:next[g]] // full: an append cannot reach the next run
		b.cfg.Paid(ps[0].FaucetID, k.Coin, w.debits[k], ps)
	}
}

// minWork is the least time a payment's transaction is given: one whose
// deadline is nearer than SettleMargin+minWork is refused unapplied.
const minWork = 250 * time.Millisecond

// MaxBatchWait bounds the wait of a batch (BatchConfig.MaxWait, BusyWait)
// whose payments' deadlines are timeout away when handed over: a payment
// that waited that long would have too little time left to be paid, and
// is refused unapplied (dropLate).
func MaxBatchWait(timeout time.Duration) time.Duration { return timeout - SettleMargin - minWork }

// dropLate answers, as unavailable and unapplied, the payments whose
// callers will have given up before a transaction could settle them, and
// returns the others.
func (b *batcher) dropLate(batch []*request) []*request {
	keep := batch[:0]
	now := time.Now()
	for _, r := range batch {
		if r.deadline.Sub(now) < SettleMargin+minWork {
			r.done <- outcome{err: fmt.Errorf("%w: no time left to pay before the request's deadline", store.ErrUnavailable)}
			continue
		}
		keep = append(keep, r)
	}
	return keep
}

// settle learns whether the transaction of a batch whose commit is unknown
// committed, asking the database until it answers or ctx ends. The batch is
// one transaction, so the outcome event of one of its payments (p) tells
// for all: store.EventCommitted waits for that transaction to end if the
// database still runs it.
func (b *batcher) settle(ctx context.Context, p *Payment) (bool, error) {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		committed, err := b.l.store.EventCommitted(ctx, p.ID, p.Faucet.ID)
		if err == nil {
			return committed, nil
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(wait):
		}
	}
}

// applyBatch applies payments in tx at time now and returns their outcomes.
// It is the one way a payout is written, whatever its faucet's settings.
// The decisions are made here, in Go, payment by payment in batch order,
// against books read once per batch under locks (openBooks): the owner's
// send limits (D41), the key's daily USD cap (D36), the balance (D5); a
// refusal is the payment's payout.failed event. The writes of every
// outcome, paid or refused, are then one set-based write whatever the
// batch's size: PayoutsInsert, which writes the senders' debits, the
// journal, the payouts, the recipients' credits, the keys' spends, the
// idempotency rows (D35), the low-balance notifications (D43) and the
// events, among them each payment's outcome event under its unique id
// (D6). Two kinds of payment are left undecided and unwritten: one read
// from memory under a generation that has changed since, unconfirmed (the
// books read the generation, in the transaction, after its request
// arrived), and one whose idempotency key a payout has bound already
// (D35), which its caller replays.
func (l *Ledger) applyBatch(ctx context.Context, tx store.Tx, payments []*Payment, now time.Time) ([]outcome, written, error) {
	b, err := openBooks(ctx, tx, payments, now)
	if err != nil {
		return nil, written{}, err
	}
	if b.generation != (store.CacheGen{}) && l.generation != nil {
		l.generation(b.generation) // read for the payments below: requests to come take it
	}
	undecided := func(p *Payment) error {
		switch {
		case p.Generation != (store.CacheGen{}) && p.Generation != b.generation:
			// Read from memory under a generation since changed (D63):
			// served again.
			return fmt.Errorf("ledger: payment %s: %w", p.ID, gencache.ErrStale)
		case p.Idempotency != nil && b.bound[p.idempotencyKey()]:
			return fmt.Errorf("ledger: payment %s: idempotency key bound already: %w", p.ID, store.ErrConflict)
		}
		return nil
	}
	if !slices.ContainsFunc(payments, func(p *Payment) bool { return undecided(p) != nil }) {
		results, err := l.decide(ctx, tx, b, payments, now)
		return results, b.wrote(), err
	}
	// What the books hold for the undecided is unused: ids reserved for
	// them are gaps, as a refused payment's are.
	results := make([]outcome, len(payments))
	var live []*Payment
	var at []int // live[j] is payments[at[j]]
	for i, p := range payments {
		if err := undecided(p); err != nil {
			results[i] = outcome{err: err}
			continue
		}
		live, at = append(live, p), append(at, i)
	}
	if len(live) > 0 {
		decided, err := l.decide(ctx, tx, b, live, now)
		if err != nil {
			return nil, written{}, err
		}
		for j, o := range decided {
			results[at[j]] = o
		}
	}
	return results, b.wrote(), nil
}

// decide decides payments against the books b and writes their outcomes.
func (l *Ledger) decide(ctx context.Context, tx store.Tx, b *books, payments []*Payment, now time.Time) ([]outcome, error) {
	refusals := make([]*drip.Error, len(payments))
	after := make([]int64, len(payments)) // the sender's balance after payment i, if paid
	debits := map[store.BalanceKey]int64{}
	paid := 0
	for i, p := range payments {
		refusal, err := b.decide(ctx, p)
		if err != nil {
			return nil, err
		}
		if refusal != nil {
			refusals[i] = refusal
			continue
		}
		after[i] = b.pay(p)
		debits[store.BalanceKey{Account: p.Faucet.AccountID, Coin: p.Coin}] += p.Amount
		paid++
	}
	// Sized for the batch: grown by append, its two lists were about a
	// twentieth of the bytes a hot payout allocated (BENCHMARKS.md, round
	// twenty-six).
	batch := &store.PayoutBatch{Debits: debits, CreatedAt: now,
		Payouts: make([]store.BatchPayout, 0, paid), Events: make([]drip.Event, 0, len(payments))}
	if paid > 0 {
		batch.Credits = make(map[store.BalanceKey]int64, paid)
	}
	spends := map[spendKey]int{} // index in batch.Spends
	results := make([]outcome, len(payments))
	j := 0 // the next reserved ids
	for i, p := range payments {
		if refusals[i] != nil {
			ev, err := failedEvent(p, refusals[i], now)
			if err != nil {
				return nil, err
			}
			batch.Events = append(batch.Events, *ev)
			results[i] = outcome{refusal: refusals[i]}
			continue
		}
		payoutID := b.payoutIDs[j]
		batch.Payouts = append(batch.Payouts, store.BatchPayout{
			Payout: drip.Payout{
				ID: payoutID, FaucetID: p.Faucet.ID, RecipientID: p.Recipient.ID, To: p.To, Coin: p.Coin,
				Amount: p.Amount, IPAddress: p.IPAddress, Referral: p.Referral, CreatedAt: now,
			},
			TransferID: b.transferIDs[j], From: p.Faucet.AccountID, To: p.Recipient.AccountID,
		})
		j++
		batch.Credits[store.BalanceKey{Account: p.Recipient.AccountID, Coin: p.Coin}] += p.Amount
		if s := p.Spend; s != nil {
			k := spendKey{s.KeyID, Day(now)}
			n, ok := spends[k]
			if !ok {
				n = len(batch.Spends)
				spends[k] = n
				batch.Spends = append(batch.Spends, store.KeySpend{KeyID: s.KeyID, Day: k.day})
			}
			// The store adds the key's payments together, refusing the sum
			// past the largest cap they were judged against: a guard that
			// fails the batch should the books have gone stale (D36).
			batch.Spends[n].Micros += s.Micros
			batch.Spends[n].CapMicros = max(batch.Spends[n].CapMicros, s.CapMicros)
		}
		ev, err := sentEvent(p, payoutID, now)
		if err != nil {
			return nil, err
		}
		batch.Events = append(batch.Events, *ev)
		if r := idempotency(p, payoutID, after[i], now); r != nil {
			batch.Idempotency = append(batch.Idempotency, *r)
		}
		n, lowEv, err := lowBalance(p, after[i], now)
		if err != nil {
			return nil, err
		}
		if n != nil {
			batch.Notifications = append(batch.Notifications, *n)
			batch.Events = append(batch.Events, *lowEv)
		}
		results[i] = outcome{receipt: &Receipt{PayoutID: payoutID, Balance: after[i]}}
	}
	if err := tx.PayoutsInsert(ctx, batch); err != nil {
		return nil, err
	}
	b.written = batch.Payouts
	return results, nil
}

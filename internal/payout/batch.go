package payout

import (
	"context"
	"sync"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
)

// Batches of sends and dry runs (D61, D62): each item of a batch is a v2
// send of its own, judged by the same pipeline as /send.

// MaxBatch is the most items one batch may carry (D61).
const MaxBatch = 500

// batchInFlight bounds the items of every batch being sent at once on
// this node. They wait in the ledger's queue together, so they share its
// group commits (D5); the bound is the node's, not each batch's, so many
// batches at once queue here instead of each adding its own goroutines
// (64 batches of 500 at once held 170 MB with a bound of 128 a batch).
const batchInFlight = 512

// ValidIdempotencyKey checks the form of an idempotency key (D35): 1 to
// 255 printable ASCII characters.
func ValidIdempotencyKey(k string) error { return validIdempotencyKey(k) }

// BatchItem is one send of a batch: its idempotency key and its request.
type BatchItem struct {
	IdempotencyKey string
	Request        SendRequest
}

// BatchOutcome is what became of one item: its result (Replayed when its
// key had already paid, and nothing was paid now), or the error that
// refused it or left its outcome unknown (D58).
type BatchOutcome struct {
	Result   *SendResult
	Replayed bool
	Err      error
}

// SendBatch sends items, each as SendIdempotent would send it alone, and
// returns their outcomes in the order given (D61). A refusal stops only
// its own item. The items are sent concurrently (at most batchInFlight at
// once), so those that reach the ledger ride its group commits together.
//
// An idempotency key given twice in one batch is decided by its first
// occurrence: a later one with the same request gets the first's outcome
// (a payout is then answered as replayed; a refusal is the same refusal,
// recorded once), and one with another request is refused as
// idempotency_key_reuse whatever became of the first; nothing about
// duplicates depends on timing.
//
// With dry, nothing is paid, bound or recorded: see judge (D62).
func (s *Service) SendBatch(ctx context.Context, c *Caller, items []BatchItem, dry bool) []BatchOutcome {
	out := make([]BatchOutcome, len(items))
	firsts, dupOf := planBatch(items, out)
	// Keys bound before the batch are its replays (or reuses), read in one
	// statement rather than one a send.
	firsts = s.replays(ctx, c, items, firsts, out)
	if dry {
		s.judge(ctx, c, items, firsts, out)
	} else {
		s.each(firsts, func(i int) {
			res, replayed, err := s.sendIdempotent(ctx, c, items[i].IdempotencyKey, items[i].Request)
			out[i] = BatchOutcome{Result: res, Replayed: replayed, Err: err}
		})
	}
	for i, first := range dupOf {
		if first < 0 {
			continue
		}
		o := out[first]
		o.Replayed = o.Err == nil
		out[i] = o
	}
	return out
}

// SendDry is the dry run of a v2 send (D62): the outcome SendIdempotent
// would have now (replayed when the key has paid before), with nothing
// paid, bound or recorded. A send that would be paid has no payout id;
// its Balance is the faucet's balance after it.
func (s *Service) SendDry(ctx context.Context, c *Caller, idemKey string, req SendRequest) (*SendResult, bool, error) {
	o := s.SendBatch(ctx, c, []BatchItem{{IdempotencyKey: idemKey, Request: req}}, true)[0]
	return o.Result, o.Replayed, o.Err
}

// planBatch finds the first occurrence of each idempotency key of items,
// in order, and for every later occurrence the index of its first (-1 for
// a first). Items whose key is invalid, or that reuse a key with another
// request, get their refusal in out here.
func planBatch(items []BatchItem, out []BatchOutcome) (firsts []int, dupOf []int) {
	dupOf = make([]int, len(items))
	first := map[string]int{}
	hashes := make([]string, len(items))
	for i, it := range items {
		dupOf[i] = -1
		if err := validIdempotencyKey(it.IdempotencyKey); err != nil {
			out[i].Err = err
			continue
		}
		hashes[i] = requestHash(it.Request)
		f, seen := first[it.IdempotencyKey]
		switch {
		case !seen:
			first[it.IdempotencyKey] = i
			firsts = append(firsts, i)
		case hashes[f] != hashes[i]:
			out[i].Err = errReuse()
		default:
			dupOf[i] = f
		}
	}
	return firsts, dupOf
}

// replays answers the items at firsts whose key is bound, as the replay
// of its payout or as idempotency_key_reuse, and returns the others: the
// keys found free, to be sent (or judged). When the keys cannot be read,
// every item at firsts is answered with that fault.
func (s *Service) replays(ctx context.Context, c *Caller, items []BatchItem, firsts []int, out []BatchOutcome) []int {
	if len(firsts) == 0 {
		return nil
	}
	keys := make([]string, len(firsts))
	for j, i := range firsts {
		keys[j] = items[i].IdempotencyKey
	}
	found, err := s.store.IdempotencyGetMany(ctx, c.Faucet.ID, keys)
	if err != nil {
		for _, i := range firsts {
			out[i].Err = err
		}
		return nil
	}
	bound := make(map[string]*drip.Idempotency, len(found))
	for k := range found {
		bound[found[k].Key] = &found[k]
	}
	free := firsts[:0:0]
	for _, i := range firsts {
		r, ok := bound[items[i].IdempotencyKey]
		if !ok {
			free = append(free, i)
			continue
		}
		res, err := replayOf(r, requestHash(items[i].Request))
		out[i] = BatchOutcome{Result: res, Replayed: err == nil, Err: err}
	}
	return free
}

// each runs fn for each index, within the node's batchInFlight, and
// returns when all have returned.
func (s *Service) each(indexes []int, fn func(i int)) {
	var wg sync.WaitGroup
	for _, i := range indexes {
		s.batchSlots <- struct{}{}
		wg.Go(func() {
			defer func() { <-s.batchSlots }()
			fn(i)
		})
	}
	wg.Wait()
}

// judge is the dry run of the items at firsts, whose keys are free (D62):
// every check of a send runs, the request rate having been taken by the
// caller's authorization (and ChargeBatch), and nothing is written. The
// items pass the checks before the ledger without recording a refusal,
// and then the ledger
// judges them all in one transaction it rolls back (ledger.Judge), in the
// order given, each after the ones before it, as if they were one group
// commit: a batch that would run a balance or a send limit out is told
// which of its items would be refused.
func (s *Service) judge(ctx context.Context, c *Caller, items []BatchItem, firsts []int, out []BatchOutcome) {
	payments := make([]*ledger.Payment, len(items))
	s.each(firsts, func(i int) {
		var err error
		if payments[i], err = s.check(ctx, c, items[i].Request, nil, false); err != nil {
			out[i].Err = err
		}
	})
	var judged []*ledger.Payment
	var at []int
	for i, p := range payments {
		if p != nil {
			judged = append(judged, p)
			at = append(at, i)
		}
	}
	verdicts, err := s.ledger.Judge(ctx, judged)
	for j, i := range at {
		switch p := judged[j]; {
		case err != nil:
			out[i].Err = err
		case verdicts[j].Refusal != nil:
			out[i].Err = verdicts[j].Refusal
		default:
			out[i].Result = &SendResult{Currency: p.Coin, Amount: p.Amount, Balance: verdicts[j].Balance,
				PayoutUserHash: p.Recipient.PayoutUserHash, RateRemaining: c.RateRemaining}
		}
	}
}

func errReuse() *drip.Error {
	return drip.Errorf(drip.CodeIdempotencyReuse,
		"This idempotency_key was used for a different payout; use a new key for a new payout.")
}

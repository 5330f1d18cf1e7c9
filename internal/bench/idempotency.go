package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// The v2 scenarios: sends through POST /api/v2/send, each bound to an
// idempotency key (D35). A key is one logical payout, however many times it
// is sent.

// v2IdempotentScenario is hot through v2: every send a new idempotency key.
func v2IdempotentScenario() *scenario {
	var f *faucetFix
	return &scenario{
		name: "v2-idempotent", sendStatuses: []int{200},
		setup: func(ctx context.Context, b *bench) (err error) {
			if f, err = b.fix.faucet(ctx, "v2-idempotent", funding); err != nil {
				return err
			}
			return b.fix.mintSendKey(ctx, f)
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			rs, prefix := b.fix.recipients, b.fix.idempotencyPrefix()
			return &workload{
				faucets: []*faucetFix{f}, copies: 1,
				next: func(seq uint64, _ bool) request { return f.sendV2(rs[seq%uint64(len(rs))], prefix, seq+1) },
			}, nil
		},
	}
}

// stormCopies is how many times retry-storm sends each idempotency key.
const stormCopies = 4

// retryStormScenario sends every key as a client that retries would: the
// first copy; a second at once, while the first is (almost always) still in
// flight, as after a timeout; and two more once the first has answered, as
// after a lost reply. Three requests in four are replays.
func retryStormScenario() *scenario {
	var f *faucetFix
	return &scenario{
		name: "retry-storm", sendStatuses: []int{200},
		setup: func(ctx context.Context, b *bench) (err error) {
			if f, err = b.fix.faucet(ctx, "retry-storm", funding); err != nil {
				return err
			}
			return b.fix.mintSendKey(ctx, f)
		},
		begin: func(ctx context.Context, b *bench, _ int64) (*workload, error) {
			s := &storm{f: f, rs: b.fix.recipients, prefix: b.fix.idempotencyPrefix()}
			return &workload{faucets: []*faucetFix{f}, copies: stormCopies, next: s.next}, nil
		},
	}
}

// storm generates retry-storm's requests. Copies waiting to be sent go
// first, so every key is sent stormCopies times unless the run ends.
type storm struct {
	f      *faucetFix
	rs     []recipient
	prefix string

	mu   sync.Mutex
	keys uint64 // keys begun
	// twins are keys whose first copy was just sent: sent again at once.
	twins []*stormKey
	// retries are keys whose first copy has answered, once per copy left.
	retries []*stormKey
}

type stormKey struct {
	n        uint64
	answered atomic.Bool // its first copy has answered
}

// next is the storm's generator.
func (s *storm) next(uint64, bool) request {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.twins) > 0:
		k := s.twins[0]
		s.twins = s.twins[1:]
		r := s.copy(k)
		r.overlap = !k.answered.Load()
		return r
	case len(s.retries) > 0:
		k := s.retries[0]
		s.retries = s.retries[1:]
		return s.copy(k)
	}
	s.keys++
	k := &stormKey{n: s.keys}
	s.twins = append(s.twins, k)
	r := s.copy(k)
	r.answered = func(sample) {
		k.answered.Store(true)
		s.mu.Lock()
		for range stormCopies - 2 {
			s.retries = append(s.retries, k)
		}
		s.mu.Unlock()
	}
	return r
}

// copy is a send of k: every copy of a key is the same request.
func (s *storm) copy(k *stormKey) request {
	return s.f.sendV2(s.rs[k.n%uint64(len(s.rs))], s.prefix, k.n)
}

// keyTally is what the copies of one idempotency key were answered.
type keyTally struct {
	paid     int   // copies answered 200
	fresh    int   // of them, without Idempotent-Replayed: the one that paid
	payoutID int64 // the first copy's payout_id
	others   int   // copies answered another payout_id
}

// tallyKeys groups a run's paid v2 sends by idempotency key.
func tallyKeys(samples []sample) map[uint64]*keyTally {
	keys := map[uint64]*keyTally{}
	for _, s := range samples {
		if s.op != opSend || s.status != 200 || s.idem == 0 {
			continue
		}
		t := keys[s.idem]
		if t == nil {
			t = &keyTally{payoutID: s.payoutID}
			keys[s.idem] = t
		}
		t.paid++
		if !s.replayed {
			t.fresh++
		}
		if s.payoutID != t.payoutID {
			t.others++
		}
	}
	return keys
}

// keyGates are D35 as a client sees it: of the copies of a key, exactly one
// paid and the others were answered as replays; with several copies a key,
// all of them were answered the same payout_id.
func keyGates(keys map[uint64]*keyTally, copies int) []Gate {
	var unmarked, split []string
	for n, t := range keys {
		if t.fresh != 1 && len(unmarked) < 3 {
			unmarked = append(unmarked, fmt.Sprintf("key %d: %d of %d copies paid without Idempotent-Replayed", n, t.fresh, t.paid))
		}
		if t.others > 0 && len(split) < 3 {
			split = append(split, fmt.Sprintf("key %d: %d of %d copies answered another payout_id than %d", n, t.others, t.paid, t.payoutID))
		}
	}
	gs := []Gate{gateFrom("replays carry Idempotent-Replayed, one copy a key paid", len(unmarked) == 0, fmt.Sprint(unmarked))}
	if copies > 1 {
		gs = append(gs, gateFrom("every copy of a key answered the same payout_id", len(split) == 0, fmt.Sprint(split)))
	}
	return gs
}

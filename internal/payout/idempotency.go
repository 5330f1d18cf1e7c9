package payout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The idempotent send of v2 (D35): one idempotency key pays at most once.

// MaxIdempotencyKey is the longest idempotency key (D35).
const MaxIdempotencyKey = 255

// SendIdempotent is the v2 send (D35): the payout of req bound to
// idempotency key idemKey. A key already bound to the same request returns
// that payout's original result with replayed true, and pays nothing; bound
// to another request, it is CodeIdempotencyReuse. Concurrent sends with one
// key wait for each other here (and across nodes the database's unique key
// decides), so one key pays at most once. A refused send binds nothing.
func (s *Service) SendIdempotent(ctx context.Context, c *Caller, idemKey string, req SendRequest) (res *SendResult, replayed bool, err error) {
	return s.sendIdempotent(ctx, c, idemKey, req)
}

// sendIdempotent is SendIdempotent. A key this node has seen bound is
// replayed from memory (s.bound). Any other is not read before paying,
// which cost a read a send (issue 16): the payment's own transaction
// looks its key up with the batch's others, and a payment or a refusal
// whose key a payout has bound already is left unwritten as a conflict
// (ledger.applyBatch, ledger.RecordRefusal), which is then replayed here.
func (s *Service) sendIdempotent(ctx context.Context, c *Caller, idemKey string, req SendRequest) (res *SendResult, replayed bool, err error) {
	if err := validIdempotencyKey(idemKey); err != nil {
		return nil, false, err
	}
	unlock, err := s.sending.lock(ctx, strconv.FormatInt(c.Faucet.ID, 10)+"\x00"+idemKey)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	hash := requestHash(req)
	key := store.IdempotencyKey{FaucetID: c.Faucet.ID, Key: idemKey}
	start := s.now()
	if r := s.bound.get(key, start); r != nil {
		res, err := replayOf(r, hash)
		return res, err == nil, err
	}
	res, err = s.send(ctx, c, req, &drip.Idempotency{Key: idemKey, RequestHash: hash, RateRemaining: c.RateRemaining})
	if err == nil {
		// Bound at start or after it: its age is counted from start.
		s.bound.put(key, &drip.Idempotency{FaucetID: c.Faucet.ID, Key: idemKey, RequestHash: hash, PayoutID: res.PayoutID,
			Coin: res.Currency, Balance: res.Balance, PayoutUserHash: res.PayoutUserHash, RateRemaining: res.RateRemaining,
			CreatedAt: start})
		return res, false, nil
	}
	var refusal *drip.Error
	if errors.Is(err, store.ErrConflict) || errors.As(err, &refusal) && !refusal.Code.Fault() {
		// The key was bound already (a conflict), or bound on another node
		// while ours was refused for what that payout took: answer as that
		// payout. A fault (the outcome unknown, the database unavailable)
		// is never replaced: its answer is the truth the caller must act
		// on (D6).
		bound, rerr := s.replay(ctx, c, idemKey, hash)
		switch {
		case errors.Is(rerr, store.ErrNotFound):
		case refusal != nil && drip.ErrorCode(rerr).Fault():
			// The refusal stands; the key's payout, if any, is out of reach.
		default:
			return bound, rerr == nil, rerr
		}
	}
	return res, false, err
}

// replay is the original result of the payout bound to idemKey, or
// store.ErrNotFound when the key is free.
func (s *Service) replay(ctx context.Context, c *Caller, idemKey, hash string) (*SendResult, error) {
	r, err := s.store.IdempotencyGet(ctx, c.Faucet.ID, idemKey)
	if err != nil {
		return nil, err
	}
	s.bound.put(store.IdempotencyKey{FaucetID: c.Faucet.ID, Key: idemKey}, r)
	return replayOf(r, hash)
}

// replayOf is the original result of r's payout for a request of hash, or
// CodeIdempotencyReuse when r was bound by another request.
func replayOf(r *drip.Idempotency, hash string) (*SendResult, error) {
	if r.RequestHash != hash {
		return nil, errReuse()
	}
	return &SendResult{PayoutID: r.PayoutID, Currency: r.Coin, Balance: r.Balance,
		PayoutUserHash: r.PayoutUserHash, RateRemaining: r.RateRemaining}, nil
}

// MinIdempotencyRetention is how long a bound idempotency key is kept at
// the least (D35): a retry within this time never pays twice.
const MinIdempotencyRetention = 7 * 24 * time.Hour

// PruneIdempotency forgets idempotency keys bound more than retention ago
// (at least MinIdempotencyRetention) and returns how many.
func (s *Service) PruneIdempotency(ctx context.Context, retention time.Duration) (int64, error) {
	retention = max(retention, MinIdempotencyRetention)
	var n int64
	err := s.store.Transact(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.IdempotencyDeleteBefore(ctx, s.now().Add(-retention))
		return err
	})
	return n, err
}

func validIdempotencyKey(k string) error {
	if len(k) == 0 || len(k) > MaxIdempotencyKey {
		return drip.Errorf(drip.CodeInvalid, "Invalid idempotency_key: 1 to 255 printable ASCII characters.")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return drip.Errorf(drip.CodeInvalid, "Invalid idempotency_key: 1 to 255 printable ASCII characters.")
		}
	}
	return nil
}

// requestHash identifies a send's request: the same fields give the same
// hash, so a retry is told from a reuse (D35).
func requestHash(req SendRequest) string {
	// The fields as the pipeline reads them: " bob" is bob, "0100" is 100.
	amount := req.Amount
	if n, ok := drip.ParseAmount(amount); ok {
		amount = strconv.FormatInt(n, 10)
	}
	b, _ := json.Marshal([]string{strings.TrimSpace(req.To), amount, drip.Symbol(req.Currency), strings.TrimSpace(req.IPAddress), req.Referral})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// boundKeys remembers the idempotency keys this node has seen bound, with
// their payouts' results, so that a retry is replayed without a read: a
// bound key is never bound again while the database keeps it, and no
// retention prunes a key younger than MinIdempotencyRetention (D35), so a
// remembered key younger than that is bound in the database too. An older
// one is looked up there again, where it may have been pruned and be free.
// It keeps the newest 2×boundKept: when recent fills, it becomes older and
// older is dropped.
type boundKeys struct {
	mu            sync.Mutex
	recent, older map[store.IdempotencyKey]*drip.Idempotency
}

// boundKept bounds the memory of bound keys: a key is a few hundred bytes.
const boundKept = 8192

// get is the remembered binding of k, or nil, as of now.
func (b *boundKeys) get(k store.IdempotencyKey, now time.Time) *drip.Idempotency {
	b.mu.Lock()
	r, ok := b.recent[k]
	if !ok {
		r = b.older[k]
	}
	b.mu.Unlock()
	if r == nil || now.Sub(r.CreatedAt) >= MinIdempotencyRetention {
		return nil
	}
	return r
}

func (b *boundKeys) put(k store.IdempotencyKey, r *drip.Idempotency) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) >= boundKept || b.recent == nil {
		b.older, b.recent = b.recent, make(map[store.IdempotencyKey]*drip.Idempotency, boundKept)
	}
	b.recent[k] = r
}

// inflight holds one lock per idempotency key while its send runs, so
// concurrent duplicates on this node wait and then replay.
type inflight struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// lock waits for key to be free (or ctx to end) and takes it.
func (l *inflight) lock(ctx context.Context, key string) (unlock func(), err error) {
	for {
		l.mu.Lock()
		held, busy := l.m[key]
		if !busy {
			done := make(chan struct{})
			l.m[key] = done
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				delete(l.m, key)
				l.mu.Unlock()
				close(done)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return nil, drip.Errorf(drip.CodeIdempotencyReuse, "A payout with this idempotency_key is still in progress; retry shortly.")
		}
	}
}

package ledger

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// books are what a batch's payments are decided against (D5): each
// sender's balance (D2), the payouts counted by each owner send limit
// (D41) and each capped key's spend of the day (D36). Each is read once per
// batch, under the locks that keep it from going stale before the batch
// commits, and then advanced in Go as each payment in turn is paid, so a
// payment is judged after every payment before it in the batch.
type books struct {
	tx       store.Tx
	now      time.Time
	balances map[store.BalanceKey]int64
	// debits are the held balances' debit counts before the batch (D66).
	debits map[store.BalanceKey]int64
	// written are the payouts the batch wrote (decide).
	written []store.BatchPayout
	// transferIDs and payoutIDs are reserved for the batch, one of each per
	// payment; the paid ones take them in order.
	transferIDs, payoutIDs []int64
	windows                map[windowKey]*window
	spends                 map[spendKey]int64
	// generation is the cache generation, read when a payment needs it
	// (Payment.Generation).
	generation store.CacheGen
	// bound are the batch's idempotency keys that a payout has bound
	// already (D35).
	bound map[store.IdempotencyKey]bool
}

// windowKey names what one send limit counts: the payouts of a faucet, in
// one coin or all (coin ""), since a window's start, of one recipient, one
// claimer IP or all (recipient 0 and ip ""). Limits are keyed by what they
// count, not by their place in the faucet's list: payments of one faucet
// may carry copies of its settings from before and after a change.
type windowKey struct {
	faucet    int64
	coin      string
	seconds   int64
	recipient int64
	ip        string
}

type window struct{ count, sum int64 }

type spendKey struct{ key, day int64 }

// openBooks takes the locks a batch's decisions need and reads the
// senders' balances, all in PayoutsOpen (one round trip on PostgreSQL). A
// faucet with send limits, or paying through a key with a daily USD cap,
// is locked (as FaucetLock does, in ascending id order) for the batch:
// every payout that counts against a limit or a cap takes that lock
// first, so the counts read after it cannot be overtaken by another
// transaction (D36, D41). Balances are read and held, and the batch's ids
// reserved, after the faucets' locks.
func openBooks(ctx context.Context, tx store.Tx, payments []*Payment, now time.Time) (*books, error) {
	b := &books{tx: tx, now: now, windows: map[windowKey]*window{}, spends: map[spendKey]int64{}}
	// Ids for every payment, though some may be refused: a reserved id
	// left unused is a gap, and reserving with the balances saves the
	// batch a round trip to the database.
	open := &store.PayoutsOpenParams{IDs: len(payments),
		Generation: slices.ContainsFunc(payments, func(p *Payment) bool { return p.Generation != (store.CacheGen{}) })}
	var windows []windowKey // in open.Windows' order
	locked, held := map[int64]bool{}, map[store.BalanceKey]bool{}
	for _, p := range payments {
		if (len(p.Faucet.Limits) > 0 || p.Spend != nil) && !locked[p.Faucet.ID] {
			locked[p.Faucet.ID] = true
			open.Faucets = append(open.Faucets, p.Faucet.ID)
		}
		if k := (store.BalanceKey{Account: p.Faucet.AccountID, Coin: p.Coin}); !held[k] {
			held[k] = true
			open.Balances = append(open.Balances, k)
		}
		if p.Idempotency != nil {
			open.Idempotency = append(open.Idempotency, p.idempotencyKey())
		}
		// Every window a limit of the batch counts is read under the
		// locks, in the same round trip, not one query each.
		for _, lim := range p.Faucet.Limits {
			if k, ok := windowKeyOf(lim, p); ok && b.windows[k] == nil {
				b.windows[k] = &window{}
				windows = append(windows, k)
				open.Windows = append(open.Windows, b.windowParams(k))
			}
		}
	}
	read, err := tx.PayoutsOpen(ctx, open)
	if err != nil {
		return nil, err
	}
	b.balances, b.debits, b.transferIDs, b.payoutIDs = read.Balances, read.Debits, read.TransferIDs, read.PayoutIDs
	b.generation, b.bound = read.Generation, read.Bound
	for i, k := range windows {
		*b.windows[k] = window{count: read.Windows[i].Count, sum: read.Windows[i].Sum}
	}
	return b, nil
}

// wrote is what the batch wrote, for BatchConfig.Paid once it commits.
func (b *books) wrote() written { return written{payouts: b.written, debits: b.debits} }

// decide is the refusal of p, or nil when p is to be paid, judged in the
// order the ledger has always checked: the owner's send limits (D41), the
// key's daily USD cap (D36), the balance (D5).
func (b *books) decide(ctx context.Context, p *Payment) (*drip.Error, error) {
	if refusal := b.limits(p); refusal != nil {
		return refusal, nil
	}
	if p.Spend != nil {
		spent, err := b.spent(ctx, p.Spend)
		if err != nil {
			return nil, err
		}
		if spent+p.Spend.Micros > p.Spend.CapMicros {
			return DailyCapReached(), nil
		}
	}
	if p.Amount > b.balances[store.BalanceKey{Account: p.Faucet.AccountID, Coin: p.Coin}] {
		return insufficientFunds(p), nil
	}
	return nil, nil
}

// pay advances the books by p, decided paid, and returns the sender's
// balance after it.
func (b *books) pay(p *Payment) int64 {
	for _, lim := range p.Faucet.Limits {
		if k, ok := windowKeyOf(lim, p); ok {
			w := b.windows[k] // read by openBooks
			w.count++
			w.sum += p.Amount
		}
	}
	if p.Spend != nil {
		b.spends[spendKey{p.Spend.KeyID, Day(b.now)}] += p.Spend.Micros
	}
	k := store.BalanceKey{Account: p.Faucet.AccountID, Coin: p.Coin}
	b.balances[k] -= p.Amount
	return b.balances[k]
}

// limits evaluates the faucet owner's send limits (D41) for p: the payouts
// committed in each limit's window, read once per batch by openBooks, plus
// those paid before p in the batch. A per-IP limit refuses with the
// claimer-IP code (v1 459, D26); every other limit with the send-limit
// code (v1 450).
func (b *books) limits(p *Payment) *drip.Error {
	for _, lim := range p.Faucet.Limits {
		k, ok := windowKeyOf(lim, p)
		if !ok {
			continue
		}
		w := b.windows[k]
		overCount := lim.MaxCount > 0 && w.count+1 > lim.MaxCount
		overAmount := lim.MaxAmount > 0 && w.sum+p.Amount > lim.MaxAmount
		if !overCount && !overAmount {
			continue
		}
		seconds := strconv.FormatInt(lim.WindowSeconds, 10) + " seconds"
		if lim.Per == drip.PerIP {
			return drip.Errorf(drip.CodeClaimerRateLimit, "Rate limited: this claimer IP has reached the faucet's limit for %s; retry later.", seconds)
		}
		return drip.Errorf(drip.CodeSendLimit, "Send limit reached: the faucet's %s limit for %s is used up; retry later.", lim.Per, seconds)
	}
	return nil
}

// windowKey is what lim counts for p; false when lim does not apply to p
// (another coin, or a per-IP limit and no claimer IP given).
func windowKeyOf(lim drip.Limit, p *Payment) (windowKey, bool) {
	if lim.Coin != "" && lim.Coin != p.Coin {
		return windowKey{}, false
	}
	k := windowKey{faucet: p.Faucet.ID, coin: lim.Coin, seconds: lim.WindowSeconds}
	switch lim.Per {
	case drip.PerRecipient:
		k.recipient = p.Recipient.ID
	case drip.PerIP:
		if p.IPAddress == "" {
			return windowKey{}, false // no claimer IP given: nothing to count it against
		}
		k.ip = p.IPAddress
	}
	return k, true
}

// windowParams selects the committed payouts k counts.
func (b *books) windowParams(k windowKey) store.PayoutWindowParams {
	return store.PayoutWindowParams{
		FaucetID: k.faucet, Since: b.now.Add(-time.Duration(k.seconds) * time.Second),
		Coin: k.coin, RecipientID: k.recipient, IPAddress: k.ip,
	}
}

// spent is the key's spend of the day so far, the batch's paid payments
// included; the committed part is read once per batch.
func (b *books) spent(ctx context.Context, s *Spend) (int64, error) {
	k := spendKey{s.KeyID, Day(b.now)}
	if spent, ok := b.spends[k]; ok {
		return spent, nil
	}
	spent, err := b.tx.KeySpendGet(ctx, k.key, k.day)
	if err != nil {
		return 0, err
	}
	b.spends[k] = spent
	return spent, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Verdict is what Judge decided of one payment: its refusal, or, when it
// would be paid, the sender's balance after it.
type Verdict struct {
	Refusal *drip.Error
	Balance int64
}

// errJudged rolls back the transaction Judge opened the books in.
var errJudged = errors.New("ledger: judged, nothing written")

// Judge decides payments as the ledger would pay them now, in the order
// given, and writes nothing: a dry run (D62). The books are opened and
// each payment decided by the code that decides a batch (openBooks,
// books.decide, books.pay: the same send limits, daily USD cap and
// balance, each payment judged after those before it), inside a
// transaction that is then rolled back, so no rule has a second copy and
// nothing is recorded, not even a refusal's payout.failed event.
func (l *Ledger) Judge(ctx context.Context, payments []*Payment) ([]Verdict, error) {
	out := make([]Verdict, len(payments))
	if len(payments) == 0 {
		return out, nil
	}
	err := l.store.Transact(ctx, func(tx store.Tx) error {
		b, err := openBooks(ctx, tx, payments, l.now())
		if err != nil {
			return err
		}
		for i, p := range payments {
			refusal, err := b.decide(ctx, p)
			if err != nil {
				return err
			}
			if refusal != nil {
				out[i].Refusal = refusal
				continue
			}
			out[i].Balance = b.pay(p)
		}
		return errJudged
	})
	if !errors.Is(err, errJudged) {
		return nil, err
	}
	return out, nil
}

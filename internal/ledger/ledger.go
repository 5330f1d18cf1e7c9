// Package ledger is the only place money moves. Every movement is a
// double-entry transfer between two accounts of one coin, applied together
// with the balances it changes and the records it causes (payout row, event)
// in one database transaction (D2, D4). Reconcile checks the invariant (D3).
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// payTimeout is the deadline of a payment whose context has none.
const payTimeout = 30 * time.Second

// SettleMargin is the part of a payment's deadline kept for settling its
// commit when the commit's answer is lost (D6): the payment's transaction
// must end, COMMIT included, this long before the deadline. PostgreSQL's
// idle_in_transaction_session_timeout must not exceed it
// (postgres.Timeouts), so that by the deadline a COMMIT stuck in a stalled
// network can no longer take effect: nothing commits after its caller was
// answered.
const SettleMargin = 2 * time.Second

// ErrOutcomeUnknown answers a payment whose commit was sent but could not
// be settled by its deadline: it may have been paid (D6, D58). It wraps
// the cause for the log.
var ErrOutcomeUnknown = &drip.Error{Code: drip.CodeOutcomeUnknown, RetryAfter: SettleMargin,
	Message: "The payout's outcome is not known yet: the database did not confirm it in time, and it may have been sent. " +
		"Check the faucet's payouts (or retry a v2 send with the same idempotency_key, which never pays twice) before paying again."}

// Ledger moves money in a store.
type Ledger struct {
	store      store.Store
	now        func() time.Time
	batcher    *batcher
	generation func(gen store.CacheGen) // BatchConfig.Generation; nil: none
}

// New returns a ledger over st with the engine's default group commit; now
// is the clock (time.Now in production).
func New(st store.Store, now func() time.Time) *Ledger {
	return NewBatched(st, now, BatchConfig{})
}

// NewBatched returns a ledger whose payments are group-committed as cfg
// says (zero fields take the defaults, DefaultBatch).
func NewBatched(st store.Store, now func() time.Time, cfg BatchConfig) *Ledger {
	if now == nil {
		now = time.Now
	}
	l := &Ledger{store: st, now: now, generation: cfg.Generation}
	l.batcher = newBatcher(l, cfg)
	return l
}

// Close waits for every payment handed over to have its outcome, then stops
// the writers; Pay fails after Close.
func (l *Ledger) Close() { l.batcher.close() }

// Payment is a payout handed to the ledger: everything about the send has
// been checked except what must be checked inside the transaction (the
// owner's send limits, the key's daily USD cap and the balance).
type Payment struct {
	// ID is the payment's identity (D6): the id of the one outcome event
	// (payout.sent or payout.failed) its transaction writes, unique in the
	// database, so that applying it twice fails instead of paying. Pay
	// assigns a fresh one when it is empty.
	ID        string
	Faucet    *drip.Faucet
	Recipient *drip.User
	To        string // the destination as the caller gave it
	Coin      string
	Amount    int64
	IPAddress string
	Referral  string
	// Idempotency, for a v2 send, binds its idempotency key to the payout in
	// the payout's transaction (D35). Key, RequestHash and RateRemaining are
	// the caller's; the ledger fills in the rest.
	Idempotency *drip.Idempotency
	// Spend, for a send by a key with a daily USD cap, is counted against
	// the cap in the payout's transaction (D36).
	Spend *Spend
	// Generation, when not zero, is the cache generation the payment's key,
	// faucet and recipient were read from memory under, which no read has
	// confirmed yet (gencache.Unconfirmed). The payment's transaction reads
	// the generation and decides the payment only if it is still this
	// one; if not, the outcome is gencache.ErrStale and nothing of the
	// payment is written (D63).
	Generation store.CacheGen
}

// Spend is a payment's USD value counted against its key's daily cap.
type Spend struct {
	KeyID     int64
	Micros    int64 // the payment's value, millionths of a dollar, rounded up
	CapMicros int64
}

// Day is the UTC day a spend at t counts in: days since 1970-01-01.
func Day(t time.Time) int64 { return t.UTC().Unix() / 86400 }

// Receipt is a committed payout.
type Receipt struct {
	PayoutID int64
	Balance  int64 // the faucet's balance of the coin after the payout
}

// Pay hands a payment to the ledger and waits for its committed outcome:
// a receipt once the payout's transaction has committed, or a *drip.Error
// (send limit, claimer IP limit, daily USD cap, insufficient balance) for a
// refusal, whose payout.failed event is committed too. The caller does not
// know how the payout reaches the database, so group commit (D5) can
// gather concurrent payments behind this call without changing any caller.
//
// Once handed over, a payment runs to its outcome even if the caller goes
// away, so an outcome never depends on when a client hung up. ctx's
// deadline bounds it (payTimeout when it has none): the payment commits
// before it or never, and the answer comes by it, ErrOutcomeUnknown at
// worst (D6).
func (l *Ledger) Pay(ctx context.Context, p *Payment) (*Receipt, error) {
	if p.ID == "" {
		p.ID = newEventID()
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(payTimeout)
	}
	o := l.batcher.submit(p, deadline)
	if o.err != nil {
		return nil, o.err
	}
	if o.refusal != nil {
		return nil, o.refusal
	}
	return o.receipt, nil
}

// applied is the outcome of a payment whose transaction failed with err:
// err itself, unless err is a conflict on the payment's own identity, that
// is, the payment had been applied already (D6). Then nothing was paid
// twice, and the outcome is the one recorded: the payout, with the
// faucet's balance as it is now, or the refusal.
func (l *Ledger) applied(p *Payment, err error) outcome {
	if !errors.Is(err, store.ErrConflict) {
		return outcome{err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), SettleMargin)
	defer cancel()
	ev, gerr := l.store.EventGet(ctx, p.ID)
	if gerr != nil || ev.FaucetID != p.Faucet.ID {
		return outcome{err: err} // not this payment's: a key bound elsewhere (D35)
	}
	switch ev.Type {
	case drip.EventPayoutSent:
		var d drip.SentData
		if jerr := json.Unmarshal(ev.Data, &d); jerr != nil {
			return outcome{err: jerr}
		}
		id, perr := strconv.ParseInt(d.PayoutID, 10, 64)
		if perr != nil {
			return outcome{err: perr}
		}
		balance, berr := l.store.BalanceGet(ctx, p.Faucet.AccountID, p.Coin)
		if berr != nil {
			return outcome{err: berr}
		}
		return outcome{receipt: &Receipt{PayoutID: id, Balance: balance}}
	case drip.EventPayoutFailed:
		var d drip.FailedData
		if jerr := json.Unmarshal(ev.Data, &d); jerr != nil {
			return outcome{err: jerr}
		}
		return outcome{refusal: &drip.Error{Code: drip.Code(d.Error), Message: d.Message}}
	}
	return outcome{err: err}
}

// idempotencyKey is p's idempotency key; p.Idempotency is set.
func (p *Payment) idempotencyKey() store.IdempotencyKey {
	return store.IdempotencyKey{FaucetID: p.Faucet.ID, Key: p.Idempotency.Key}
}

// DailyCapReached is the refusal of a send past its key's daily USD cap (D36).
func DailyCapReached() *drip.Error {
	return drip.Errorf(drip.CodeDailyCap, "Daily USD cap reached: this key may send again after 00:00 UTC.")
}

// idempotency is the idempotency row of a paid payment, or nil (D35).
func idempotency(p *Payment, payoutID, balance int64, now time.Time) *drip.Idempotency {
	if p.Idempotency == nil {
		return nil
	}
	r := *p.Idempotency
	r.FaucetID, r.PayoutID, r.Coin, r.Balance = p.Faucet.ID, payoutID, p.Coin, balance
	r.PayoutUserHash, r.CreatedAt = p.Recipient.PayoutUserHash, now
	return &r
}

// lowBalance is the notification and event of a payment that took its
// faucet's balance below the owner's threshold, or nils (D43). Each
// crossing is one payout, so each crossing alerts once.
func lowBalance(p *Payment, after int64, now time.Time) (*drip.Notification, *drip.Event, error) {
	threshold, crossed := p.Faucet.LowBalance.Crossed(p.Coin, after+p.Amount, after)
	if !crossed {
		return nil, nil, nil
	}
	n := &drip.Notification{FaucetID: p.Faucet.ID, Kind: drip.NotifyLowBalance, Coin: p.Coin, Threshold: threshold,
		Balance: after, CreatedAt: now}
	ev, err := newEvent(newEventID(), p.Faucet.ID, drip.EventLowBalance, drip.LowBalanceData{
		Currency: p.Coin, Balance: after, BalanceBitcoin: json.Number(drip.FormatCoins(after)), Threshold: threshold,
		Message: "The faucet's " + p.Coin + " balance fell below the alert threshold.",
	}, now)
	return n, ev, err
}

func insufficientFunds(p *Payment) *drip.Error {
	return drip.Errorf(drip.CodeInsufficientFunds, "Insufficient funds: the faucet's %s balance is too low for this payout.", p.Coin)
}

// Move applies one double-entry transfer: the debit (refused with
// store.ErrInsufficientFunds if it would overdraw, except for
// system:deposits), the credit, and the journal row. It returns the sender's
// balance after the debit and the transfer's id. Services that move money
// together with records of their own (listing fees, D44) call it in their
// transaction; payouts go through Pay.
func Move(ctx context.Context, tx store.Tx, t *store.Transfer) (fromBalance, transferID int64, err error) {
	if t.From == drip.AccountDeposits {
		fromBalance, err = tx.BalanceCredit(ctx, t.From, t.Coin, -t.Amount)
	} else {
		fromBalance, err = tx.BalanceDebit(ctx, t.From, t.Coin, t.Amount)
	}
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.BalanceCredit(ctx, t.To, t.Coin, t.Amount); err != nil {
		return 0, 0, err
	}
	transferID, err = tx.TransferInsert(ctx, t)
	return fromBalance, transferID, err
}

// Deposit credits a faucet's balance from system:deposits, the account that
// mirrors money arriving from outside, and returns the new balance.
func (l *Ledger) Deposit(ctx context.Context, f *drip.Faucet, coin string, amount int64) (int64, error) {
	return l.DepositTo(ctx, f.AccountID, coin, amount, nil)
}

// DepositTo credits an account, a faucet's balance or a user's wallet, from
// system:deposits in one transfer, and returns the new balance. record,
// when not nil, runs in the deposit's transaction with the transfer's id
// and that balance: the record of who deposited (the operator log) commits
// with the money or not at all.
func (l *Ledger) DepositTo(ctx context.Context, accountID int64, coin string, amount int64,
	record func(tx store.Tx, transferID, balance int64) error) (int64, error) {
	if amount <= 0 {
		return 0, drip.Errorf(drip.CodeInvalidAmount, "Invalid amount: must be a positive integer in the smallest unit.")
	}
	if accountID == drip.AccountDeposits {
		return 0, drip.Errorf(drip.CodeInvalid, "A deposit comes from system:deposits: it cannot go to it.")
	}
	var balance int64
	err := l.store.Transact(ctx, func(tx store.Tx) error {
		_, transferID, err := Move(ctx, tx, &store.Transfer{
			Coin: coin, From: drip.AccountDeposits, To: accountID, Amount: amount, Kind: "deposit", CreatedAt: l.now(),
		})
		if err != nil {
			return err
		}
		if balance, err = tx.BalanceGet(ctx, accountID, coin); err != nil || record == nil {
			return err
		}
		return record(tx, transferID, balance)
	})
	return balance, err
}

// Fund moves amount of coin from a user's wallet to a faucet the user
// owns, as one transfer of kind "fund" in one transaction (the wallet's
// "fund this faucet", issue 11), and returns both balances after it.
// Another user's faucet is not found; a wallet holding less than amount
// is refused, and nothing moves.
func (l *Ledger) Fund(ctx context.Context, u *drip.User, f *drip.Faucet, coin string, amount int64) (wallet, faucet int64, err error) {
	if f.OwnerID != u.ID {
		return 0, 0, drip.Errorf(drip.CodeNotFound, "There is no such faucet among yours.")
	}
	if amount <= 0 {
		return 0, 0, drip.Errorf(drip.CodeInvalidAmount, "Invalid amount: it must be above zero.")
	}
	err = l.store.Transact(ctx, func(tx store.Tx) error {
		var err error
		if wallet, _, err = Move(ctx, tx, &store.Transfer{
			Coin: coin, From: u.AccountID, To: f.AccountID, Amount: amount, Kind: "fund", CreatedAt: l.now(),
		}); err != nil {
			return err
		}
		faucet, err = tx.BalanceGet(ctx, f.AccountID, coin)
		return err
	})
	if errors.Is(err, store.ErrInsufficientFunds) {
		return 0, 0, drip.Errorf(drip.CodeInsufficientFunds, "Insufficient funds: your wallet holds less than %s %s.", drip.FormatCoins(amount), coin)
	}
	return wallet, faucet, err
}

// RecordRefusal writes the payout.failed event of a send refused before it
// reached the ledger (invalid currency or amount, recipient not payable or
// refused), in its own transaction. Refusals decided inside Pay record theirs.
// blacklisted records, with it, that the faucet's blacklist refused the
// recipient, which counts toward their negative rank elsewhere (D42).
func (l *Ledger) RecordRefusal(ctx context.Context, p *Payment, refusal *drip.Error, blacklisted bool) error {
	return l.store.Transact(ctx, func(tx store.Tx) error {
		if p.Idempotency != nil {
			// A send whose key a payout has bound already is a retry of
			// that payout (D35): its caller replays the payout, whatever
			// refuses the send now, and nothing is recorded.
			_, err := tx.IdempotencyGet(ctx, p.Faucet.ID, p.Idempotency.Key)
			switch {
			case err == nil:
				return fmt.Errorf("ledger: payment %s: idempotency key bound already: %w", p.ID, store.ErrConflict)
			case !errors.Is(err, store.ErrNotFound):
				return err
			}
		}
		now := l.now()
		if blacklisted && p.Recipient != nil {
			if err := tx.RefusalInsert(ctx, p.Recipient.ID, p.Faucet.ID, now); err != nil {
				return err
			}
		}
		return insertFailedEvent(ctx, tx, p, refusal, now)
	})
}

func insertFailedEvent(ctx context.Context, tx store.Tx, p *Payment, refusal *drip.Error, now time.Time) error {
	ev, err := failedEvent(p, refusal, now)
	if err != nil {
		return err
	}
	return tx.EventInsert(ctx, ev)
}

// sentEvent is the payout.sent event of a paid payment, its outcome event.
func sentEvent(p *Payment, payoutID int64, now time.Time) (*drip.Event, error) {
	return newEvent(p.outcomeID(), p.Faucet.ID, drip.EventPayoutSent, drip.SentData{
		To: p.To, Amount: p.Amount, Currency: p.Coin, PayoutID: itoa(payoutID),
		PayoutUserHash: p.Recipient.PayoutUserHash, Message: "Payout sent.",
	}, now)
}

// failedEvent is the payout.failed event of a refused payment, its
// outcome event.
func failedEvent(p *Payment, refusal *drip.Error, now time.Time) (*drip.Event, error) {
	d := drip.FailedData{To: p.To, Amount: p.Amount, Currency: p.Coin, Error: string(refusal.Code), Message: refusal.Message}
	if s, ok := drip.V1Status(refusal); ok {
		d.Status = &s
	}
	return newEvent(p.outcomeID(), p.Faucet.ID, drip.EventPayoutFailed, d, now)
}

// outcomeID is the id of p's outcome event: its identity once Pay gave it
// one; refusals recorded before the ledger (RecordRefusal) get a fresh id.
func (p *Payment) outcomeID() string {
	if p.ID != "" {
		return p.ID
	}
	return newEventID()
}

func newEvent(id string, faucetID int64, typ string, data any, now time.Time) (*drip.Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return &drip.Event{ID: id, FaucetID: faucetID, Type: typ, Data: body, CreatedAt: now}, nil
}

func newEventID() string { return drip.NewEventID() }

package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

var errInjected = errors.New("injected store failure")

// faultyStore wraps a store to observe and break group commit (D5): it
// counts transactions and the payouts each inserted, fails the payout
// insert of one recipient, and can misreport a transaction's outcome.
type faultyStore struct {
	store.Store
	mu           sync.Mutex
	failTo       int64 // recipient user id whose payout insert fails; 0: none
	commitLies   int   // next N transactions: commit, then report the outcome unknown
	rollbackLies int   // next N transactions: roll back after fn succeeded, report the outcome unknown
	probeFails   int   // next N EventCommitted calls fail, as on a broken pool
	probes       int   // EventCommitted calls made
	batches      []int // payouts inserted by each committed-or-not transaction
	// gate, when set, is received from before each transaction begins:
	// the test holds the writer there, and closes it to let all pass.
	gate  chan struct{}
	gated int // transactions that reached the gate
}

// errLostCommit is a commit whose answer was lost (D6).
var errLostCommit = fmt.Errorf("%w: injected: the commit's answer was lost", store.ErrCommitUnknown)

func (s *faultyStore) EventCommitted(ctx context.Context, id string, faucetID int64) (bool, error) {
	s.mu.Lock()
	s.probes++
	s.mu.Unlock()
	if s.take(&s.probeFails) {
		return false, fmt.Errorf("%w: injected: connection reset", store.ErrUnavailable)
	}
	return s.Store.EventCommitted(ctx, id, faucetID)
}

func (s *faultyStore) take(n *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *n > 0 {
		*n--
		return true
	}
	return false
}

func (s *faultyStore) Transact(ctx context.Context, fn func(store.Tx) error) error {
	if s.gate != nil {
		s.mu.Lock()
		s.gated++
		s.mu.Unlock()
		<-s.gate
	}
	inserts := 0
	err := s.Store.Transact(ctx, func(tx store.Tx) error {
		inserts = 0
		if err := fn(&faultyTx{Tx: tx, s: s, inserts: &inserts}); err != nil {
			return err
		}
		if s.take(&s.rollbackLies) {
			return errLostCommit // rolled back, reported as a lost commit below
		}
		return nil
	})
	s.mu.Lock()
	s.batches = append(s.batches, inserts)
	s.mu.Unlock()
	if err == nil && s.take(&s.commitLies) {
		return errLostCommit
	}
	return err
}

type faultyTx struct {
	store.Tx
	s       *faultyStore
	inserts *int
}

func (tx *faultyTx) PayoutsInsert(ctx context.Context, b *store.PayoutBatch) error {
	for _, bp := range b.Payouts {
		if bp.Payout.RecipientID == tx.s.failTo {
			return errInjected
		}
	}
	*tx.inserts += len(b.Payouts)
	return tx.Tx.PayoutsInsert(ctx, b)
}

// oneBatch returns a ledger over fs that gathers exactly n payments into
// its first transaction: it waits (up to far longer than the test needs)
// until n are queued.
func oneBatch(e *env, fs *faultyStore, n int) *ledger.Ledger {
	return ledger.NewBatched(fs, e.clock.Now, ledger.BatchConfig{MaxSize: n, MaxWait: 30 * time.Second, Writers: 1})
}

// payAll hands every payment to l at once and returns the outcomes in order.
func payAll(l *ledger.Ledger, payments []*ledger.Payment) ([]*ledger.Receipt, []error) {
	return payAllCtx(context.Background(), l, payments)
}

// payAllCtx is payAll with the callers' context.
func payAllCtx(ctx context.Context, l *ledger.Ledger, payments []*ledger.Payment) ([]*ledger.Receipt, []error) {
	receipts, errs := make([]*ledger.Receipt, len(payments)), make([]error, len(payments))
	var wg sync.WaitGroup
	for i, p := range payments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			receipts[i], errs[i] = l.Pay(ctx, p)
		}()
	}
	wg.Wait()
	return receipts, errs
}

func payments(f *drip.Faucet, to []*drip.User, amount int64) []*ledger.Payment {
	out := make([]*ledger.Payment, len(to))
	for i, u := range to {
		out[i] = &ledger.Payment{Faucet: f, Recipient: u, To: u.Username, Coin: "BTC", Amount: amount}
	}
	return out
}

func (e *env) users8(t *testing.T) []*drip.User {
	us := make([]*drip.User, 8)
	for i := range us {
		us[i] = e.user(t, fmt.Sprintf("recipient%d", i))
	}
	return us
}

// D5: a batch holding payouts that would overdraw commits the others, in
// one transaction, and refuses exactly those.
func TestBatchRefusesOverdrawsAndCommitsTheRest(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 500})
		recipients := e.users8(t)
		fs := &faultyStore{Store: e.st}
		l := oneBatch(e, fs, 8)
		defer l.Close()

		receipts, errs := payAll(l, payments(f, recipients, 100))
		paid, refused := 0, 0
		for i := range receipts {
			switch {
			case errs[i] == nil && receipts[i] != nil:
				paid++
			case code(errs[i]) == drip.CodeInsufficientFunds:
				refused++
			default:
				t.Errorf("payment %d: unexpected outcome %v", i, errs[i])
			}
		}
		if paid != 5 || refused != 3 {
			t.Errorf("paid %d refused %d, want 5 and 3", paid, refused)
		}
		if fmt.Sprint(fs.batches) != "[5]" {
			t.Errorf("transactions (payouts each) %v, want one transaction of 5", fs.batches)
		}
		if b := e.balance(t, f.AccountID, "BTC"); b != 0 {
			t.Errorf("faucet balance %d, want 0", b)
		}
		failed := 0
		for _, ev := range e.events(t, f) {
			if ev.Type == drip.EventPayoutFailed {
				failed++
			}
		}
		if failed != 3 {
			t.Errorf("%d payout.failed events, want 3", failed)
		}
		e.reconciled(t)
	})
}

// D5: a store error in the middle of a batch applies none of it; each
// payment is then tried alone, so the bad one fails on its own, the others
// are paid exactly once, and every caller gets a definite answer.
func TestBatchFailureIsRetriedPaymentByPayment(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 10_000})
		recipients := e.users8(t)
		poisoned := recipients[3] // mid-batch: its failure undoes the batch's earlier statements
		fs := &faultyStore{Store: e.st, failTo: poisoned.ID}
		l := oneBatch(e, fs, 8)
		defer l.Close()

		receipts, errs := payAll(l, payments(f, recipients, 100))
		for i, u := range recipients {
			if u.ID == poisoned.ID {
				if !errors.Is(errs[i], errInjected) {
					t.Errorf("poisoned payment: err %v, want the injected error", errs[i])
				}
				continue
			}
			if errs[i] != nil || receipts[i] == nil {
				t.Errorf("payment to %s: %v, want paid", u.Username, errs[i])
			}
			if got := e.balance(t, u.AccountID, "BTC"); got != 100 {
				t.Errorf("%s holds %d, want 100 (paid exactly once)", u.Username, got)
			}
		}
		if got := e.balance(t, poisoned.AccountID, "BTC"); got != 0 {
			t.Errorf("poisoned recipient holds %d, want 0", got)
		}
		if got := len(e.payouts(t, f)); got != 7 {
			t.Errorf("%d payouts, want 7", got)
		}
		if got := e.balance(t, f.AccountID, "BTC"); got != 10_000-700 {
			t.Errorf("faucet balance %d, want %d", got, 10_000-700)
		}
		if len(fs.batches) != 9 || fs.batches[0] != 0 {
			t.Errorf("transactions (payouts each) %v, want a failed batch then 8 single tries", fs.batches)
		}
		e.reconciled(t)
	})
}

// D6: a transaction whose commit's answer was lost may or may not have
// committed. The batch is settled by asking the database, as often as it
// takes, whether one of its outcome events is committed: committed, its
// outcomes stand and nothing is retried; not committed, each payment is
// retried alone. A failed question is asked again, never read as "not
// committed" (issue 9: that paid a whole batch twice). Either way each
// payment is paid exactly once.
func TestBatchOutcomeMisreported(t *testing.T) {
	cases := []struct {
		name                                 string
		commitLies, rollbackLies, probeFails int
		transactions, probes                 int
	}{
		{"committed, reported lost", 1, 0, 0, 1, 1},
		{"rolled back, reported lost", 0, 1, 0, 9, 1},
		{"committed, reported lost, the first questions failing", 1, 0, 3, 1, 4},
		{"rolled back, reported lost, the first questions failing", 0, 1, 3, 9, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, e *env) {
				f := e.faucet(t, map[string]int64{"BTC": 10_000})
				recipients := e.users8(t)
				fs := &faultyStore{Store: e.st, commitLies: c.commitLies, rollbackLies: c.rollbackLies, probeFails: c.probeFails}
				l := oneBatch(e, fs, 8)
				defer l.Close()

				receipts, errs := payAll(l, payments(f, recipients, 100))
				for i := range receipts {
					if errs[i] != nil || receipts[i] == nil {
						t.Errorf("payment %d: %v, want paid", i, errs[i])
					}
				}
				if got := len(e.payouts(t, f)); got != 8 {
					t.Errorf("%d payouts, want 8 (none twice)", got)
				}
				for _, u := range recipients {
					if got := e.balance(t, u.AccountID, "BTC"); got != 100 {
						t.Errorf("%s holds %d, want 100 (paid exactly once)", u.Username, got)
					}
				}
				if len(fs.batches) != c.transactions {
					t.Errorf("transactions %v, want %d", fs.batches, c.transactions)
				}
				if fs.probes != c.probes {
					t.Errorf("%d questions to the database, want %d", fs.probes, c.probes)
				}
				e.reconciled(t)
			})
		})
	}
}

// D6: a lost commit that cannot be settled before the payments' deadline
// (the database does not answer) is answered ErrOutcomeUnknown, and never
// retried: the payments stand exactly as the database has them.
func TestBatchOutcomeUnknownAtDeadline(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 10_000})
		recipients := e.users8(t)
		fs := &faultyStore{Store: e.st, commitLies: 1, probeFails: 1 << 30}
		l := oneBatch(e, fs, 8)
		defer l.Close()

		ctx, cancel := context.WithTimeout(context.Background(), ledger.SettleMargin+time.Second)
		defer cancel()
		receipts, errs := payAllCtx(ctx, l, payments(f, recipients, 100))
		for i := range receipts {
			if !errors.Is(errs[i], ledger.ErrOutcomeUnknown) || drip.ErrorCode(errs[i]) != drip.CodeOutcomeUnknown {
				t.Errorf("payment %d: %v, want the outcome unknown", i, errs[i])
			}
		}
		if len(fs.batches) != 1 {
			t.Errorf("transactions %v, want the one batch, never retried", fs.batches)
		}
		if got := len(e.payouts(t, f)); got != 8 {
			t.Errorf("%d payouts, want the 8 the batch committed", got)
		}
		e.reconciled(t)
	})
}

// D6 by construction: a payment handed to the ledger again after it was
// applied (same identity) fails on the database's unique event id instead
// of paying, and answers the outcome first recorded.
func TestPaymentAppliedTwicePaysOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 1_000})
		u := e.user(t, "tess")
		l := ledger.NewBatched(e.st, e.clock.Now, ledger.BatchConfig{})
		defer l.Close()
		p := &ledger.Payment{Faucet: f, Recipient: u, To: "tess", Coin: "BTC", Amount: 300}
		first, err := l.Pay(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		again := *p // the same identity, p.ID, as a retry would carry it
		second, err := l.Pay(context.Background(), &again)
		if err != nil {
			t.Fatalf("second application: %v, want the first outcome", err)
		}
		if second.PayoutID != first.PayoutID {
			t.Errorf("second application answered payout %d, want %d", second.PayoutID, first.PayoutID)
		}
		if got := e.balance(t, u.AccountID, "BTC"); got != 300 {
			t.Errorf("recipient holds %d, want 300 (paid once)", got)
		}
		if got := len(e.payouts(t, f)); got != 1 {
			t.Errorf("%d payouts, want 1", got)
		}

		// A refusal's identity holds the same way: refused once, refused again.
		poor := &ledger.Payment{Faucet: f, Recipient: u, To: "tess", Coin: "BTC", Amount: 5_000}
		if _, err := l.Pay(context.Background(), poor); drip.ErrorCode(err) != drip.CodeInsufficientFunds {
			t.Fatalf("overdraw: %v, want insufficient balance", err)
		}
		retry := *poor
		if _, err := l.Pay(context.Background(), &retry); drip.ErrorCode(err) != drip.CodeInsufficientFunds {
			t.Fatalf("overdraw again: %v, want the recorded refusal", err)
		}
		e.reconciled(t)
	})
}

// Payouts spread over many faucets batch per writer; writers share
// recipients, so they must not deadlock or lose a payout (PostgreSQL runs
// them truly in parallel).
func TestBatchWritersShareRecipients(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		faucets := make([]*drip.Faucet, 8)
		for i := range faucets {
			faucets[i] = e.faucet(t, map[string]int64{"BTC": 1_000_000})
		}
		recipients := e.users8(t)
		l := ledger.NewBatched(e.st, e.clock.Now, ledger.BatchConfig{MaxSize: 64, Writers: 4})
		defer l.Close()
		var all []*ledger.Payment
		for round := 0; round < 50; round++ {
			for i, f := range faucets {
				// each faucet pays the recipients in its own rotation, so
				// concurrent batches touch shared rows in different orders
				u := recipients[(round+i*3)%len(recipients)]
				all = append(all, &ledger.Payment{Faucet: f, Recipient: u, To: u.Username, Coin: "BTC", Amount: 10})
			}
		}
		_, errs := payAll(l, all)
		for i, err := range errs {
			if err != nil {
				t.Fatalf("payment %d: %v", i, err)
			}
		}
		var credited int64
		for _, u := range recipients {
			credited += e.balance(t, u.AccountID, "BTC")
		}
		if credited != int64(len(all))*10 {
			t.Errorf("recipients hold %d, want %d", credited, len(all)*10)
		}
		e.reconciled(t)
	})
}

// Close lets handed-over payments finish and refuses new ones.
func TestLedgerClose(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 1000})
		u := e.user(t, "rita")
		l := ledger.NewBatched(e.st, e.clock.Now, ledger.BatchConfig{})
		if _, err := l.Pay(context.Background(), &ledger.Payment{Faucet: f, Recipient: u, To: "rita", Coin: "BTC", Amount: 1}); err != nil {
			t.Fatal(err)
		}
		l.Close()
		if _, err := l.Pay(context.Background(), &ledger.Payment{Faucet: f, Recipient: u, To: "rita", Coin: "BTC", Amount: 1}); err == nil {
			t.Fatal("Pay after Close succeeded")
		}
	})
}

// D63: a payment read from memory under a generation that has changed is
// neither decided nor written: it gets gencache.ErrStale, while the
// batch's other payments, current or not read from memory, are paid; the
// generation the batch read is told to BatchConfig.Generation.
func TestBatchLeavesStalePaymentsUndecided(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 1000})
		recipients := e.users8(t)
		gen, err := e.st.CacheGeneration(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var told []store.CacheGen
		fs := &faultyStore{Store: e.st}
		l := ledger.NewBatched(fs, e.clock.Now, ledger.BatchConfig{MaxSize: 3, MaxWait: time.Second, Writers: 1,
			Generation: func(g store.CacheGen) { told = append(told, g) }})
		defer l.Close()

		ps := payments(f, recipients[:3], 100)
		ps[0].Generation = gen                                                            // current
		ps[1].Generation = store.CacheGen{Keys: gen.Keys, Recipients: gen.Recipients - 1} // read before a change
		// ps[2] was not read from memory: its Generation is zero
		receipts, errs := payAll(l, ps)
		if errs[0] != nil || errs[2] != nil || receipts[0] == nil || receipts[2] == nil {
			t.Fatalf("current payments: %v, %v; want both paid", errs[0], errs[2])
		}
		if !errors.Is(errs[1], gencache.ErrStale) || receipts[1] != nil {
			t.Fatalf("stale payment: receipt %v, error %v; want ErrStale", receipts[1], errs[1])
		}
		if fmt.Sprint(fs.batches) != "[2]" {
			t.Errorf("transactions (payouts each) %v, want one of 2", fs.batches)
		}
		if b := e.balance(t, f.AccountID, "BTC"); b != 800 {
			t.Errorf("faucet balance %d, want 800", b)
		}
		for _, ev := range e.events(t, f) {
			if ev.ID == ps[1].ID {
				t.Errorf("the stale payment has an event: %s", ev.Type)
			}
		}
		if fmt.Sprint(told) != fmt.Sprint([]store.CacheGen{gen}) {
			t.Errorf("generations told %v, want [%+v]", told, gen)
		}
		e.reconciled(t)
	})
}

// D35: a payment whose idempotency key a payout has bound already is left
// undecided and unwritten in its batch (its caller replays that payout):
// it pays nothing, is refused nothing, records no event, and the batch's
// other payments are decided as if it were not there, in the same one
// transaction. A refusal recorded before the ledger is skipped alike.
func TestBatchLeavesBoundKeysUnwritten(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f := e.faucet(t, map[string]int64{"BTC": 450})
		recipients := e.users8(t)
		withKey := func(p *ledger.Payment, key string) *ledger.Payment {
			p.Idempotency = &drip.Idempotency{Key: key, RequestHash: "hash-" + key}
			return p
		}
		for _, key := range []string{"k1", "k2"} {
			if _, err := e.ledger.Pay(ctx, withKey(payments(f, recipients[:1], 100)[0], key)); err != nil {
				t.Fatalf("pay %s: %v", key, err)
			}
		}
		fs := &faultyStore{Store: e.st}
		l := oneBatch(e, fs, 8)
		defer l.Close()
		batch := payments(f, recipients, 100)
		for i, p := range batch {
			key := fmt.Sprintf("new%d", i)
			if i == 2 || i == 6 {
				key = fmt.Sprintf("k%d", i/4+1) // k1, k2: bound above
			}
			withKey(p, key)
		}
		_, errs := payAll(l, batch)
		paid, refused := 0, 0
		for i, err := range errs {
			switch {
			case i == 2 || i == 6:
				if !errors.Is(err, store.ErrConflict) {
					t.Errorf("payment %d (bound key): err %v, want ErrConflict", i, err)
				}
			case err == nil:
				paid++
			case code(err) == drip.CodeInsufficientFunds:
				refused++
			default:
				t.Errorf("payment %d: unexpected outcome %v", i, err)
			}
		}
		// 250 left: two of the six new keys paid, four refused.
		if paid != 2 || refused != 4 || fmt.Sprint(fs.batches) != "[2]" {
			t.Errorf("paid %d refused %d in transactions %v; want 2, 4 in one transaction [2]", paid, refused, fs.batches)
		}
		sent, failed := 0, 0
		for _, ev := range e.events(t, f) {
			switch ev.Type {
			case drip.EventPayoutSent:
				sent++
			case drip.EventPayoutFailed:
				failed++
			}
		}
		if sent != 4 || failed != 4 {
			t.Errorf("%d payout.sent and %d payout.failed events; want 4 and 4", sent, failed)
		}

		// Refused before the ledger: recorded for a free key only.
		refusal := drip.Errorf(drip.CodeRecipientUnknown, "not payable")
		if err := l.RecordRefusal(ctx, withKey(payments(f, recipients[:1], 100)[0], "k1"), refusal, false); !errors.Is(err, store.ErrConflict) {
			t.Errorf("RecordRefusal of a bound key: err %v, want ErrConflict", err)
		}
		if err := l.RecordRefusal(ctx, withKey(payments(f, recipients[:1], 100)[0], "free"), refusal, false); err != nil {
			t.Errorf("RecordRefusal of a free key: %v", err)
		}
		failed = 0
		for _, ev := range e.events(t, f) {
			if ev.Type == drip.EventPayoutFailed {
				failed++
			}
		}
		if failed != 5 {
			t.Errorf("%d payout.failed events after the two refusals, want 5 (the free key's only)", failed)
		}
		if b := e.balance(t, f.AccountID, "BTC"); b != 50 {
			t.Errorf("faucet balance %d, want 50", b)
		}
		e.reconciled(t)
	})
}

// D66: a committed batch tells BatchConfig.Paid its payouts faucet by
// faucet and coin by coin, as the store reads them back, each with the
// faucet's debit count of the coin before the batch, whether the batch
// paid from several balances or from one; a refused payment is not told,
// nor is anything of a batch that did not commit.
func TestBatchTellsItsPayouts(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		a := e.faucet(t, map[string]int64{"BTC": 1_000, "DOGE": 1_000})
		b := e.faucet(t, map[string]int64{"BTC": 1_000})
		recipients := e.users8(t)
		type told struct {
			faucet int64
			coin   string
			before int64
			ps     []drip.Payout
		}
		var mu sync.Mutex
		var got []told
		l := ledger.NewBatched(e.st, e.clock.Now, ledger.BatchConfig{MaxSize: 7, MaxWait: time.Second, Writers: 1,
			Paid: func(faucet int64, coin string, before int64, ps []drip.Payout) {
				mu.Lock()
				got = append(got, told{faucet, coin, before, ps})
				mu.Unlock()
			}})
		defer l.Close()
		// A time with nanoseconds: the store keeps microseconds.
		e.clock.Advance(1234567 * time.Nanosecond)
		for round := range 2 {
			ps := []*ledger.Payment{
				{Faucet: a, Recipient: recipients[0], To: "one", Coin: "BTC", Amount: 10, IPAddress: "198.51.100.7", Referral: "ref"},
				{Faucet: a, Recipient: recipients[1], To: "two", Coin: "BTC", Amount: 20},
				{Faucet: a, Recipient: recipients[2], To: "three", Coin: "DOGE", Amount: 30},
				{Faucet: b, Recipient: recipients[3], To: "four", Coin: "BTC", Amount: 40},
				{Faucet: b, Recipient: recipients[4], To: "poor", Coin: "BTC", Amount: 5_000}, // refused
				{Faucet: a, Recipient: recipients[5], To: "five", Coin: "BTC", Amount: 50},
				{Faucet: b, Recipient: recipients[6], To: "six", Coin: "BTC", Amount: 60},
			}
			_, errs := payAll(l, ps)
			for i, err := range errs {
				if (err != nil) != (i == 4) {
					t.Fatalf("round %d, payment %d: %v", round, i, err)
				}
			}
			e.clock.Advance(time.Second)
		}
		// A batch that pays from one balance only (a hot faucet's) is told
		// as one list too.
		one := []*ledger.Payment{
			{Faucet: a, Recipient: recipients[0], To: "one", Coin: "BTC", Amount: 1},
			{Faucet: a, Recipient: recipients[1], To: "two", Coin: "BTC", Amount: 2, IPAddress: "198.51.100.8"},
			{Faucet: a, Recipient: recipients[2], To: "three", Coin: "BTC", Amount: 3},
		}
		if _, errs := payAll(l, one); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatalf("one balance's batch: %v", errs)
		}
		// Each faucet and coin: what was told, batch by batch, newest batch
		// first, is what the store lists; the count before each batch is
		// the one after the batch before it.
		for _, fc := range []struct {
			f    *drip.Faucet
			coin string
		}{{a, "BTC"}, {a, "DOGE"}, {b, "BTC"}} {
			stored, err := e.st.PayoutList(ctx, &store.PayoutListParams{FaucetID: fc.f.ID, Coin: fc.coin, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var fromTold []drip.Payout
			var befores []int64
			for _, g := range got {
				if g.faucet == fc.f.ID && g.coin == fc.coin {
					befores = append(befores, g.before)
					batch := slices.Clone(g.ps)
					slices.Reverse(batch) // a batch's payouts share a time; the later id first
					fromTold = append(batch, fromTold...)
				}
			}
			if diff := cmp.Diff(stored, fromTold); diff != "" {
				t.Errorf("faucet %d %s: stored payouts (-) against those told (+):\n%s", fc.f.ID, fc.coin, diff)
			}
			want := []int64{0, 1}
			if fc.f == a && fc.coin == "BTC" {
				want = []int64{0, 1, 2} // and the one balance's batch
			}
			if !slices.Equal(befores, want) {
				t.Errorf("faucet %d %s: counts before its batches %v, want %v", fc.f.ID, fc.coin, befores, want)
			}
		}
		e.reconciled(t)
	})
}

// D5: a busy writer waits up to BusyWait for more payments, so its batch
// grows past what was queued, and ends the wait once it holds as many as
// its largest recent batch. The writer is held at each transaction while
// the next batch's payments queue, so that its batches take four payments
// each and come quickly; once its average batch reaches two, a batch of
// two queued payments waits for two more rather than commit. Without the
// wait the last batches are [2 2], not [4]; without its early end, the
// four wait the busy wait's 30 s.
func TestBusyWriterWaitsForMore(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 1000})
		us := e.users8(t)
		fs := &faultyStore{Store: e.st, gate: make(chan struct{})}
		l := ledger.NewBatched(fs, e.clock.Now, ledger.BatchConfig{BusyWait: 30 * time.Second, Writers: 1})
		defer l.Close()
		var wg sync.WaitGroup
		pay := func(u *drip.User) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := l.Pay(context.Background(), &ledger.Payment{Faucet: f, Recipient: u, To: u.Username, Coin: "BTC", Amount: 1}); err != nil {
					t.Error(err)
				}
			}()
		}
		until := func(done func() bool) {
			t.Helper()
			for end := time.Now().Add(30 * time.Second); !done(); time.Sleep(time.Millisecond) {
				if time.Now().After(end) {
					fs.mu.Lock()
					gated, batches := fs.gated, slices.Clone(fs.batches)
					fs.mu.Unlock()
					t.Fatalf("stuck: %d queued, %d transactions at the gate, batches %v", l.Queued(), gated, batches)
				}
			}
		}
		queued := func(n int) bool { return l.Queued() == n }
		gated := func(n int) bool {
			fs.mu.Lock()
			defer fs.mu.Unlock()
			return fs.gated == n
		}
		pay(us[0]) // the first batch, alone, held at its transaction
		until(func() bool { return gated(1) })
		for i := range 4 { // four batches of four, each queued while the one before is held
			for _, u := range us[:4] {
				pay(u)
			}
			until(func() bool { return queued(4) })
			fs.gate <- struct{}{}
			until(func() bool { return gated(i + 2) })
		}
		pay(us[4]) // two queued while the last is held: a busy writer takes them and waits for two more
		pay(us[5])
		until(func() bool { return queued(2) })
		fs.gate <- struct{}{}
		until(func() bool { return queued(0) })
		pay(us[6])
		pay(us[7])
		close(fs.gate)
		paid := make(chan struct{})
		go func() { wg.Wait(); close(paid) }()
		select {
		case <-paid:
		case <-time.After(10 * time.Second):
			t.Fatal("the last four were kept waiting: the busy wait did not end at the largest recent batch")
		}
		if want := []int{1, 4, 4, 4, 4, 4}; !slices.Equal(fs.batches, want) {
			t.Fatalf("batches %v, want %v", fs.batches, want)
		}
	})
}

// D5: a lone caller's batches take one payment each, so its writer is
// never busy and answers at once: with a busy wait of ten seconds, no
// payment of ten takes five.
func TestLoneCallerIsNotKeptWaiting(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f := e.faucet(t, map[string]int64{"BTC": 1000})
		u := e.user(t, "rita")
		fs := &faultyStore{Store: e.st}
		const wait = 10 * time.Second
		l := ledger.NewBatched(fs, e.clock.Now, ledger.BatchConfig{BusyWait: wait, Writers: 1})
		defer l.Close()
		for i := range 10 {
			start := time.Now()
			if _, err := l.Pay(context.Background(), &ledger.Payment{Faucet: f, Recipient: u, To: "rita", Coin: "BTC", Amount: 1}); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > wait/2 {
				t.Fatalf("payment %d took %s: held by the busy wait", i, took)
			}
		}
		if want := slices.Repeat([]int{1}, 10); !slices.Equal(fs.batches, want) {
			t.Fatalf("batches %v, want %v", fs.batches, want)
		}
	})
}

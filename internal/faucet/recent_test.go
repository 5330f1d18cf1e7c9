package faucet

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// listStore answers the two reads of recent: a faucet's debits, and a list
// of rows payouts long, whose reads wait on hold while it is set.
type listStore struct {
	store.Store
	debits atomic.Int64
	rows   int
	lists  atomic.Int64 // PayoutList calls
	hold   chan struct{}
}

func (s *listStore) BalanceDebits(_ context.Context, _ int64, coin string) ([]store.DebitCount, error) {
	if coin != "" && coin != "BTC" {
		return nil, nil
	}
	return []store.DebitCount{{Coin: "BTC", Debits: s.debits.Load()}}, nil
}

func (s *listStore) PayoutList(_ context.Context, p *store.PayoutListParams) ([]drip.Payout, error) {
	s.lists.Add(1)
	if s.hold != nil {
		<-s.hold
	}
	out := make([]drip.Payout, min(p.Limit, s.rows))
	for i := range out {
		out[i].ID = int64(s.rows - i)
	}
	return out, nil
}

// D66: a list is read again when its faucet's debits moved or a request
// asks for more rows than it holds (unless the faucet has no more), and
// not otherwise.
func TestRecentReadsAgainOnlyWhenItMust(t *testing.T) {
	st := &listStore{rows: 30}
	r, f, ctx := newRecent(), &drip.Faucet{ID: 1, AccountID: 2}, context.Background()
	steps := []struct {
		name        string
		debit       bool
		count, rows int
		reads       int64 // PayoutList calls in all after the step
	}{
		{"first read", false, 10, 10, 1},
		{"same count, nothing paid", false, 10, 10, 1},
		{"fewer rows", false, 5, 5, 1},
		{"more rows than kept", false, 20, 20, 2},
		{"a payout committed", true, 20, 20, 3},
		{"all the faucet has", false, 100, 30, 4},
		{"more than it has, nothing paid", false, 50, 30, 4},
	}
	for _, s := range steps {
		if s.debit {
			st.debits.Add(1)
		}
		got, err := r.get(ctx, st, f, "", s.count)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != s.rows || st.lists.Load() != s.reads {
			t.Errorf("%s: %d rows after %d list reads, want %d after %d", s.name, len(got), st.lists.Load(), s.rows, s.reads)
		}
	}
}

// Requests that miss while a read of their list runs wait for it instead
// of reading the same rows again.
func TestRecentSharesAReadUnderWay(t *testing.T) {
	st := &listStore{rows: 10, hold: make(chan struct{})}
	r, f, ctx := newRecent(), &drip.Faucet{ID: 1, AccountID: 2}, context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := r.get(ctx, st, f, "", 10); err != nil || len(got) != 10 {
				t.Errorf("get: %d rows, %v", len(got), err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let every request reach the read under way
	close(st.hold)
	wg.Wait()
	if n := st.lists.Load(); n != 1 {
		t.Errorf("8 requests at once made %d list reads, want 1", n)
	}
}

// At most recentLists lists are kept, whatever the number of faucets read.
func TestRecentKeepsAtMostItsBound(t *testing.T) {
	st := &listStore{rows: 1}
	r := newRecent()
	for id := range int64(recentLists + 50) {
		if _, err := r.get(context.Background(), st, &drip.Faucet{ID: id, AccountID: id}, "", 10); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.lists); n > recentLists {
		t.Errorf("%d lists kept, at most %d", n, recentLists)
	}
}

// bookStore is a faucet's payouts and debit counts, as a database holds
// them, for the lists' model test.
type bookStore struct {
	store.Store
	mu     sync.Mutex
	rows   []drip.Payout // every payout, in no order
	counts map[string]int64
	reads  int    // PayoutList calls
	onList func() // when set, run as a list read starts (after the counts' read)
}

func (s *bookStore) BalanceDebits(_ context.Context, _ int64, coin string) ([]store.DebitCount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.DebitCount
	for _, c := range []string{"BTC", "DOGE", "LTC"} {
		if n, ok := s.counts[c]; ok && (coin == "" || coin == c) {
			out = append(out, store.DebitCount{Coin: c, Debits: n})
		}
	}
	return out, nil
}

func (s *bookStore) PayoutList(_ context.Context, p *store.PayoutListParams) ([]drip.Payout, error) {
	if s.onList != nil {
		s.onList()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.latest(p.Coin, p.Limit), nil
}

// latest is what PayoutList answers. s.mu is held.
func (s *bookStore) latest(coin string, limit int) []drip.Payout {
	var out []drip.Payout
	for _, p := range s.rows {
		if coin == "" || p.Coin == coin {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b drip.Payout) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return int(b.ID - a.ID)
	})
	return out[:min(limit, len(out))]
}

// commit writes a batch of n payouts of coin at time at, as the ledger
// does: it raises the coin's count by one. It returns the count before
// and the payouts.
func (s *bookStore) commit(coin string, n int, at time.Time, nextID *int64) (int64, []drip.Payout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var batch []drip.Payout
	for range n {
		*nextID++
		batch = append(batch, drip.Payout{ID: *nextID, FaucetID: 1, Coin: coin, Amount: *nextID, CreatedAt: at})
	}
	s.rows = append(s.rows, batch...)
	before := s.counts[coin]
	s.counts[coin] = before + 1
	return before, batch
}

// D66 with this node's batches taken in (paid): whatever mix of this
// node's batches, other nodes' batches (never told to paid), debits that
// pay nothing and reads of every coin or one, with several payouts in
// one microsecond and clocks that go back, each read answers exactly
// what the database holds, and this node's batches spare the reads that
// would read them again.
func TestRecentTakesInItsBatchesExactly(t *testing.T) {
	for _, others := range []bool{false, true} {
		told, reads := modelRecent(t, true, others)
		untold, _ := modelRecent(t, false, others)
		t.Logf("other writers %v, %d reads: %d list reads from the store with this node's batches taken in, %d without", others, reads, told, untold)
		if told >= untold {
			t.Errorf("other writers %v: %d list reads with this node's batches taken in, against %d without", others, told, untold)
		}
		// With this node the only writer, a list is read again only when
		// a request asks for more rows than it holds.
		if !others && told*20 > reads {
			t.Errorf("this node alone: %d of %d reads read the store", told, reads)
		}
	}
}

// modelRecent runs one seeded mix of batches and reads, with other
// nodes' batches and debits that pay nothing if others, telling paid this
// node's batches if tell; it checks every read against the store, and
// returns the store's list reads and the reads made.
func modelRecent(t *testing.T, tell, others bool) (storeReads, reads int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	st := &bookStore{counts: map[string]int64{"BTC": 0, "DOGE": 0}}
	r, f, ctx := newRecent(), &drip.Faucet{ID: 1, AccountID: 2}, context.Background()
	coins := []string{"BTC", "DOGE", "LTC"}
	base := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var nextID int64
	for step := range 2500 {
		// Time mostly goes on, sometimes stays, sometimes goes back a
		// little (another node's clock).
		at := base.Add(time.Duration(step/3-rng.IntN(3)) * time.Microsecond)
		coin := coins[rng.IntN(len(coins))]
		op := rng.IntN(10)
		if !others && op == 3 || !others && op == 4 {
			op = 0
		}
		switch {
		case op < 3: // this node's batch
			before, batch := st.commit(coin, 1+rng.IntN(5), at, &nextID)
			if tell {
				r.paid(f.ID, coin, before, batch)
			}
		case op < 4: // another node's batch
			st.commit(coin, 1+rng.IntN(5), at, &nextID)
		case op < 5: // a debit that pays nothing (a withdrawal)
			st.mu.Lock()
			st.counts[coin]++
			st.mu.Unlock()
		default:
			if rng.IntN(2) == 0 {
				coin = ""
			}
			count := 1 + rng.IntN(30)
			got, err := r.get(ctx, st, f, coin, count)
			if err != nil {
				t.Fatal(err)
			}
			st.mu.Lock()
			want := st.latest(coin, count)
			st.mu.Unlock()
			if !slices.EqualFunc(got, want, func(a, b drip.Payout) bool { return a.ID == b.ID && a.CreatedAt.Equal(b.CreatedAt) }) {
				t.Fatalf("step %d: get(%q, %d) = %v\nwant %v", step, coin, count, ids(got), ids(want))
			}
			reads++
		}
	}
	return st.reads, reads
}

func ids(ps []drip.Payout) []int64 {
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// A batch is taken only into a list kept under the count it raised: not
// into one kept under an older count, which lacks another node's payouts.
func TestRecentPaidNeedsTheCountBefore(t *testing.T) {
	st := &bookStore{counts: map[string]int64{"BTC": 0}}
	r, f, ctx := newRecent(), &drip.Faucet{ID: 1, AccountID: 2}, context.Background()
	var nextID int64
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := r.get(ctx, st, f, "BTC", 10); err != nil {
		t.Fatal(err)
	}
	st.commit("BTC", 2, at, &nextID) // another node's
	before, mine := st.commit("BTC", 1, at.Add(time.Second), &nextID)
	r.paid(f.ID, "BTC", before, mine)
	got, err := r.get(ctx, st, f, "BTC", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || st.reads != 2 {
		t.Errorf("after another node's batch and this one's: %v from %d reads, want 3 payouts read again (2 reads)", ids(got), st.reads)
	}
}

// A list read just after a batch committed, under the count before it,
// already holds the batch's payouts: taking the batch in lists each once.
func TestRecentPaidIntoAListThatHasIt(t *testing.T) {
	st := &bookStore{counts: map[string]int64{"BTC": 0}}
	r, f, ctx := newRecent(), &drip.Faucet{ID: 1, AccountID: 2}, context.Background()
	var nextID int64
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.commit("BTC", 2, at, &nextID)
	var before int64
	var batch []drip.Payout
	st.onList = func() { // the batch commits between the counts' read and the list's
		st.onList = nil
		before, batch = st.commit("BTC", 3, at.Add(time.Second), &nextID)
	}
	if got, err := r.get(ctx, st, f, "", 10); err != nil || len(got) != 5 {
		t.Fatalf("first read: %v, %v; want 5 payouts", ids(got), err)
	}
	r.paid(f.ID, "BTC", before, batch)
	got, err := r.get(ctx, st, f, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{5, 4, 3, 2, 1}; !slices.Equal(ids(got), want) || st.reads != 1 {
		t.Errorf("after the batch was taken in: %v from %d list reads, want %v from 1", ids(got), st.reads, want)
	}
}

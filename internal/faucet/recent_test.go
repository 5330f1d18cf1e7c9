package faucet

import (
	"context"
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

func (s *listStore) BalanceDebits(context.Context, int64, string) (int64, error) {
	return s.debits.Load(), nil
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

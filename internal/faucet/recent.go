package faucet

import (
	"context"
	"slices"
	"sync"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// recent keeps each faucet's latest payouts (v1 /payouts, the tool
// server's get_payouts) in memory, each list with the sum of the debits
// its faucet's balances had taken when it was read (D66). Every
// transaction that writes a faucet's payouts debits the faucet, and the
// sum never goes back, so a list read under a sum at least the one read
// after a request arrived holds every payout committed before the
// request, as a read of the database would. A faucet's page was 100 rows
// decoded one column at a time; the sum is one row.
type recent struct {
	mu    sync.Mutex
	lists map[recentKey]*recentList
	// reads are the lists being read, one a key: a request that finds
	// one read under a sum at least its own waits for it instead of
	// reading the same rows again (a payout batch makes every reader of
	// its faucet miss at once).
	reads map[recentKey]*recentRead
}

type recentKey struct {
	faucet int64
	coin   string // "": every coin
}

// recentList is a faucet's latest payouts, newest first: at most limit
// rows, all there were when fewer. It is never changed once stored.
type recentList struct {
	debits int64
	limit  int
	rows   []drip.Payout
}

// serves reports whether l answers a request for count rows whose sum
// of debits, read after it arrived, was debits.
func (l *recentList) serves(debits int64, count int) bool {
	return l != nil && l.debits >= debits && (len(l.rows) >= count || len(l.rows) < l.limit)
}

// recentRead is a list being read; done is closed once list or err is set.
type recentRead struct {
	debits int64
	limit  int
	done   chan struct{}
	list   *recentList
	err    error
}

// recentLists bounds the lists kept, one a faucet and coin filter in use:
// at most 100 rows each, about 20 MB in all.
const recentLists = 1024

func newRecent() *recent {
	return &recent{lists: map[recentKey]*recentList{}, reads: map[recentKey]*recentRead{}}
}

// get returns the faucet's latest count payouts of coin ("": every coin).
// The slice is shared: callers must not change its rows.
func (r *recent) get(ctx context.Context, st store.Store, f *drip.Faucet, coin string, count int) ([]drip.Payout, error) {
	// The sum first: a list read after it is never older than its tag.
	debits, err := st.BalanceDebits(ctx, f.AccountID, coin)
	if err != nil {
		return nil, err
	}
	k := recentKey{f.ID, coin}
	r.mu.Lock()
	if l := r.lists[k]; l.serves(debits, count) {
		r.mu.Unlock()
		return head(l.rows, count), nil
	}
	if rd := r.reads[k]; rd != nil && rd.debits >= debits && rd.limit >= count {
		r.mu.Unlock()
		select {
		case <-rd.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if rd.err == nil {
			return head(rd.list.rows, count), nil
		}
		// Another request's failure (its deadline, say) is not this
		// one's: it reads for itself.
		rows, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Coin: coin, Limit: count})
		return rows, err
	}
	// A faucet read with several counts keeps the largest asked.
	limit := count
	if l := r.lists[k]; l != nil {
		limit = max(limit, l.limit)
	}
	rd := &recentRead{debits: debits, limit: limit, done: make(chan struct{})}
	r.reads[k] = rd
	r.mu.Unlock()

	rows, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Coin: coin, Limit: limit})
	r.mu.Lock()
	if r.reads[k] == rd {
		delete(r.reads, k)
	}
	if err == nil {
		rd.list = &recentList{debits: debits, limit: limit, rows: rows}
		r.store(k, rd.list)
	}
	rd.err = err
	close(rd.done)
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return head(rows, count), nil
}

// store keeps l unless the list kept was read under a later sum. r.mu is held.
func (r *recent) store(k recentKey, l *recentList) {
	cur, ok := r.lists[k]
	if ok && cur.debits > l.debits {
		return
	}
	if !ok && len(r.lists) >= recentLists {
		for old := range r.lists { // any one: Go's map order is random
			delete(r.lists, old)
			break
		}
	}
	r.lists[k] = l
}

// head is the first n rows of rows, without room to append into them.
func head(rows []drip.Payout, n int) []drip.Payout {
	return slices.Clip(rows[:min(n, len(rows))])
}

package faucet

import (
	"context"
	"slices"
	"sync"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// recent keeps each faucet's latest payouts (v1 /payouts, the tool
// server's get_payouts) in memory, each list with the debit counts its
// faucet's balances had when it was read, by coin (D66). Every
// transaction that writes a faucet's payouts of a coin debits the
// faucet's balance of that coin, raising its count by one, and a count
// never goes back, so a list read under counts each at least the one
// read after a request arrived holds every payout committed before the
// request, as a read of the database would. A faucet's page was 100 rows
// decoded one column at a time; the counts are a row a coin.
//
// This node's own payout batches are taken into the lists they extend
// (paid) rather than read again: a batch that raised the faucet's count
// of a coin from n to n+1 holds every payout of that coin committed
// between the two, so a list kept under n takes them and is kept under
// n+1. Counts of other coins are left as they are, which is why they are
// kept coin by coin: a sum of every coin's could be raised as much by
// another node's batch of another coin.
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
	counts []store.DebitCount // by coin
	limit  int
	rows   []drip.Payout
}

// serves reports whether l answers a request for count rows whose debit
// counts, read after it arrived, were counts.
func (l *recentList) serves(counts []store.DebitCount, count int) bool {
	return l != nil && covers(l.counts, counts) && (len(l.rows) >= count || len(l.rows) < l.limit)
}

// covers reports whether each count of want is at most have's of its
// coin. A coin have lacks counts zero: its balance had taken no debit,
// and paid no payout, when have was read.
func covers(have, want []store.DebitCount) bool {
	for _, w := range want {
		if debitsOf(have, w.Coin) < w.Debits {
			return false
		}
	}
	return true
}

func debitsOf(counts []store.DebitCount, coin string) int64 {
	for _, c := range counts {
		if c.Coin == coin {
			return c.Debits
		}
	}
	return 0
}

// recentRead is a list being read; done is closed once list or err is set.
type recentRead struct {
	counts []store.DebitCount
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
	// The counts first: a list read after them is never older than its tag.
	counts, err := st.BalanceDebits(ctx, f.AccountID, coin)
	if err != nil {
		return nil, err
	}
	k := recentKey{f.ID, coin}
	r.mu.Lock()
	if l := r.lists[k]; l.serves(counts, count) {
		r.mu.Unlock()
		return head(l.rows, count), nil
	}
	if rd := r.reads[k]; rd != nil && covers(rd.counts, counts) && rd.limit >= count {
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
	rd := &recentRead{counts: counts, limit: limit, done: make(chan struct{})}
	r.reads[k] = rd
	r.mu.Unlock()

	rows, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Coin: coin, Limit: limit})
	r.mu.Lock()
	if r.reads[k] == rd {
		delete(r.reads, k)
	}
	if err == nil {
		rd.list = &recentList{counts: counts, limit: limit, rows: rows}
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

// store keeps l unless the list kept is later: under counts that cover
// l's, and not the same. r.mu is held.
func (r *recent) store(k recentKey, l *recentList) {
	cur, ok := r.lists[k]
	if ok && covers(cur.counts, l.counts) && !covers(l.counts, cur.counts) {
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

// paid takes in the payouts of a faucet in one coin that a batch of this
// node committed, the batch having raised the faucet's debit count of
// that coin from before to before+1. A list of that coin, or of every
// coin, kept under the count before holds every payout committed up to
// it: with the batch's it holds every one up to before+1, and is kept
// under that. A list under another count is left to be read again.
func (r *recent) paid(faucetID int64, coin string, before int64, payouts []drip.Payout) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range []recentKey{{faucetID, coin}, {faucetID, ""}} {
		l := r.lists[k]
		if l == nil || debitsOf(l.counts, coin) != before {
			continue
		}
		r.lists[k] = &recentList{counts: withDebits(l.counts, coin, before+1), limit: l.limit, rows: newest(l.rows, payouts, l.limit)}
	}
}

// withDebits is counts with coin's count set to n, in a new slice (a
// kept list is never changed).
func withDebits(counts []store.DebitCount, coin string, n int64) []store.DebitCount {
	out := make([]store.DebitCount, 0, len(counts)+1)
	set := false
	for _, c := range counts {
		if c.Coin == coin {
			c.Debits, set = n, true
		}
		out = append(out, c)
	}
	if !set {
		out = append(out, store.DebitCount{Coin: coin, Debits: n})
	}
	return out
}

// newest is the first limit of kept and added together, in a list's
// order (drip.NewestFirst), each payout once: kept may hold some of added
// already, when it was read after the batch committed.
func newest(kept, added []drip.Payout, limit int) []drip.Payout {
	added = slices.Clone(added)
	slices.SortFunc(added, drip.NewestFirst)
	in := make(map[int64]bool, len(added))
	for _, p := range added {
		in[p.ID] = true
	}
	out := make([]drip.Payout, 0, min(limit, len(kept)+len(added)))
	i, j := 0, 0
	for len(out) < limit {
		if i < len(kept) && in[kept[i].ID] {
			i++
			continue
		}
		switch {
		case i < len(kept) && (j == len(added) || drip.NewestFirst(kept[i], added[j]) < 0):
			out = append(out, kept[i])
			i++
		case j < len(added):
			out = append(out, added[j])
			j++
		default:
			return out
		}
	}
	return out
}

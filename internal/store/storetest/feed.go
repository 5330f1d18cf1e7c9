package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the events feed (D59): EventFeed reads a faucet's
// events in an order no later commit can change, so that a reader paging
// with the last position it read never skips an event and never reads
// one twice, however the writers' transactions interleave.

// feedTypes are the types the feed serves.
var feedTypes = []string{drip.EventPayoutSent, drip.EventPayoutFailed, drip.EventLowBalance}

// feedWait bounds how long a test waits for the feed to show what was
// committed: on PostgreSQL the feed holds back events of transactions
// above its snapshot's xmin, which any transaction of the cluster (a
// parallel test's) may hold down for a moment.
const feedWait = 30 * time.Second

// insertEvents commits events in one transaction.
func insertEvents(t testing.TB, st store.Store, events ...drip.Event) {
	t.Helper()
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i := range events {
			if err := tx.EventInsert(ctx, &events[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// feedAll reads the faucet's feed after pos in pages of limit until a
// read comes back empty.
func feedAll(t testing.TB, st store.Reader, faucetID int64, after store.EventPosition, types []string, limit int) []store.EventAt {
	t.Helper()
	var out []store.EventAt
	for {
		page, err := st.EventFeed(context.Background(), &store.EventFeedParams{FaucetID: faucetID, After: after, Types: types, Limit: limit})
		if err != nil {
			t.Fatalf("EventFeed: %v", err)
		}
		if len(page) > limit {
			t.Fatalf("EventFeed with limit %d read %d events", limit, len(page))
		}
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Position
	}
}

// feedUntil reads the whole feed after pos until it holds n events or
// feedWait passes.
func feedUntil(t testing.TB, st store.Reader, faucetID int64, n int) []store.EventAt {
	t.Helper()
	deadline := time.Now().Add(feedWait)
	for {
		got := feedAll(t, st, faucetID, store.EventPosition{}, feedTypes, 100)
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventIDs(list []store.EventAt) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Event.ID
	}
	return out
}

// testEventFeedReadsInOrderPerFaucet: the feed of a faucet is its events
// in the order they were written, with their data, paged by position;
// another faucet's events are never in it; a type not asked for comes
// without its data.
func testEventFeedReadsInOrderPerFaucet(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	ev := func(id string, faucetID int64, typ, data string) drip.Event {
		return drip.Event{ID: id, FaucetID: faucetID, Type: typ, Data: []byte(data), CreatedAt: t0}
	}
	insertEvents(t, st, ev("evt_1", f.ID, drip.EventPayoutSent, `{"n":1}`), ev("evt_g1", g.ID, drip.EventPayoutSent, `{"g":1}`))
	insertEvents(t, st, ev("evt_2", f.ID, drip.EventPayoutFailed, `{"n":2}`))
	insertEvents(t, st, ev("evt_3", f.ID, drip.EventLowBalance, `{"n":3}`), ev("evt_4", f.ID, drip.EventWebhookTest, `{"n":4}`),
		ev("evt_5", f.ID, drip.EventPayoutSent, `{"n":5}`))

	all := feedUntil(t, st, f.ID, 5)
	if diff := cmp.Diff([]string{"evt_1", "evt_2", "evt_3", "evt_4", "evt_5"}, eventIDs(all)); diff != "" {
		t.Fatalf("the feed of f (-want +got):\n%s", diff)
	}
	for i, e := range all {
		if e.Event.FaucetID != f.ID || !e.Event.CreatedAt.Equal(t0) {
			t.Errorf("event %s: faucet %d, time %v; want %d, %v", e.Event.ID, e.Event.FaucetID, e.Event.CreatedAt, f.ID, t0)
		}
		if i > 0 && !after(e.Position, all[i-1].Position) {
			t.Errorf("event %s at %+v is not after %s at %+v", e.Event.ID, e.Position, all[i-1].Event.ID, all[i-1].Position)
		}
		want := fmt.Sprintf(`{"n":%d}`, i+1)
		if e.Event.Type == drip.EventWebhookTest {
			want = "" // not a type asked for: no data
		}
		if string(e.Event.Data) != want {
			t.Errorf("event %s: data %q, want %q", e.Event.ID, e.Event.Data, want)
		}
	}
	// Pages of 2 read the same, each after the last position read.
	if diff := cmp.Diff(eventIDs(all), eventIDs(feedAll(t, st, f.ID, store.EventPosition{}, feedTypes, 2))); diff != "" {
		t.Errorf("the feed of f in pages of 2 (-want +got):\n%s", diff)
	}
	page, err := st.EventFeed(ctx, &store.EventFeedParams{FaucetID: f.ID, After: all[1].Position, Types: feedTypes, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"evt_3", "evt_4"}, eventIDs(page)); diff != "" {
		t.Errorf("2 events after evt_2 (-want +got):\n%s", diff)
	}
	// Only payout.failed asked for: every event is read, only its data.
	for _, e := range feedAll(t, st, f.ID, store.EventPosition{}, []string{drip.EventPayoutFailed}, 10) {
		if (e.Event.Type == drip.EventPayoutFailed) != (e.Event.Data != nil) {
			t.Errorf("types payout.failed: event %s (%s) has data %q", e.Event.ID, e.Event.Type, e.Event.Data)
		}
	}
	if got := feedAll(t, st, f.ID, all[4].Position, feedTypes, 10); len(got) != 0 {
		t.Errorf("the feed after its last event: %v, want none", eventIDs(got))
	}
	// g's feed is g's event alone, from the start or from f's positions.
	if diff := cmp.Diff([]string{"evt_g1"}, eventIDs(feedUntil(t, st, g.ID, 1))); diff != "" {
		t.Errorf("the feed of g (-want +got):\n%s", diff)
	}
	if got := feedAll(t, st, 999999, store.EventPosition{}, feedTypes, 10); len(got) != 0 {
		t.Errorf("the feed of a faucet that does not exist: %v", eventIDs(got))
	}
}

// after reports whether position a comes after b in the feed.
func after(a, b store.EventPosition) bool {
	return a.TxID > b.TxID || (a.TxID == b.TxID && a.Seq > b.Seq)
}

// testEventFeedHoldsBackWhatAnOpenTransactionPrecedes: transaction A
// writes event A1 and stays open; transaction B then writes B1 and, on
// PostgreSQL, commits first: its seq is larger than A1's, but a reader
// that read B1 now and went on after it would never read A1. So the feed
// shows neither while A is open, and then A1, A's later A2 (written after
// B1 committed, so with a larger seq than B1's) and B1, in that order.
// On SQLite B waits for A's write lock, and the feed reads the same.
// A feed ordered by seq alone fails this test on PostgreSQL.
func testEventFeedHoldsBackWhatAnOpenTransactionPrecedes(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	ev := func(id string) drip.Event {
		return drip.Event{ID: id, FaucetID: f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0}
	}
	insertEvents(t, st, ev("evt_0"))
	start := feedUntil(t, st, f.ID, 1)
	if len(start) != 1 {
		t.Fatalf("the feed before the test: %v, want evt_0", eventIDs(start))
	}
	cursor := start[0].Position

	aWrote, release, aDone := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		aDone <- st.Transact(ctx, func(tx store.Tx) error {
			a1 := ev("evt_a1")
			if err := tx.EventInsert(ctx, &a1); err != nil {
				return err
			}
			close(aWrote)
			<-release // held well within PostgreSQL's idle_in_transaction_session_timeout (1 s)
			a2 := ev("evt_a2")
			return tx.EventInsert(ctx, &a2)
		})
	}()
	<-aWrote
	bDone := make(chan error, 1)
	go func() {
		b1 := ev("evt_b1")
		bDone <- try(st, func(ctx context.Context, tx store.Tx) error { return tx.EventInsert(ctx, &b1) })
	}()
	bCommitted := false
	select {
	case err := <-bDone: // PostgreSQL: B does not wait for A
		if err != nil {
			close(release)
			t.Fatalf("B: %v", err)
		}
		bCommitted = true
	case <-time.After(300 * time.Millisecond): // SQLite: B waits for A's write lock
	}
	held := feedAll(t, st, f.ID, cursor, feedTypes, 100)
	close(release)
	if err := <-aDone; err != nil {
		t.Fatalf("A: %v", err)
	}
	if !bCommitted {
		if err := <-bDone; err != nil {
			t.Fatalf("B: %v", err)
		}
	}
	t.Logf("B committed while A was open: %v", bCommitted)
	if len(held) != 0 {
		t.Errorf("while A was open, the feed read %v: a reader that went on after them would never read A's events", eventIDs(held))
	}
	got := feedUntil(t, st, f.ID, 4)
	if diff := cmp.Diff([]string{"evt_0", "evt_a1", "evt_a2", "evt_b1"}, eventIDs(got)); diff != "" {
		t.Errorf("the feed once A and B committed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"evt_a1", "evt_a2", "evt_b1"}, eventIDs(feedAll(t, st, f.ID, cursor, feedTypes, 1))); diff != "" {
		t.Errorf("the feed after evt_0's position, one at a time (-want +got):\n%s", diff)
	}
}

// testEventFeedPagesThroughConcurrentWritersWithoutGapsOrRepeats is the
// test of issue 17: a reader pages through 10,000 events, 100 at a time,
// each page after the last position it read, while writers commit them
// in transactions of 1 to 20 events that overlap (each pauses between
// its writes, so on PostgreSQL their seqs interleave and they commit out
// of seq order). The reader reads every event exactly once, each writer's
// in the order it wrote them.
func testEventFeedPagesThroughConcurrentWritersWithoutGapsOrRepeats(t *testing.T, st store.Store) {
	const writers, total = 8, 10000
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	other := newFaucet(t, st, owner, "key2")

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			for n := 0; n < total/writers; {
				size := min(1+rng.IntN(20), total/writers-n)
				first := n
				err := st.Transact(ctx, func(tx store.Tx) error {
					for i := range size {
						e := drip.Event{ID: fmt.Sprintf("evt_w%d_%05d", w, first+i), FaucetID: f.ID, Type: drip.EventPayoutSent,
							Data: []byte(`{}`), CreatedAt: t0}
						if err := tx.EventInsert(ctx, &e); err != nil {
							return err
						}
						if rng.IntN(10) == 0 { // another faucet's event in the same transaction
							o := drip.Event{ID: e.ID + "_other", FaucetID: other.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0}
							if err := tx.EventInsert(ctx, &o); err != nil {
								return err
							}
						}
						if rng.IntN(4) == 0 {
							time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
						}
					}
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
				n += size
			}
		})
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	seen := map[string]bool{}
	lastOf := map[string]string{} // writer -> the last id read of it
	var cursor store.EventPosition
	// Once the writers are done, every event is committed: the feed must
	// read the rest within feedWait.
	pages, progress := 0, time.Now()
	for len(seen) < total {
		select {
		case <-writing:
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if time.Since(progress) > feedWait {
				t.Fatalf("read %d of %d events in %d pages, none in the %v since the writers ended: the feed skipped some", len(seen), total, pages, feedWait)
			}
		default:
			progress = time.Now()
		}
		page, err := st.EventFeed(ctx, &store.EventFeedParams{FaucetID: f.ID, After: cursor, Types: feedTypes, Limit: 100})
		if err != nil {
			t.Fatalf("EventFeed: %v", err)
		}
		pages++
		for _, e := range page {
			id := e.Event.ID
			if e.Event.FaucetID != f.ID {
				t.Fatalf("the feed of f read %s of faucet %d", id, e.Event.FaucetID)
			}
			if seen[id] {
				t.Fatalf("read %s twice (page %d)", id, pages)
			}
			seen[id] = true
			writer := id[:len("evt_wN")]
			if id <= lastOf[writer] {
				t.Fatalf("read %s after %s of the same writer", id, lastOf[writer])
			}
			lastOf[writer] = id
			if !after(e.Position, cursor) {
				t.Fatalf("%s at %+v is not after the cursor %+v", id, e.Position, cursor)
			}
			cursor = e.Position
			progress = time.Now()
		}
		if len(page) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	<-writing
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if rest := feedAll(t, st, f.ID, cursor, feedTypes, 100); len(rest) != 0 {
		t.Errorf("after reading all %d, the feed has more: %v", total, eventIDs(rest))
	}
	t.Logf("read %d events in %d pages while %d writers committed them", total, pages, writers)
}

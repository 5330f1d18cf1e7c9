package gencache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// source is a generation in memory whose reads can be held, to order them
// against changes.
type source struct {
	keys, recipients atomic.Int64
	reads            atomic.Int64
	hold             chan chan struct{} // when set, each read announces itself and waits
}

// set moves both counters to n: a change to a user's row.
func (s *source) set(n int64) { s.keys.Store(n); s.recipients.Store(n) }

// at is the generation whose counters are both n.
func at(n int64) store.CacheGen { return store.CacheGen{Keys: n, Recipients: n} }

func (s *source) read(ctx context.Context) (store.CacheGen, error) {
	s.reads.Add(1)
	g := store.CacheGen{Keys: s.keys.Load(), Recipients: s.recipients.Load()} // the read's snapshot, taken as it starts
	if s.hold != nil {
		release := make(chan struct{})
		s.hold <- release
		<-release
	}
	return g, nil
}

// A caller is never answered by a read that began before it called: that
// read's snapshot may predate a change the caller must see (D63, D13).
func TestGenerationReadStartsAfterTheCall(t *testing.T) {
	t.Parallel()
	src := &source{hold: make(chan chan struct{})}
	src.set(1)
	g := NewGeneration(src.read)
	ctx := context.Background()

	first := make(chan store.CacheGen)
	go func() { gen, _ := g.Current(ctx); first <- gen }()
	releaseFirst := <-src.hold // the first read runs, its snapshot gen 1

	src.set(2) // a change commits while it runs
	second := make(chan store.CacheGen)
	go func() { gen, _ := g.Current(ctx); second <- gen }()
	time.Sleep(20 * time.Millisecond) // let the second caller wait
	select {
	case gen := <-second:
		t.Fatalf("the second caller was answered %d by a read that began before it", gen)
	default:
	}
	close(releaseFirst)
	if gen := <-first; gen != at(1) {
		t.Fatalf("first caller: generation %d, want 1", gen)
	}
	close(<-src.hold) // the second read, begun after the change
	if gen := <-second; gen != at(2) {
		t.Fatalf("second caller: generation %d, want 2 (the change it followed)", gen)
	}
}

// Callers that arrive while a read runs share the next read: under load,
// one query serves a round of requests.
func TestGenerationSharesReads(t *testing.T) {
	t.Parallel()
	src := &source{hold: make(chan chan struct{})}
	g := NewGeneration(src.read)
	ctx := context.Background()
	go func() { _, _ = g.Current(ctx) }()
	release := <-src.hold
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = g.Current(ctx) }()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	close(<-src.hold)
	wg.Wait()
	if n := src.reads.Load(); n != 2 {
		t.Errorf("51 callers made %d reads, want 2: the one under way and one shared by the 50", n)
	}
}

// A caller that gives up does not fail the others sharing its read.
func TestGenerationCallerGivesUp(t *testing.T) {
	t.Parallel()
	src := &source{hold: make(chan chan struct{})}
	src.set(7)
	g := NewGeneration(src.read)
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error)
	go func() { _, err := g.Current(ctx); gaveUp <- err }()
	other := make(chan store.CacheGen)
	go func() { gen, _ := g.Current(context.Background()); other <- gen }()
	release := <-src.hold
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("the caller who gave up got %v, want unavailable (D58) for its canceled context", err)
	}
	close(release)
	// The other caller may share that read or need one more.
	select {
	case gen := <-other:
		if gen != at(7) {
			t.Fatalf("other caller: %d, want 7", gen)
		}
	case release := <-src.hold:
		close(release)
		if gen := <-other; gen != at(7) {
			t.Fatalf("other caller: %d, want 7", gen)
		}
	}
}

func TestCache(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set(1)
	c := New[string, int](NewGeneration(src.read), Keys, 2)
	ctx := context.Background()
	loads := 0
	value := 10
	load := func(context.Context) (int, error) { loads++; return value, nil }

	get := func(k string) int {
		t.Helper()
		v, err := c.Get(ctx, k, load)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := get("a"); v != 10 || loads != 1 {
		t.Fatalf("first get: %d after %d loads", v, loads)
	}
	value = 11 // changed in the database, but the generation says not
	if v := get("a"); v != 10 || loads != 1 {
		t.Fatalf("cached get: %d after %d loads, want 10 from memory", v, loads)
	}
	src.set(2) // the change's transaction raised the generation
	if v := get("a"); v != 11 || loads != 2 {
		t.Fatalf("after the generation moved: %d after %d loads, want 11 read again", v, loads)
	}

	// Refusals are not kept.
	refused := errors.New("no such key")
	for range 2 {
		if _, err := c.Get(ctx, "missing", func(context.Context) (int, error) { loads++; return 0, refused }); !errors.Is(err, refused) {
			t.Fatalf("got %v, want the load's error", err)
		}
	}
	if loads != 4 {
		t.Fatalf("two refused gets made %d loads in all, want 4", loads)
	}

	// At most max values are held.
	get("b")
	get("c")
	c.mu.Lock()
	n := len(c.m)
	c.mu.Unlock()
	if n > 2 {
		t.Fatalf("%d values held, max 2", n)
	}
}

// A pinned request reads the generation once for all its caches, and only
// after it was pinned: a change committed before still reaches it.
func TestPinned(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set(1)
	g := NewGeneration(src.read)
	other := NewGeneration(func(context.Context) (store.CacheGen, error) { return at(99), nil })
	faucets, users := New[int, string](g, Keys, 10), New[int, string](g, Recipients, 10)
	load := func(v string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return v, nil }
	}
	ctx := context.Background()
	if _, err := faucets.Get(ctx, 1, load("faucet")); err != nil { // warm, unpinned
		t.Fatal(err)
	}
	src.set(2) // a change commits
	reads := src.reads.Load()

	req := Pinned(ctx)
	if v, _ := faucets.Get(req, 1, load("faucet, changed")); v != "faucet, changed" {
		t.Fatalf("pinned request read %q: the change before it was pinned was missed", v)
	}
	if _, err := users.Get(req, 1, load("user")); err != nil {
		t.Fatal(err)
	}
	if n := src.reads.Load() - reads; n != 1 {
		t.Errorf("a pinned request with two caches made %d generation reads, want 1", n)
	}
	if gen, _ := other.Current(req); gen != at(99) {
		t.Errorf("another Generation answered %d through the pin, want its own 99", gen)
	}
}

// Rounds that follow one another are each a read begun after their
// callers called, all on the one reader; Close stops it, and a caller
// after that is answered unavailable when its own time ends, never with a
// generation no read gave.
func TestGenerationRoundsInTurnAndClose(t *testing.T) {
	t.Parallel()
	src := &source{}
	g := NewGeneration(src.read)
	ctx := context.Background()
	for want := int64(1); want <= 100; want++ {
		src.set(want) // a change commits before each call
		if gen, err := g.Current(ctx); err != nil || gen != at(want) {
			t.Fatalf("round %d: generation %d, %v", want, gen, err)
		}
	}
	if n := src.reads.Load(); n != 100 {
		t.Errorf("100 calls in turn made %d reads, want 100", n)
	}
	g.Close()
	g.Close() // twice is harmless
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if gen, err := g.Current(short); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("after Close: generation %d, error %v; want ErrUnavailable", gen, err)
	}
}

// An optimistic pin takes the latest generation known without a read, and
// only a confirmation makes it good: Confirm reads again and returns
// ErrStale when a change committed meanwhile; a pin confirmed (by Confirm
// or Confirmed) is no longer Unconfirmed. Before any read, it reads.
func TestOptimistic(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set(5)
	g := NewGeneration(src.read)
	ctx := context.Background()

	cold := Optimistic(ctx)
	if gen, err := g.Current(cold); err != nil || gen != at(5) || src.reads.Load() != 1 {
		t.Fatalf("optimistic before any read: generation %d, %v, %d reads; want 5 from one read", gen, err, src.reads.Load())
	}
	if gen := Unconfirmed(cold); gen != (store.CacheGen{}) {
		t.Errorf("a pin that read is unconfirmed at %d", gen)
	}

	warm := Optimistic(ctx)
	if gen, _ := g.Current(warm); gen != at(5) || src.reads.Load() != 1 {
		t.Fatalf("optimistic with 5 known: generation %d after %d reads; want 5 without a read", gen, src.reads.Load())
	}
	if gen := Unconfirmed(warm); gen != at(5) {
		t.Fatalf("Unconfirmed = %d, want 5", gen)
	}
	if err := Confirm(warm); err != nil || Unconfirmed(warm) != (store.CacheGen{}) {
		t.Fatalf("Confirm with no change: %v, unconfirmed %d", err, Unconfirmed(warm))
	}

	stale := Optimistic(ctx)
	g.Current(stale)
	src.set(6) // a change commits after the pin took 5
	if err := Confirm(stale); !errors.Is(err, ErrStale) {
		t.Fatalf("Confirm after a change: %v, want ErrStale", err)
	}
	if g.Known() != at(6) {
		t.Errorf("Known = %d after a read found 6", g.Known())
	}
	g.Observe(at(4)) // an older read reported late
	if g.Known() != at(6) {
		t.Errorf("Known went back to %d", g.Known())
	}

	paid := Optimistic(ctx)
	g.Current(paid)
	Confirmed(paid) // a transaction found it current
	reads := src.reads.Load()
	if err := Confirm(paid); err != nil || src.reads.Load() != reads {
		t.Errorf("Confirm after Confirmed: %v, %d more reads", err, src.reads.Load()-reads)
	}
	if err := Confirm(ctx); err != nil {
		t.Errorf("Confirm without a pin: %v", err)
	}
}

// Each cache is tagged with its own counter: a change to keys or faucets
// reloads none of the recipients, a new user none of the faucets, and a
// change to a user's row (both counters) reloads both.
func TestCacheParts(t *testing.T) {
	t.Parallel()
	src := &source{}
	src.set(1)
	g := NewGeneration(src.read)
	faucets, users := New[int, int](g, Keys, 10), New[int, int](g, Recipients, 10)
	ctx := context.Background()
	loads := map[string]int{}
	get := func(name string, c *Cache[int, int]) {
		t.Helper()
		if _, err := c.Get(ctx, 1, func(context.Context) (int, error) { loads[name]++; return 1, nil }); err != nil {
			t.Fatal(err)
		}
	}
	both := func(step string, faucetLoads, userLoads int) {
		t.Helper()
		get("faucet", faucets)
		get("user", users)
		if loads["faucet"] != faucetLoads || loads["user"] != userLoads {
			t.Errorf("%s: %d faucet and %d user loads in all, want %d and %d", step, loads["faucet"], loads["user"], faucetLoads, userLoads)
		}
	}
	both("first reads", 1, 1)
	both("nothing changed", 1, 1)
	src.keys.Add(1) // a faucet's settings
	both("after a faucet changed", 2, 1)
	src.recipients.Add(1) // a new user
	both("after a new user", 2, 2)
	src.keys.Add(1) // a user's status: both
	src.recipients.Add(1)
	both("after a user changed", 3, 3)
	if !g.Known().After(at(2)) || at(2).After(g.Known()) {
		t.Errorf("Known %+v is not after %+v", g.Known(), at(2))
	}
}

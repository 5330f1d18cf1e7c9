// Package gencache serves from memory the reads every send makes before
// the ledger (its key, the key's faucet and owner, its recipient) without
// ever answering with what a committed change has made stale (D63).
//
// The database keeps the cache generation, which every change to those
// rows raises in its own transaction (migrations 0016 and 0021): two
// counters, one for keys and faucets, one for recipients. A cached value
// is kept with its cache's counter as read, and served only while the
// generation read after the request arrived still has that counter. So a
// change committed before a request arrived is seen by that request on
// every node, as if nothing were cached (D13: a rotated key is dead at
// once), while the read that replaces the two or three queries of
// a send is one tiny query, and one for all the requests that arrive while
// the previous one runs (Generation). A send need not wait for that read
// at all: under an optimistic pin it takes the latest generation known,
// and its payment's transaction, which reads the generation anyway, pays
// it only if that is still the one; if not, the send is served again, as
// of a read after it arrived (Optimistic).
package gencache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// Generation reads the cache generation for many callers at once. A
// caller is answered by a read that started after it called, never by one
// already under way: that read may have taken its snapshot before a change
// the caller must see. Callers that arrive while a read runs share the
// next one, so under load one query serves a whole round of requests.
//
// The reads run on one goroutine for the Generation's life, not one a
// round: a new goroutine's small stack grew to SQLite's depth in every
// round, a third of a round's cost under load (issue 16).
type Generation struct {
	read    func(ctx context.Context) (store.CacheGen, error)
	wake    chan struct{} // holds a token while a round waits for the reader
	stop    chan struct{} // closed by Close
	closing sync.Once

	known atomic.Pointer[store.CacheGen] // the latest generation a read found (Known)

	mu   sync.Mutex
	next *round // the round the next read answers; nil: none waiting
}

// round is one read of the generation and those waiting for it.
type round struct {
	done chan struct{}
	gen  store.CacheGen
	err  error
}

// NewGeneration makes a Generation over read, the store's query, and
// starts its reader, which Close stops.
func NewGeneration(read func(ctx context.Context) (store.CacheGen, error)) *Generation {
	g := &Generation{read: read, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	go g.reader()
	return g
}

// Close stops the reader. Callers waiting then, or calling later, wait
// until their own context ends.
func (g *Generation) Close() { g.closing.Do(func() { close(g.stop) }) }

// Pinned is ctx in which the first read of a generation is kept and
// answers the later ones: a request's reads (its key, its faucet, its
// recipient) then wait for one read of the generation, not one each. The
// read still begins after the request arrived, so D63 holds; the values
// are those of one moment, as when the request read them from the
// database one after another.
func Pinned(ctx context.Context) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{})
}

// Optimistic is Pinned, except that the pin takes the latest generation
// known (Known) without waiting for a read, and the request must have it
// confirmed before anything it read under it is acted on or answered: by
// Confirm, a read begun after the request arrived, or by a transaction
// that reads the generation itself and finds it unchanged (the ledger's,
// for a payment: Unconfirmed, Confirmed). Should it have changed, the
// request gets ErrStale and is served again under Pinned, so D63 holds as
// for Pinned. A send is answered once its payment commits, and the
// payment's transaction checks the generation anyway: the send then
// waits for no read of its own, a tenth of its server time (issue 16).
// Before any generation was read, the pin waits for a read as Pinned.
func Optimistic(ctx context.Context) context.Context {
	return context.WithValue(ctx, pinKey{}, &pin{optimistic: true})
}

// ErrStale is the error of a request served under an optimistic pin
// (Optimistic) whose generation had changed: nothing it read from memory
// may be acted on, and it is to be served again under Pinned.
var ErrStale = errors.New("gencache: the cache generation changed since the request's values were read")

type pinKey struct{}

// pin is the generation a request read first, and of which Generation.
// An optimistic pin's generation is unconfirmed until a later read finds
// it unchanged.
type pin struct {
	mu          sync.Mutex
	of          *Generation
	gen         store.CacheGen
	optimistic  bool
	unconfirmed bool
}

// Current is the cache generation as of a moment after the call began, or
// after ctx was pinned (Pinned) when ctx was; under an optimistic pin
// (Optimistic), the latest known, to be confirmed.
func (g *Generation) Current(ctx context.Context) (store.CacheGen, error) {
	p, _ := ctx.Value(pinKey{}).(*pin)
	if p == nil {
		return g.current(ctx)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.of == g {
		return p.gen, nil
	}
	if p.optimistic && p.of == nil {
		if known := g.Known(); known != (store.CacheGen{}) {
			p.of, p.gen, p.unconfirmed = g, known, true
			return known, nil
		}
	}
	gen, err := g.current(ctx)
	if err == nil && p.of == nil {
		p.of, p.gen = g, gen
	}
	return gen, err
}

// Known is the latest generation any read has found (a round, or a
// transaction's through Observe); zero before the first.
func (g *Generation) Known() store.CacheGen {
	if known := g.known.Load(); known != nil {
		return *known
	}
	return store.CacheGen{}
}

// Observe records a generation a read found, so that optimistic pins take
// it; generations only grow, so an older one is ignored.
func (g *Generation) Observe(gen store.CacheGen) {
	for {
		known := g.known.Load()
		if known != nil && !gen.After(*known) || g.known.CompareAndSwap(known, &gen) {
			return
		}
	}
}

// Unconfirmed is the generation ctx's optimistic pin took, while no read
// has confirmed it, else zero: a transaction that acts on what the request
// read must find the generation still this one (the ledger's check of a
// payment).
func Unconfirmed(ctx context.Context) store.CacheGen {
	p, _ := ctx.Value(pinKey{}).(*pin)
	if p == nil {
		return store.CacheGen{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.unconfirmed {
		return store.CacheGen{}
	}
	return p.gen
}

// Confirmed records that a read begun after ctx's request arrived found
// its pinned generation unchanged (the ledger's, in the transaction that
// paid the request's payment), so Confirm has nothing left to read.
func Confirmed(ctx context.Context) {
	if p, _ := ctx.Value(pinKey{}).(*pin); p != nil {
		p.mu.Lock()
		p.unconfirmed = false
		p.mu.Unlock()
	}
}

// Confirm makes what ctx's request read from memory as good as read after
// it arrived: under an unconfirmed optimistic pin, it reads the generation
// and returns ErrStale if it changed. Otherwise, and without a pin, it
// returns nil at once.
func Confirm(ctx context.Context) error {
	p, _ := ctx.Value(pinKey{}).(*pin)
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.unconfirmed {
		return nil
	}
	gen, err := p.of.current(ctx)
	if err != nil {
		return err
	}
	if gen != p.gen {
		return ErrStale
	}
	p.unconfirmed = false
	return nil
}

func (g *Generation) current(ctx context.Context) (store.CacheGen, error) {
	g.mu.Lock()
	r := g.next
	if r == nil {
		r = &round{done: make(chan struct{})}
		g.next = r
		select {
		case g.wake <- struct{}{}:
		default: // the reader has a token already and will take this round
		}
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.gen, r.err
	case <-ctx.Done():
		// The database did not answer in the request's time: an outage
		// (D58), answered as such, not an internal error.
		return store.CacheGen{}, fmt.Errorf("%w: waiting for the cache generation: %w", store.ErrUnavailable, ctx.Err())
	}
}

// reader runs the rounds one after another: each round it takes was made
// before it took it, so its read starts after every caller of that round
// called. Each read runs on its own context: one caller giving up must not
// fail the others who share it.
func (g *Generation) reader() {
	for {
		select {
		case <-g.wake:
		case <-g.stop:
			return
		}
		g.mu.Lock()
		r := g.next
		g.next = nil
		g.mu.Unlock()
		if r == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		r.gen, r.err = g.read(ctx)
		cancel()
		if r.err == nil {
			g.Observe(r.gen)
		}
		close(r.done)
	}
}

// readTimeout bounds one read of the generation; a caller's own deadline
// still ends its wait sooner.
const readTimeout = 5 * time.Second

// Cache holds values read under a generation, at most max of them, each
// tagged with the counter of the generation that covers it (Part). Only
// successful loads are kept: a refusal (an unknown key, say) is read again
// each time, so nothing said "no" from memory can outlive its cause either.
type Cache[K comparable, V any] struct {
	gen  *Generation
	part Part
	max  int

	mu sync.Mutex
	m  map[K]entry[V]
}

type entry[V any] struct {
	v   V
	gen int64
}

// Part is the counter of a generation that covers a cache's values.
type Part func(store.CacheGen) int64

// Keys covers keys and faucets, with their owners' standing.
func Keys(g store.CacheGen) int64 { return g.Keys }

// Recipients covers what destinations resolve to.
func Recipients(g store.CacheGen) int64 { return g.Recipients }

// New makes a cache of at most max values over part of gen.
func New[K comparable, V any](gen *Generation, part Part, max int) *Cache[K, V] {
	return &Cache[K, V]{gen: gen, part: part, max: max, m: make(map[K]entry[V])}
}

// Get is the value of k: from memory when it was read under the current
// generation, else from load, which is then kept. A value from memory is
// shared with other callers: they must not change it.
func (c *Cache[K, V]) Get(ctx context.Context, k K, load func(ctx context.Context) (V, error)) (V, error) {
	current, err := c.gen.Current(ctx)
	if err != nil {
		var zero V
		return zero, err
	}
	gen := c.part(current)
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok && e.gen == gen {
		return e.v, nil
	}
	// Read after the generation, so what is read is at least as new as gen:
	// should a change commit between the two, the value is newer than its
	// tag, and the next generation read discards it; never the reverse.
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m) // a bound, not an eviction policy: the working set reloads
	}
	if old, ok := c.m[k]; !ok || old.gen <= gen {
		c.m[k] = entry[V]{v: v, gen: gen}
	}
	c.mu.Unlock()
	return v, nil
}

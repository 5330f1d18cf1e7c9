// Package faultproxy is a TCP proxy that injects network faults on command, so
// tests can put PostgreSQL or Redis behind a reset, a partition or a slow link
// in the middle of a transaction.
//
// A Proxy forwards every connection it accepts to one target. Its faults apply
// to all the connection pairs it holds:
//
//   - ResetAll aborts every pair with a TCP RST on both sides.
//   - Stall behaves like a partition that TCP retransmission outlives: nothing
//     is delivered while it is on, nothing is lost, and what was held arrives in
//     order once it is lifted.
//   - Refuse resets new connections as soon as they are accepted.
//   - Delay and Throttle slow each direction down.
//   - ResetWhenServerSends resets every pair the first time the server sends a
//     given byte pattern.
//
// The last one produces the fault a payout service must survive: a commit
// whose outcome the client cannot know. PostgreSQL answers COMMIT with a
// CommandComplete message whose tag is "COMMIT\x00", so
//
//	fired := proxy.ResetWhenServerSends([]byte("COMMIT\x00"))
//	err := tx.Commit(ctx) // fails with a connection error,
//	<-fired               // yet the transaction is committed on the server.
//
// The server commits, the client sees its connection reset instead of the
// reply, and the pool's other connections die at the same moment, so whatever
// the client does next starts from a fresh connection and must find out what
// happened. Only bytes from the server are watched: the client's own "COMMIT"
// query text does not set the trigger off.
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback address to a target and
// injects faults into them. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // cancelled by Close, so no dial outlives it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the proxy started

	mu       sync.Mutex
	closed   bool
	pairs    map[*pair]struct{}
	stalled  bool
	flowing  chan struct{} // closed while traffic flows, open while stalled
	refuse   bool
	delay    time.Duration
	rate     int // bytes per second per direction, 0 for unlimited
	triggers []*trigger
	stats    Stats
}

// Stats counts what a Proxy has done.
type Stats struct {
	Accepted int // connections accepted for forwarding
	Refused  int // connections reset on accept because Refuse was on
	Resets   int // pairs aborted by ResetAll or a ResetWhenServerSends trigger
	Open     int // pairs open now
}

// Start listens on a loopback port and forwards each connection it accepts to
// target, a host:port. The target need not be up: connections to a target that
// refuses them are reset.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	flowing := make(chan struct{})
	close(flowing)
	p := &Proxy{
		target:  target,
		ln:      ln,
		ctx:     ctx,
		cancel:  cancel,
		pairs:   make(map[*pair]struct{}),
		flowing: flowing,
	}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address clients connect to, "127.0.0.1:port".
func (p *Proxy) Addr() string {
	return p.ln.Addr().String()
}

// Close stops accepting, closes every connection and waits for the proxy's
// goroutines to end. It does not wait for a stall to lift. Calling it again
// does nothing.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	pairs := slices.Collect(maps.Keys(p.pairs))
	p.mu.Unlock()

	p.cancel()
	err := p.ln.Close()
	for _, pr := range pairs {
		p.teardown(pr, false)
	}
	p.wg.Wait()
	return err
}

// ResetAll aborts every open pair with a TCP RST to both the client and the
// server, and reports how many pairs it aborted. A stall does not hold the
// resets back. New connections are still accepted and forwarded.
func (p *Proxy) ResetAll() int {
	p.mu.Lock()
	pairs := slices.Collect(maps.Keys(p.pairs))
	p.mu.Unlock()

	n := 0
	for _, pr := range pairs {
		if p.teardown(pr, true) {
			n++
		}
	}
	p.mu.Lock()
	p.stats.Resets += n
	p.mu.Unlock()
	return n
}

// Stall holds all traffic while on, as a network partition does when TCP
// retransmission outlives it. Open connections stay open but nothing is
// delivered in either direction, including data the proxy read before the stall
// began; new connections are accepted but not connected to the target. Nothing
// is dropped: when the stall is lifted, new connections are connected and held
// data is delivered in order. A write already under way when Stall(true) is
// called completes.
func (p *Proxy) Stall(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on == p.stalled {
		return
	}
	p.stalled = on
	if on {
		p.flowing = make(chan struct{})
	} else {
		close(p.flowing)
	}
}

// Refuse, while on, resets each new connection as soon as it is accepted.
// The kernel has completed the handshake by then, so a client sees the reset
// either in its connect or on its first read or write, before any byte is
// exchanged. Open connections are unaffected.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// Delay holds each chunk read in either direction for d before forwarding it,
// so a round trip takes at least 2d longer. Chunks stay in order, and each
// direction is delayed one chunk at a time, so a long stream is slowed too.
// A d of zero or less turns the delay off.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = max(d, 0)
}

// Throttle limits each direction of each connection to bytesPerSecond.
// Zero or less means unlimited.
func (p *Proxy) Throttle(bytesPerSecond int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = max(bytesPerSecond, 0)
}

// Stats reports what the proxy has done so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Open = len(p.pairs)
	return s
}

func (p *Proxy) accept() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: back off and try again, as net/http does.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		pr, ok := p.admit(conn)
		if !ok {
			continue
		}
		p.wg.Go(func() { p.connect(pr) })
	}
}

// admit decides what becomes of an accepted connection: a tracked pair, or,
// while refusing or closed, nothing.
func (p *Proxy) admit(conn net.Conn) (*pair, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		conn.Close()
		return nil, false
	case p.refuse:
		p.stats.Refused++
		abort(conn)
		return nil, false
	}
	pr := newPair(conn)
	p.pairs[pr] = struct{}{}
	p.stats.Accepted++
	return pr, true
}

// connect dials the target for pr and then forwards server to client, leaving
// the other direction to a goroutine of its own.
func (p *Proxy) connect(pr *pair) {
	// A partition holds the handshake too: the target hears of the connection
	// only once the stall is lifted.
	if !p.waitFlowing(pr) {
		return
	}
	var d net.Dialer
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		// The client sees what it would have seen connecting to the target itself.
		p.teardown(pr, true)
		return
	}
	if !pr.attach(server) {
		server.Close()
		return
	}
	p.wg.Go(func() { p.pump(pr, pr.client, server, false) })
	p.pump(pr, server, pr.client, true)
}

// teardown closes both sides of pr, with an RST if rst, and forgets it. It
// reports false if pr was already torn down.
func (p *Proxy) teardown(pr *pair, rst bool) bool {
	if !pr.kill(rst) {
		return false
	}
	p.mu.Lock()
	delete(p.pairs, pr)
	p.mu.Unlock()
	return true
}

// waitFlowing blocks while the proxy is stalled. It reports false if pr was
// torn down meanwhile.
func (p *Proxy) waitFlowing(pr *pair) bool {
	p.mu.Lock()
	flowing := p.flowing
	p.mu.Unlock()
	select {
	case <-pr.done:
		return false
	default:
	}
	select {
	case <-flowing:
		return true
	case <-pr.done:
		return false
	}
}

func (p *Proxy) latency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

func (p *Proxy) bandwidth() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

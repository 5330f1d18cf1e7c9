package faultproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// chunkSize is how much one read takes; faults apply chunk by chunk.
const chunkSize = 32 << 10

// errTornDown stops a direction whose pair was torn down while it waited.
var errTornDown = errors.New("faultproxy: pair torn down")

// pair is a client connection and, once dialled, its connection to the target.
type pair struct {
	client net.Conn
	done   chan struct{} // closed when the pair is torn down

	mu     sync.Mutex
	server net.Conn // nil until the dial succeeds
	dead   bool
	halves int // directions that have not yet seen EOF
}

func newPair(client net.Conn) *pair {
	return &pair{client: client, done: make(chan struct{}), halves: 2}
}

// attach records the connection to the target. It reports false if the pair
// was torn down while dialling; the caller then closes server.
func (pr *pair) attach(server net.Conn) bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.dead {
		return false
	}
	pr.server = server
	return true
}

// halfDone records that one direction saw EOF and reports whether both have.
func (pr *pair) halfDone() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.halves--
	return pr.halves == 0
}

// kill closes both connections, with an RST if rst. Only the first call acts;
// it reports whether this was it.
func (pr *pair) kill(rst bool) bool {
	pr.mu.Lock()
	if pr.dead {
		pr.mu.Unlock()
		return false
	}
	pr.dead = true
	server := pr.server
	pr.mu.Unlock()

	close(pr.done)
	for _, c := range []net.Conn{pr.client, server} {
		switch {
		case c == nil:
		case rst:
			abort(c)
		default:
			c.Close()
		}
	}
	return true
}

// sleep waits for d, or until the pair is torn down; it reports whether the
// pair is still up.
func (pr *pair) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-pr.done:
		return false
	}
}

// abort closes c with an RST instead of a FIN, as a crashed host or a
// middlebox dropping state would.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// halfClose sends a FIN on c and reports whether c can still be read.
func halfClose(c net.Conn) bool {
	cw, ok := c.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}

// pump forwards src to dst until src ends or the pair is torn down, then
// passes the ending on.
func (p *Proxy) pump(pr *pair, src, dst net.Conn, fromServer bool) {
	err := p.forward(pr, src, dst, fromServer)
	switch {
	case err == nil:
		// A FIN from src becomes a FIN to dst; the other direction goes on
		// until it ends too.
		if halfClose(dst) && !pr.halfDone() {
			return
		}
		p.teardown(pr, false)
	case errors.Is(err, syscall.ECONNRESET):
		// One peer's reset reaches the other.
		p.teardown(pr, true)
	default:
		p.teardown(pr, false)
	}
}

// forward copies src to dst chunk by chunk, applying the proxy's faults to
// each. It returns nil when src reaches EOF.
func (p *Proxy) forward(pr *pair, src, dst net.Conn, fromServer bool) error {
	buf := make([]byte, chunkSize)
	var tail []byte    // end of the previous chunk, for patterns that straddle reads
	var next time.Time // when a throttled direction may send again
	for {
		n, err := src.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			drop, keep := p.trip(tail, chunk, fromServer)
			if drop {
				return errTornDown
			}
			tail = keepTail(tail, chunk, keep)
			if !pr.sleep(p.latency()) {
				return errTornDown
			}
			if err := p.deliver(pr, dst, chunk, &next); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// deliver writes chunk to dst, in slices paced to the throttle if one is set.
func (p *Proxy) deliver(pr *pair, dst net.Conn, chunk []byte, next *time.Time) error {
	for len(chunk) > 0 {
		n := len(chunk)
		rate := p.bandwidth()
		if rate > 0 {
			// Tenth-of-a-second slices keep a throttled stream steady, not bursty.
			n = min(n, max(rate/10, 1))
			if !pr.sleep(time.Until(*next)) {
				return errTornDown
			}
		}
		// The stall gate sits right before the write, so a chunk read before
		// the stall began, or waiting out a delay, is held too.
		if !p.waitFlowing(pr) {
			return errTornDown
		}
		if _, err := dst.Write(chunk[:n]); err != nil {
			return err
		}
		if rate > 0 {
			// No credit accrues while idle: pacing restarts from now.
			*next = later(*next, time.Now()).Add(time.Duration(n) * time.Second / time.Duration(rate))
		}
		chunk = chunk[n:]
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

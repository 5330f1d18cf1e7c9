package faultproxy

import (
	"bytes"
	"slices"
)

// trigger is a one-shot ResetWhenServerSends or StallWhenClientSends.
type trigger struct {
	pattern    []byte
	fromServer bool // which direction it watches
	stall      bool // stall the proxy (and forward the chunk into the stall), else reset all
	fired      chan struct{}
}

// ResetWhenServerSends arms a one-shot trigger: the first time a chunk from the
// target completes pattern, on any connection, that chunk is not forwarded and
// every open pair is reset as by ResetAll. The returned channel is closed once
// the resets are done. A pattern may straddle the boundary between two reads.
// Triggers armed together fire independently; an empty pattern fires on the
// next chunk the server sends.
func (p *Proxy) ResetWhenServerSends(pattern []byte) <-chan struct{} {
	return p.arm(&trigger{pattern: bytes.Clone(pattern), fromServer: true, fired: make(chan struct{})})
}

// StallWhenClientSends arms a one-shot trigger: the first time a chunk from
// a client completes pattern, the proxy stalls (Stall(true)) before that
// chunk is written, so the chunk is held with everything else until the
// stall is lifted. With pattern "commit\x00", the bytes of pgx's COMMIT
// query, a transaction's COMMIT is stuck in the network: the "blackhole at
// the worst moment" fault. The returned channel is closed once stalled.
func (p *Proxy) StallWhenClientSends(pattern []byte) <-chan struct{} {
	return p.arm(&trigger{pattern: bytes.Clone(pattern), stall: true, fired: make(chan struct{})})
}

func (p *Proxy) arm(t *trigger) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.triggers = append(p.triggers, t)
	return t.fired
}

// trip fires the triggers of the direction whose pattern chunk completes,
// given tail, the end of what the same direction of the connection sent
// before, and reports whether the chunk must be dropped (a reset fired).
// keep is how much of the stream the next call needs as its tail.
func (p *Proxy) trip(tail, chunk []byte, fromServer bool) (drop bool, keep int) {
	var fired []*trigger
	p.mu.Lock()
	p.triggers = slices.DeleteFunc(p.triggers, func(t *trigger) bool {
		if t.fromServer == fromServer && occurs(t.pattern, tail, chunk) {
			fired = append(fired, t)
			return true
		}
		return false
	})
	for _, t := range p.triggers {
		if t.fromServer == fromServer {
			keep = max(keep, len(t.pattern)-1)
		}
	}
	p.mu.Unlock()

	if len(fired) == 0 {
		return false, keep
	}
	for _, t := range fired {
		if t.stall {
			p.Stall(true)
		} else if !drop {
			p.ResetAll()
			drop = true
		}
	}
	for _, t := range fired {
		close(t.fired)
	}
	return drop, keep
}

// occurs reports whether pattern lies within chunk or straddles tail and chunk.
// A match wholly within tail does not count: those bytes were forwarded before.
func occurs(pattern, tail, chunk []byte) bool {
	if bytes.Contains(chunk, pattern) {
		return true
	}
	k := len(pattern) - 1
	if k <= 0 || len(tail) == 0 {
		return false
	}
	tail = tail[max(len(tail)-k, 0):]
	head := chunk[:min(len(chunk), k)]
	return bytes.Contains(slices.Concat(tail, head), pattern)
}

// keepTail returns the last n bytes of tail followed by chunk, reusing tail's
// storage; chunk is the read buffer, which the next read overwrites.
func keepTail(tail, chunk []byte, n int) []byte {
	if n <= 0 {
		return tail[:0]
	}
	if len(chunk) >= n {
		return append(tail[:0], chunk[len(chunk)-n:]...)
	}
	joined := append(tail, chunk...)
	drop := max(len(joined)-n, 0)
	return joined[:copy(joined, joined[drop:])]
}

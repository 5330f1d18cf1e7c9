package faultproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// patience bounds every wait in these tests; only a broken proxy reaches it.
const patience = 5 * time.Second

func TestForwardsEveryConnection(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))

	// Larger than a chunk, so forwarding spans several reads.
	payload := bytes.Repeat([]byte("0123456789abcdef"), 20_000)
	var wg sync.WaitGroup
	for range 4 {
		c := dial(t, p)
		wg.Go(func() {
			if err := exchange(c, payload); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := p.Stats(); got.Accepted != 4 || got.Open != 4 {
		t.Errorf("Stats() = %+v, want Accepted 4, Open 4", got)
	}
}

func TestEOFReachesTheOtherSide(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	c := dial(t, p)

	// The client's FIN makes the echo server finish and close, and that FIN
	// must come back to the client as EOF after the echoed bytes.
	if _, err := c.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(patience))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("ReadAll: %v, want the echo and then EOF", err)
	}
	if string(got) != "last words" {
		t.Errorf("read %q, want %q", got, "last words")
	}
	eventually(t, func() bool { return p.Stats().Open == 0 }, "the finished pair is never forgotten")
}

func TestResetAllAbortsEveryPairAndKeepsAccepting(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	a, b := dial(t, p), dial(t, p)
	roundTrip(t, a, []byte("a"))
	roundTrip(t, b, []byte("b"))

	if n := p.ResetAll(); n != 2 {
		t.Errorf("ResetAll() = %d, want 2", n)
	}
	wantReset(t, a)
	wantReset(t, b)

	roundTrip(t, dial(t, p), []byte("after the reset"))
	if got := p.Stats(); got.Resets != 2 || got.Open != 1 {
		t.Errorf("Stats() = %+v, want Resets 2, Open 1", got)
	}
}

func TestStallHoldsTrafficAndDeliversItInOrderWhenLifted(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	open := dial(t, p)
	roundTrip(t, open, []byte("before"))

	p.Stall(true)
	write(t, open, "one ")
	write(t, open, "two ")
	// A connection made during the stall is accepted, then held like the rest.
	fresh := dial(t, p)
	write(t, fresh, "fresh")
	wantSilence(t, open, 200*time.Millisecond)
	wantSilence(t, fresh, 200*time.Millisecond)
	write(t, open, "three")

	p.Stall(false)
	wantRead(t, open, "one two three")
	wantRead(t, fresh, "fresh")
	if got := p.Stats(); got.Open != 2 || got.Resets != 0 {
		t.Errorf("Stats() = %+v, want both pairs open and none reset", got)
	}
}

func TestStallHoldsAChunkAlreadyReadButNotYetWritten(t *testing.T) {
	t.Parallel()
	received := make(chan string, 16)
	record := func(c net.Conn) {
		buf := make([]byte, 1024)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			received <- string(buf[:n])
		}
	}
	p := startProxy(t, startServer(t, record))
	c := dial(t, p)

	// The delay keeps the chunk in the proxy's hands when the stall begins.
	p.Delay(300 * time.Millisecond)
	write(t, c, "in flight")
	time.Sleep(50 * time.Millisecond)
	p.Stall(true)
	select {
	case got := <-received:
		t.Fatalf("server received %q during the stall", got)
	case <-time.After(time.Second):
	}

	p.Stall(false)
	select {
	case got := <-received:
		if got != "in flight" {
			t.Errorf("server received %q, want %q", got, "in flight")
		}
	case <-time.After(patience):
		t.Fatal("the held chunk never arrived")
	}
}

func TestRefuseResetsNewConnectionsOnly(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	open := dial(t, p)
	roundTrip(t, open, []byte("before"))

	p.Refuse(true)
	wantDialReset(t, p)
	roundTrip(t, open, []byte("still here"))

	p.Refuse(false)
	roundTrip(t, dial(t, p), []byte("welcome back"))
	if got := p.Stats(); got.Refused != 1 || got.Accepted != 2 {
		t.Errorf("Stats() = %+v, want Refused 1, Accepted 2", got)
	}
}

func TestDelaySlowsEveryRoundTrip(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	c := dial(t, p)
	roundTrip(t, c, []byte("warm up"))

	const d = 100 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	roundTrip(t, c, []byte("slow"))
	// The request and the reply are each held for d.
	if took := time.Since(start); took < 2*d {
		t.Errorf("round trip took %v, want at least %v", took, 2*d)
	}

	p.Delay(0)
	roundTrip(t, c, []byte("fast again"))
}

func TestThrottleBoundsThroughput(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	c := dial(t, p)
	roundTrip(t, c, []byte("warm up"))

	p.Throttle(64 << 10)
	payload := bytes.Repeat([]byte{'x'}, 64<<10)
	start := time.Now()
	roundTrip(t, c, payload)
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Errorf("64 KiB at 64 KiB/s took %v, want at least 500ms", took)
	}
}

func TestUnreachableTargetResetsTheClient(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	p := startProxy(t, target)

	wantDialReset(t, p)
}

// Not parallel: it counts goroutines, so nothing else may run beside it.
func TestCloseWhileStalledIsPromptAndLeavesNoGoroutines(t *testing.T) {
	target := startServer(t, echo)
	before := runtime.NumGoroutine()

	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 3 {
		c := dial(t, p)
		roundTrip(t, c, []byte("hello"))
		conns = append(conns, c)
	}
	p.Delay(time.Hour) // a chunk asleep in the delay must not hold Close up either
	write(t, conns[0], "asleep")
	time.Sleep(50 * time.Millisecond)
	p.Delay(0)
	p.Stall(true)
	for _, c := range conns[1:] {
		write(t, c, "held")
	}
	conns = append(conns, dial(t, p)) // accepted, waiting to be connected

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("Close hung on a stalled proxy")
	}
	for _, c := range conns {
		c.Close()
	}
	eventually(t, func() bool { return runtime.NumGoroutine() <= before },
		"goroutines outlived Close")
}

func TestProxyIsHarmlessAfterClose(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	roundTrip(t, dial(t, p), []byte("hello"))
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n := p.ResetAll(); n != 0 {
		t.Errorf("ResetAll() after Close = %d, want 0", n)
	}
	p.Stall(true)
	p.Stall(false)
	p.Refuse(true)
	p.Delay(time.Second)
	p.Throttle(1)
	p.ResetWhenServerSends([]byte("x"))
	if got := p.Stats(); got.Open != 0 {
		t.Errorf("Stats().Open after Close = %d, want 0", got.Open)
	}
	if c, err := net.DialTimeout("tcp", p.Addr(), patience); err == nil {
		c.Close()
		t.Error("Dial after Close succeeded")
	}
}

// echo writes back whatever it reads until EOF.
func echo(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// startServer serves each connection to a loopback listener with handle, and
// returns the listener's address. Cleanup closes everything and waits.
func startServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				handle(c)
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), patience)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(patience))
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatalf("Write(%q): %v", s, err)
	}
}

// roundTrip sends msg and expects it back.
func roundTrip(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	if err := exchange(c, msg); err != nil {
		t.Fatal(err)
	}
}

// exchange sends msg and reads it back, writing and reading at once so a
// message larger than the socket buffers cannot deadlock.
func exchange(c net.Conn, msg []byte) error {
	c.SetDeadline(time.Now().Add(patience))
	written := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		written <- err
	}()
	got := make([]byte, len(msg))
	_, err := io.ReadFull(c, got)
	if werr := <-written; werr != nil {
		return fmt.Errorf("write: %w", werr)
	}
	if err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("echo differs from the %d bytes sent", len(msg))
	}
	return nil
}

func wantRead(t *testing.T, c net.Conn, want string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("ReadFull: %v (want %q)", err, want)
	}
	if string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
}

// wantSilence checks that nothing arrives on c for d.
func wantSilence(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %q, %v; want nothing until the deadline", buf[:n], err)
	}
}

// wantReset checks that the next read on c fails with a connection reset,
// with nothing read before it.
func wantReset(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(patience))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if n > 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Read = %q, %v; want a connection reset", buf[:n], err)
	}
}

// wantDialReset checks that a new connection to p is reset. The kernel
// completes the handshake before the proxy can reset it, so the reset shows in
// Dial or, if Dial returned first, in the first read.
func wantDialReset(t *testing.T, p *Proxy) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), patience)
	if err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("Dial: %v, want a connection reset", err)
		}
		return
	}
	defer c.Close()
	wantReset(t, c)
}

func eventually(t *testing.T, cond func() bool, failure string) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

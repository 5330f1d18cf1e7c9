package faultproxy

import (
	"net"
	"testing"
	"time"
)

func TestResetWhenServerSendsAcrossReads(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	bystander := dial(t, p)
	roundTrip(t, bystander, []byte("idle in the pool"))
	c := dial(t, p)

	fired := p.ResetWhenServerSends([]byte("COMMIT\x00"))
	// Waiting for the first half's echo makes the server send the pattern in
	// two writes, which the proxy reads as two chunks.
	roundTrip(t, c, []byte("COMM"))
	select {
	case <-fired:
		t.Fatal("fired on half the pattern")
	default:
	}
	write(t, c, "IT\x00")

	select {
	case <-fired:
	case <-time.After(patience):
		t.Fatal("the trigger never fired")
	}
	wantReset(t, c) // and so the chunk with the pattern never arrived
	wantReset(t, bystander)
	if got := p.Stats(); got.Resets != 2 {
		t.Errorf("Stats().Resets = %d, want 2", got.Resets)
	}

	// One shot: the next commit goes through.
	roundTrip(t, dial(t, p), []byte("COMMIT\x00"))
}

func TestResetWhenServerSendsIgnoresTheClient(t *testing.T) {
	t.Parallel()
	ack := func(c net.Conn) {
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
			if _, err := c.Write([]byte("ok")); err != nil {
				return
			}
		}
	}
	p := startProxy(t, startServer(t, ack))
	fired := p.ResetWhenServerSends([]byte("COMMIT\x00"))
	c := dial(t, p)

	// The query "COMMIT" carries the same bytes as the server's reply tag.
	write(t, c, "COMMIT\x00")
	wantRead(t, c, "ok")
	select {
	case <-fired:
		t.Error("fired on bytes the client sent")
	default:
	}
}

func TestOccurs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		tail, chunk string
		pattern     string
		want        bool
	}{
		{name: "within the chunk", tail: "", chunk: "xCOMMIT\x00y", pattern: "COMMIT\x00", want: true},
		{name: "straddling the reads", tail: "xxCOMM", chunk: "IT\x00Z", pattern: "COMMIT\x00", want: true},
		{name: "all but the last byte in the tail", tail: "COMMIT", chunk: "\x00", pattern: "COMMIT\x00", want: true},
		{name: "only a prefix so far", tail: "xx", chunk: "COMMI", pattern: "COMMIT\x00", want: false},
		{name: "wholly in the tail, already forwarded", tail: "ab", chunk: "c", pattern: "ab", want: false},
		{name: "gap between tail and chunk", tail: "COMM", chunk: "xIT\x00", pattern: "COMMIT\x00", want: false},
		{name: "empty pattern", tail: "", chunk: "x", pattern: "", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := occurs([]byte(tt.pattern), []byte(tt.tail), []byte(tt.chunk)); got != tt.want {
				t.Errorf("occurs(%q, %q, %q) = %v, want %v", tt.pattern, tt.tail, tt.chunk, got, tt.want)
			}
		})
	}
}

func TestKeepTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		tail, chunk string
		n           int
		want        string
	}{
		{name: "from a long chunk", tail: "abc", chunk: "defgh", n: 3, want: "fgh"},
		{name: "from tail and a short chunk", tail: "abc", chunk: "d", n: 3, want: "bcd"},
		{name: "shorter than n", tail: "a", chunk: "b", n: 6, want: "ab"},
		{name: "nothing armed", tail: "abc", chunk: "d", n: 0, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := keepTail([]byte(tt.tail), []byte(tt.chunk), tt.n); string(got) != tt.want {
				t.Errorf("keepTail(%q, %q, %d) = %q, want %q", tt.tail, tt.chunk, tt.n, got, tt.want)
			}
		})
	}
}

func TestStallWhenClientSendsHoldsTheChunkUntilLifted(t *testing.T) {
	t.Parallel()
	p := startProxy(t, startServer(t, echo))
	c := dial(t, p)
	roundTrip(t, c, []byte("begin")) // flows before the trigger fires

	fired := p.StallWhenClientSends([]byte("commit\x00"))
	write(t, c, "commit\x00")
	select {
	case <-fired:
	case <-time.After(patience):
		t.Fatal("the trigger never fired")
	}
	wantSilence(t, c, 200*time.Millisecond) // the commit is held, so is its echo
	p.Stall(false)
	wantRead(t, c, "commit\x00") // delivered late, in order, connection intact
}

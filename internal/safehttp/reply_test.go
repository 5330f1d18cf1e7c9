package safehttp_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/safehttp"
)

// body is an endless reply body that counts what is read and whether it
// was closed; fail, when set, is returned after the first read.
type body struct {
	read   int
	closed bool
	fail   error
}

func (b *body) Read(p []byte) (int, error) {
	if b.fail != nil && b.read > 0 {
		return 0, b.fail
	}
	for i := range p {
		p[i] = 'x'
	}
	n := len(p)
	if b.fail != nil {
		n = min(n, 10)
	}
	b.read += n
	return n, nil
}

func (b *body) Close() error { b.closed = true; return nil }

func TestReadReplyKeepsTheFirstBytesAndBoundsTheRest(t *testing.T) {
	t.Parallel()
	b := &body{}
	kept, err := safehttp.ReadReply(&http.Response{Body: b}, safehttp.ReplyLogBytes)
	if err != nil {
		t.Fatal(err)
	}
	if string(kept) != strings.Repeat("x", safehttp.ReplyLogBytes) {
		t.Errorf("kept %d bytes, want %d", len(kept), safehttp.ReplyLogBytes)
	}
	if !b.closed {
		t.Error("body not closed")
	}
	// Drained far enough to reuse a connection after a normal reply, and
	// no further: an endless reply must not hold a worker.
	if b.read <= safehttp.ReplyLogBytes || b.read > safehttp.ReplyLogBytes+64<<10 {
		t.Errorf("read %d bytes, want more than %d and at most %d", b.read, safehttp.ReplyLogBytes, safehttp.ReplyLogBytes+64<<10)
	}
}

func TestReadReplyShortAndEmptyReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply string
		n           int
		want        string
	}{
		{"shorter than n", "ok", safehttp.ReplyLogBytes, "ok"},
		{"exactly n", "abcd", 4, "abcd"},
		{"longer than n", "abcdef", 4, "abcd"},
		{"empty", "", safehttp.ReplyLogBytes, ""},
		{"n is 0", "abc", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := &closeRecorder{Reader: strings.NewReader(tc.reply)}
			kept, err := safehttp.ReadReply(&http.Response{Body: rc}, tc.n)
			if err != nil || string(kept) != tc.want {
				t.Errorf("kept %q (%v), want %q", kept, err, tc.want)
			}
			if !rc.closed {
				t.Error("body not closed")
			}
		})
	}
}

func TestReadReplyReturnsAReadErrorWithWhatCameBefore(t *testing.T) {
	t.Parallel()
	reset := errors.New("connection reset")
	b := &body{fail: reset}
	kept, err := safehttp.ReadReply(&http.Response{Body: b}, safehttp.ReplyLogBytes)
	if !errors.Is(err, reset) || string(kept) != "xxxxxxxxxx" || !b.closed {
		t.Errorf("kept %q, error %v, closed %v; want 10 bytes, %v, closed", kept, err, b.closed, reset)
	}
}

func TestReadReplyWithoutABody(t *testing.T) {
	t.Parallel()
	if kept, err := safehttp.ReadReply(nil, safehttp.ReplyLogBytes); kept != nil || err != nil {
		t.Errorf("nil reply: %q %v", kept, err)
	}
	if kept, err := safehttp.ReadReply(&http.Response{}, safehttp.ReplyLogBytes); kept != nil || err != nil {
		t.Errorf("no body: %q %v", kept, err)
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

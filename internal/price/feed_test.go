package price

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/dripfaucet/drip/internal/clocktest"

	"github.com/google/go-cmp/cmp"
)

// gecko is a stand-in CoinGecko whose reply a test can change between polls.
type gecko struct {
	mu     sync.Mutex
	status int
	body   string
	hits   int
	query  url.Values
}

func (g *gecko) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hits++
	g.query = r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(g.status)
	w.Write([]byte(g.body))
}

func (g *gecko) reply(status int, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.status, g.body = status, body
}

func (g *gecko) lastQuery() url.Values {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.query
}

func (g *gecko) hitCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits
}

// clock is a settable time source shared by a test and the feed.
type feedFixture struct {
	gecko *gecko
	clock *clocktest.Clock
	feed  *Feed
	url   string
}

const firstReply = `{"bitcoin":{"usd":65000.12},"dogecoin":{"usd":0.1234},"unlisted-coin":{"usd":5}}`

// newFeedFixture starts a fake CoinGecko answering firstReply and a feed
// polling it with a 10-minute MaxAge.
func newFeedFixture(t *testing.T) *feedFixture {
	t.Helper()
	g := &gecko{status: http.StatusOK, body: firstReply}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	c := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	u := srv.URL + "/api/v3/simple/price?x_cg_demo_api_key=s3cret"
	f := NewFeed(FeedConfig{URL: u, MaxAge: 10 * time.Minute, Client: srv.Client(), Now: c.Now})
	return &feedFixture{gecko: g, clock: c, feed: f, url: srv.URL}
}

func (fx *feedFixture) quote(t *testing.T, coin string) Quote {
	t.Helper()
	q, err := fx.feed.Quote(context.Background(), coin)
	if err != nil {
		t.Fatalf("Quote(%s): %v", coin, err)
	}
	return q
}

func (fx *feedFixture) poll(t *testing.T) {
	t.Helper()
	if err := fx.feed.Poll(context.Background()); err != nil {
		t.Fatalf("Poll: %v", err)
	}
}

func wantUnavailable(t *testing.T, f *Feed, coin, because string) {
	t.Helper()
	q, err := f.Quote(context.Background(), coin)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), because) {
		t.Errorf("Quote(%s) = %+v, %v; want ErrUnavailable containing %q", coin, q, err, because)
	}
}

func TestFeedPolls(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t)
	t0 := fx.clock.Now()

	wantUnavailable(t, fx.feed, "BTC", "no BTC price from the feed yet")
	fx.poll(t)

	for _, want := range []Quote{
		{Coin: "BTC", USD: dec("65000.12"), At: t0, Source: "feed"},
		{Coin: "DOGE", USD: dec("0.1234"), At: t0, Source: "feed"},
	} {
		if diff := cmp.Diff(want, fx.quote(t, want.Coin), decimalEqual); diff != "" {
			t.Errorf("after the first poll, Quote(%s) (-want +got):\n%s", want.Coin, diff)
		}
	}
	// The request names every built-in coin, in dollars, and keeps the key.
	q := fx.gecko.lastQuery()
	if got := q.Get("ids"); !strings.Contains(got, "bitcoin,bitcoin-cash,") || !strings.Contains(got, "ripple") {
		t.Errorf("ids = %q, want every built-in coin's CoinGecko id", got)
	}
	if q.Get("vs_currencies") != "usd" || q.Get("x_cg_demo_api_key") != "s3cret" {
		t.Errorf("query = %v, want vs_currencies=usd and the API key kept", q)
	}
	wantUnavailable(t, fx.feed, "ETH", "no ETH price from the feed yet")

	// A later poll replaces prices it carries and keeps those it omits.
	fx.clock.Advance(time.Minute)
	fx.gecko.reply(http.StatusOK, `{"bitcoin":{"usd":"66000.5"},"ethereum":{"usd":3000.25}}`)
	fx.poll(t)
	for _, want := range []Quote{
		{Coin: "BTC", USD: dec("66000.5"), At: t0.Add(time.Minute), Source: "feed"},
		{Coin: "ETH", USD: dec("3000.25"), At: t0.Add(time.Minute), Source: "feed"},
		{Coin: "DOGE", USD: dec("0.1234"), At: t0, Source: "feed"},
	} {
		if diff := cmp.Diff(want, fx.quote(t, want.Coin), decimalEqual); diff != "" {
			t.Errorf("after the second poll, Quote(%s) (-want +got):\n%s", want.Coin, diff)
		}
	}
}

func TestFeedKeepsPricesWhenAPollFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"server error", http.StatusInternalServerError, `{"bitcoin":{"usd":1}}`, "HTTP status 500"},
		{"rate limited", http.StatusTooManyRequests, `{"status":{"error_code":429}}`, "HTTP status 429"},
		{"malformed JSON", http.StatusOK, `{"bitcoin":{"usd":1}`, "malformed reply"},
		{"not an object", http.StatusOK, `[{"bitcoin":{"usd":1}}]`, "malformed reply"},
		{"HTML", http.StatusOK, `<html>maintenance</html>`, "malformed reply"},
		{"no known coin", http.StatusOK, `{"unlisted-coin":{"usd":2}}`, "no price for any known coin"},
		{"empty object", http.StatusOK, `{}`, "no price for any known coin"},
		{"oversized reply", http.StatusOK, `{"bitcoin":{"usd":1},"pad":"` + strings.Repeat("x", maxFeedBody) + `"}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fx := newFeedFixture(t)
			t0 := fx.clock.Now()
			fx.poll(t)

			fx.clock.Advance(time.Minute)
			fx.gecko.reply(tt.status, tt.body)
			err := fx.feed.Poll(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Poll error = %v, want one containing %q", err, tt.wantErr)
			}
			want := Quote{Coin: "BTC", USD: dec("65000.12"), At: t0, Source: "feed"}
			if diff := cmp.Diff(want, fx.quote(t, "BTC"), decimalEqual); diff != "" {
				t.Errorf("after a failed poll, Quote(BTC) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFeedSkipsUnusablePrices(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t)
	fx.poll(t)
	fx.gecko.reply(http.StatusOK, `{"bitcoin":{"usd":-1},"dogecoin":{"usd":null},`+
		`"litecoin":{"usd":"n/a"},"ripple":{"eur":2},"ethereum":{"usd":3000}}`)

	err := fx.feed.Poll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no usable USD price for BTC, DOGE, LTC, XRP") {
		t.Fatalf("Poll error = %v, want it to name BTC, DOGE, LTC and XRP", err)
	}
	// The good price in the same reply is taken; the bad ones are not.
	if got := fx.quote(t, "ETH").USD; !got.Equal(dec("3000")) {
		t.Errorf("ETH = %s, want 3000", got)
	}
	if got := fx.quote(t, "BTC").USD; !got.Equal(dec("65000.12")) {
		t.Errorf("BTC = %s, want the earlier 65000.12", got)
	}
	wantUnavailable(t, fx.feed, "LTC", "no LTC price from the feed yet")
}

func TestFeedStale(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t)
	fx.poll(t)

	fx.clock.Advance(10 * time.Minute)
	fx.quote(t, "BTC") // exactly MaxAge old is still fresh

	fx.clock.Advance(time.Second)
	wantUnavailable(t, fx.feed, "BTC", "BTC price is 10m1s old")

	// A failing poll does not refresh the stale price...
	fx.gecko.reply(http.StatusInternalServerError, `{}`)
	if err := fx.feed.Poll(context.Background()); err == nil {
		t.Fatal("Poll against a failing server succeeded")
	}
	wantUnavailable(t, fx.feed, "BTC", "old")
	// ...a successful one does.
	fx.gecko.reply(http.StatusOK, firstReply)
	fx.poll(t)
	if got := fx.quote(t, "BTC").At; !got.Equal(fx.clock.Now()) {
		t.Errorf("BTC At = %v, want %v", got, fx.clock.Now())
	}
}

func TestFeedUnknownCoin(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t)
	fx.poll(t)
	// The reply had "unlisted-coin", but no symbol maps to it.
	wantUnavailable(t, fx.feed, "NOPE", "does not carry NOPE")
	wantUnavailable(t, fx.feed, "btc", "does not carry btc")
}

func TestFeedURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw       string
		wantQuery url.Values
	}{
		{
			raw:       "https://api.coingecko.com/api/v3/simple/price?ids=bitcoin&vs_currencies=usd",
			wantQuery: url.Values{"ids": {"bitcoin"}, "vs_currencies": {"usd"}},
		},
		{
			raw:       "https://pro-api.coingecko.com/api/v3/simple/price?ids=dogecoin&x_cg_pro_api_key=k%26y",
			wantQuery: url.Values{"ids": {"dogecoin"}, "vs_currencies": {"usd"}, "x_cg_pro_api_key": {"k&y"}},
		},
		{
			raw: "http://127.0.0.1:8080/price",
			wantQuery: url.Values{
				"ids":           {"binancecoin,bitcoin,bitcoin-cash,dash,digibyte,dogecoin,ethereum,litecoin,ripple,solana,tether,tron"},
				"vs_currencies": {"usd"},
			},
		},
	}
	for _, tt := range tests {
		full, where, err := feedURL(tt.raw)
		if err != nil {
			t.Fatalf("feedURL(%s): %v", tt.raw, err)
		}
		u, _ := url.Parse(full)
		if diff := cmp.Diff(tt.wantQuery, u.Query()); diff != "" {
			t.Errorf("feedURL(%s) query (-want +got):\n%s", tt.raw, diff)
		}
		if strings.Contains(where, "?") || !strings.HasPrefix(tt.raw, where+"/") {
			t.Errorf("feedURL(%s) where = %q, want only scheme and host", tt.raw, where)
		}
	}

	for _, raw := range []string{"", "coingecko.com/price", "ftp://example.com/price", "http:///price", "https://exa mple.com/?key=s3cret"} {
		f := NewFeed(FeedConfig{URL: raw})
		err := f.Poll(context.Background())
		if err == nil || !strings.Contains(err.Error(), "absolute http or https URL") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Poll with URL %q: error = %v, want a bad-URL error without the query", raw, err)
		}
	}
}

func TestFeedRun(t *testing.T) {
	t.Parallel()
	g := &gecko{status: http.StatusInternalServerError, body: `{}`}
	srv := httptest.NewServer(g)
	defer srv.Close()
	var logs logtest.Buffer
	f := NewFeed(FeedConfig{
		URL:    srv.URL + "/simple/price?x_cg_demo_api_key=s3cret",
		Every:  5 * time.Millisecond,
		Client: srv.Client(),
		Log:    slog.New(slog.NewTextHandler(&logs, nil)),
	})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		f.Run(ctx)
		close(done)
	}()

	waitFor(t, "three polls", func() bool { return g.hitCount() >= 3 })
	g.reply(http.StatusOK, firstReply)
	waitFor(t, "a BTC price", func() bool {
		_, err := f.Quote(context.Background(), "BTC")
		return err == nil
	})

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	// A request cancelled mid-flight may still reach the server just after
	// Run returns; let it land, then make sure no new poll starts.
	time.Sleep(20 * time.Millisecond)
	hits := g.hitCount()
	time.Sleep(50 * time.Millisecond) // ten poll intervals
	if g.hitCount() != hits {
		t.Errorf("the feed was polled after Run returned")
	}

	out := logs.String()
	if !strings.Contains(out, "price feed poll failed") || !strings.Contains(out, "HTTP status 500") ||
		!strings.Contains(out, srv.URL) {
		t.Errorf("logs = %q, want the failed polls logged with the feed's host", out)
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "simple/price") {
		t.Errorf("logs = %q, want no path or query string", out)
	}
}

func TestFeedErrorsHideTheQuery(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens here now: the client fails with a *url.Error

	f := NewFeed(FeedConfig{URL: addr + "/simple/price?x_cg_demo_api_key=s3cret"})
	err := f.Poll(context.Background())
	if err == nil {
		t.Fatal("Poll against a closed server succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, addr) {
		t.Errorf("Poll error = %q, want the host and not the query string", msg)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("Poll error %v wraps ErrUnavailable; only Quote's errors should", err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

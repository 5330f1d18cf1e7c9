package price

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// coingeckoIDs names each built-in coin as CoinGecko does. Read only.
var coingeckoIDs = map[string]string{
	"BTC":  "bitcoin",
	"ETH":  "ethereum",
	"DOGE": "dogecoin",
	"LTC":  "litecoin",
	"BCH":  "bitcoin-cash",
	"DASH": "dash",
	"DGB":  "digibyte",
	"TRX":  "tron",
	"USDT": "tether",
	"BNB":  "binancecoin",
	"SOL":  "solana",
	"XRP":  "ripple",
}

const (
	defaultEvery  = time.Minute
	defaultMaxAge = 10 * time.Minute // D60
	// pollTimeout bounds one poll even with a client that has no timeout of
	// its own, so a hung feed cannot stall Run past several intervals.
	pollTimeout = 30 * time.Second
	// maxFeedBody is far above a real reply (~1 KiB for every coin) and
	// bounds what a broken or hostile feed can make us hold in memory.
	maxFeedBody = 1 << 20
)

// FeedConfig configures a Feed. Only URL is required.
type FeedConfig struct {
	// URL is a CoinGecko "simple price" URL, for example
	// https://api.coingecko.com/api/v3/simple/price. When it has no ids
	// parameter, the ids of every built-in coin are added, and
	// vs_currencies=usd when that is missing. It may carry an API key in its
	// query string, so only its scheme and host are ever logged.
	URL    string
	Every  time.Duration // poll interval; default 1 minute
	MaxAge time.Duration // a price older than this is unavailable; default 10 minutes
	Client *http.Client  // default: a client with the poll timeout
	Now    func() time.Time
	Log    *slog.Logger // default: discard
}

// Feed serves the prices last polled from a CoinGecko-compatible feed. Each
// coin keeps its own last price, so a failed poll, or a reply missing a
// coin, leaves earlier prices in use until they are older than MaxAge.
type Feed struct {
	url    string // as requested; may hold an API key
	where  string // scheme://host, safe to log
	urlErr error
	every  time.Duration
	maxAge time.Duration
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	mu     sync.RWMutex
	quotes map[string]Quote
}

// NewFeed returns a Feed with no prices yet: call Poll or Run to fill it.
// A bad URL is reported by every Poll.
func NewFeed(cfg FeedConfig) *Feed {
	f := &Feed{
		every:  orDefault(cfg.Every, defaultEvery),
		maxAge: orDefault(cfg.MaxAge, defaultMaxAge),
		client: cfg.Client,
		now:    cfg.Now,
		log:    cfg.Log,
		quotes: make(map[string]Quote),
	}
	if f.client == nil {
		f.client = &http.Client{Timeout: pollTimeout}
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	f.url, f.where, f.urlErr = feedURL(cfg.URL)
	return f
}

// orDefault is d, or def when d is not set.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// feedURL completes raw with the query CoinGecko needs and returns it with
// the part of it that is safe to log.
func feedURL(raw string) (full, where string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not err itself: url.Parse errors quote the whole URL.
		return "", "(invalid URL)", errors.New("price feed: URL must be an absolute http or https URL")
	}
	where = u.Scheme + "://" + u.Host
	q := u.Query()
	if !q.Has("ids") {
		q.Set("ids", strings.Join(slices.Sorted(maps.Values(coingeckoIDs)), ","))
	}
	if !q.Has("vs_currencies") {
		q.Set("vs_currencies", "usd")
	}
	u.RawQuery = q.Encode()
	return u.String(), where, nil
}

// Quote returns the last polled price of coin, or an error wrapping
// ErrUnavailable when there is none or it is older than MaxAge.
func (f *Feed) Quote(_ context.Context, coin string) (Quote, error) {
	if _, known := coingeckoIDs[coin]; !known {
		return Quote{}, fmt.Errorf("%w: the price feed does not carry %s", ErrUnavailable, coin)
	}
	f.mu.RLock()
	q, ok := f.quotes[coin]
	f.mu.RUnlock()
	if !ok {
		return Quote{}, fmt.Errorf("%w: no %s price from the feed yet", ErrUnavailable, coin)
	}
	if age := f.now().Sub(q.At); age > f.maxAge {
		return Quote{}, fmt.Errorf("%w: the feed's %s price is %s old, more than %s",
			ErrUnavailable, coin, age.Round(time.Second), f.maxAge)
	}
	return q, nil
}

// Run polls at once and then every interval until ctx is done. Failures are
// logged and the earlier prices stay in use; Quote reports them as stale
// once they pass MaxAge.
func (f *Feed) Run(ctx context.Context) {
	t := time.NewTicker(f.every)
	defer t.Stop()
	for {
		if err := f.Poll(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("price feed poll failed", "feed", f.where, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll fetches the feed once and stores every usable price in the reply.
// On any error the prices already held are kept; when only some coins in
// the reply are unusable, the others are stored and the error names those.
func (f *Feed) Poll(ctx context.Context) error {
	if f.urlErr != nil {
		return f.urlErr
	}
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	body, err := f.fetch(ctx)
	if err != nil {
		return fmt.Errorf("price feed %s: %w", f.where, err)
	}
	prices, bad, err := parseFeed(body)
	if err != nil {
		return fmt.Errorf("price feed %s: %w", f.where, err)
	}
	at := f.now()
	f.mu.Lock()
	for sym, usd := range prices {
		f.quotes[sym] = Quote{Coin: sym, USD: usd, At: at, Source: "feed"}
	}
	f.mu.Unlock()
	if len(bad) > 0 {
		return fmt.Errorf("price feed %s: no usable USD price for %s", f.where, strings.Join(bad, ", "))
	}
	return nil
}

func (f *Feed) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return nil, errors.New("cannot build the request")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		// A *url.Error repeats the whole URL, API key included: keep only
		// what went wrong.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("HTTP status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFeedBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the reply: %w", err)
	}
	if len(body) > maxFeedBody {
		return nil, fmt.Errorf("reply larger than %d bytes", maxFeedBody)
	}
	return body, nil
}

// parseFeed reads {"bitcoin":{"usd":65000.12},...} into prices by symbol,
// with the symbols whose entry is there but has no usable USD price.
func parseFeed(body []byte) (prices map[string]decimal.Decimal, bad []string, err error) {
	var reply map[string]map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // exact: a price never passes through float64
	if err := dec.Decode(&reply); err != nil {
		return nil, nil, fmt.Errorf("malformed reply: %w", err)
	}
	prices = make(map[string]decimal.Decimal)
	for sym, id := range coingeckoIDs {
		entry, ok := reply[id]
		if !ok {
			continue // the operator's ids may name only some coins
		}
		usd, err := parsePrice(entry["usd"])
		if err != nil {
			bad = append(bad, sym)
			continue
		}
		prices[sym] = usd
	}
	if len(prices) == 0 && len(bad) == 0 {
		return nil, nil, errors.New("reply has no price for any known coin")
	}
	slices.Sort(bad)
	return prices, bad, nil
}

package metrics_test

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// scrape reads the app's /metrics: each sample by its name and labels as
// the exposition writes them (labels sorted), such as
// drip_payouts_total{coin="BTC"}.
func scrape(t *testing.T, env *apptest.Env) map[string]float64 {
	t.Helper()
	resp, err := env.Server.Client().Get(env.Server.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// delta is what each sample of after gained over before.
func delta(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if v != before[k] {
			d[k] = v - before[k]
		}
	}
	return d
}

// TestMetricsCountWhatWasDone: after a known set of v1 and v2 sends,
// refusals, rate-limited and unknown requests, each counter moved by
// exactly what was done, on both engines.
func TestMetricsCountWhatWasDone(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, engine.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 1, Burst: 8}})
			f, key := env.Faucet(t, map[string]int64{"BTC": 10_000})
			_, idleKey := env.Faucet(t, map[string]int64{"BTC": 1})
			env.User(t, "bob")
			manage := env.Key(t, f, drip.ScopeSend, drip.ScopeManage)
			// A low-balance alert below 5000: the second paid send crosses
			// it and writes one notification, which no worker delivers here.
			if r := env.V2(t, manage, "/low-balance-notification/toggle", map[string]any{"enabled": true, "thresholds": map[string]int64{"BTC": 5000}}); r.HTTPStatus != 200 {
				t.Fatalf("toggle: %d %s", r.HTTPStatus, r.Raw)
			}
			before := scrape(t, env)

			v1 := func(to, amount, currency string, want int) {
				t.Helper()
				r := env.Post(t, "/send", url.Values{"api_key": {key}, "to": {to}, "amount": {amount}, "currency": {currency}})
				if r.Status() != want {
					t.Fatalf("v1 send %s %s %s: %s, want status %d", to, amount, currency, r.Raw, want)
				}
			}
			v1("bob", "3000", "BTC", 200)
			v1("bob", "3000", "btc", 200) // crosses 5000: one notification
			v1("nobody", "1000", "BTC", 456)
			v1("bob", "1000", "XYZ", 410)
			v1("bob", "9000", "BTC", 402)
			v2 := func(idem string, amount int64, want int) {
				t.Helper()
				r := env.V2(t, manage, "/send", map[string]any{"idempotency_key": idem, "to": "bob", "amount": amount, "currency": "BTC"})
				if r.HTTPStatus != want {
					t.Fatalf("v2 send %s: %d %s, want %d", idem, r.HTTPStatus, r.Raw, want)
				}
			}
			v2("a", 1000, 200)
			v2("a", 1000, 200) // a replay: no payout, no batch
			v2("b", 9000, 409)
			// The idle faucet's bucket holds 8: the ninth read is refused.
			for i := range 9 {
				want := 200
				if i == 8 {
					want = 459
				}
				if r := env.Post(t, "/getbalance", url.Values{"api_key": {idleKey}, "currency": {"BTC"}}); r.Status() != want {
					t.Fatalf("getbalance %d: %s, want %d", i, r.Raw, want)
				}
			}
			env.Post(t, "/no-such-method", url.Values{})
			for _, p := range []string{"/api/v2/no-such-path", "/wp-login.php", "/api/v1/send/x"} {
				resp, err := env.Server.Client().Get(env.Server.URL + p)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			env.Clock.Advance(90 * time.Second)

			after := scrape(t, env)
			got := delta(before, after)
			want := map[string]float64{
				`drip_payouts_total{coin="BTC"}`:                                                  3,
				`drip_payout_refusals_total{code="recipient_not_payable",coin="BTC"}`:             1,
				`drip_payout_refusals_total{code="invalid_currency",coin="other"}`:                1,
				`drip_payout_refusals_total{code="insufficient_balance",coin="BTC"}`:              2,
				`drip_rate_limited_total{limit="key"}`:                                            1,
				`drip_v1_replies_total{path="/api/v1/send",status="200"}`:                         2,
				`drip_v1_replies_total{path="/api/v1/send",status="456"}`:                         1,
				`drip_v1_replies_total{path="/api/v1/send",status="410"}`:                         1,
				`drip_v1_replies_total{path="/api/v1/send",status="402"}`:                         1,
				`drip_v1_replies_total{path="/api/v1/getbalance",status="200"}`:                   8,
				`drip_v1_replies_total{path="/api/v1/getbalance",status="459"}`:                   1,
				`drip_v1_replies_total{path="other",status="404"}`:                                2,
				`drip_http_requests_total{interface="v1",path="/api/v1/send",status="200"}`:       5,
				`drip_http_requests_total{interface="v1",path="/api/v1/getbalance",status="200"}`: 9,
				`drip_http_requests_total{interface="v1",path="other",status="200"}`:              2,
				`drip_http_requests_total{interface="v2",path="/api/v2/send",status="200"}`:       2,
				`drip_http_requests_total{interface="v2",path="/api/v2/send",status="409"}`:       1,
				`drip_http_requests_total{interface="v2",path="other",status="404"}`:              1,
				`drip_http_requests_total{interface="other",path="other",status="404"}`:           1,
				`drip_http_requests_total{interface="other",path="/metrics",status="200"}`:        1, // the first scrape
				`drip_send_duration_seconds_count{interface="v1"}`:                                5,
				`drip_send_duration_seconds_count{interface="v2"}`:                                3,
				// Five payments reached the ledger one at a time: three paid,
				// two refused for the balance there.
				`drip_ledger_batch_payments_count`:                               5,
				`drip_ledger_batch_payments_sum`:                                 5,
				`drip_ledger_commit_wait_seconds_count`:                          5,
				`drip_outbox_pending{outbox="notifications"}`:                    1,
				`drip_outbox_oldest_pending_age_seconds{outbox="notifications"}`: 90,
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s moved by %v, want %v", name, got[name], w)
				}
			}
			for _, name := range []string{`drip_rate_limited_total{limit="caller_ip"}`, `drip_store_transaction_retries_total`} {
				if g, ok := got[name]; ok {
					t.Errorf("%s moved by %v, want 0", name, g)
				}
			}
			// Every change was a store transaction: the five batches and the
			// two refusals recorded before the ledger (456, 410); reads are not.
			// One more: the first send took the cache generation last read,
			// before the toggle raised it, so its batch's transaction found it
			// changed and decided nothing, and the send was served again (D63).
			if g := got[`drip_store_transaction_duration_seconds_count{outcome="ok"}`]; g != 8 {
				t.Errorf("store transactions: %v, want 8", g)
			}
			// No series for a path nobody routes: the made-up paths are "other".
			for name := range after {
				if strings.Contains(name, "no-such") || strings.Contains(name, "wp-login") || strings.Contains(name, "XYZ") {
					t.Errorf("a series names what a client made up: %s", name)
				}
			}
		})
	}
}

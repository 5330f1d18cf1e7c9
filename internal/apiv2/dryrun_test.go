// Tests of dry runs (issue 17, D62): every check of /send and
// /send/batch runs and the reply is what the request would get, but no
// row of any table changes; the real request then gets the same answer.
package apiv2_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// folded are the tables of the statistics' sums (D73). The store's folder
// writes them in the background, from payouts already stored, whenever it
// likes: a reading taken before a dry run and one after may differ by a
// fold that has nothing to do with it. The payouts they are folded from
// are compared like every other table.
var folded = map[string]bool{"stats_users": true, "stats_days": true, "stats_day_users": true, "stats_user_counts": true, "stats_mark": true, "stats_horizon": true}

// tables opens a store of eng and returns it with a function reading
// every table of its database but the folded ones: each table's row
// count and a digest of its rows, so two readings differ when any row was
// added, removed or changed.
func tables(t *testing.T, eng storetest.Engine) (store.Store, func() map[string]string) {
	t.Helper()
	ctx := context.Background()
	digest := func(name string, rows [][]any) string {
		lines := make([]string, len(rows))
		for i, r := range rows {
			lines[i] = fmt.Sprint(r...)
		}
		slices.Sort(lines)
		sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
		return fmt.Sprintf("%d rows %s", len(rows), hex.EncodeToString(sum[:8]))
	}
	switch eng.Name {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "drip.db")
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return st, func() map[string]string {
			t.Helper()
			out := map[string]string{}
			for _, name := range sqlStrings(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`) {
				if folded[name] {
					continue
				}
				rows, err := db.QueryContext(ctx, `SELECT * FROM "`+name+`"`)
				if err != nil {
					t.Fatal(err)
				}
				cols, _ := rows.Columns()
				var all [][]any
				for rows.Next() {
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						t.Fatal(err)
					}
					all = append(all, vals)
				}
				rows.Close()
				out[name] = digest(name, all)
			}
			return out
		}
	case "postgres":
		st, conn := storetest.OpenPostgresConn(t)
		return st, func() map[string]string {
			t.Helper()
			rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
			if err != nil {
				t.Fatal(err)
			}
			names, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, name := range names {
				if folded[name] {
					continue
				}
				rows, err := conn.Query(ctx, `SELECT * FROM "`+name+`"`)
				if err != nil {
					t.Fatal(err)
				}
				var all [][]any
				for rows.Next() {
					vals, err := rows.Values()
					if err != nil {
						t.Fatal(err)
					}
					all = append(all, vals)
				}
				rows.Close()
				out[name] = digest(name, all)
			}
			return out
		}
	}
	t.Fatalf("no engine %s", eng.Name)
	return nil, nil
}

// payoutMetrics are the lines of /metrics counting payouts and refusals.
func payoutMetrics(t *testing.T, env *apptest.Env) []string {
	t.Helper()
	resp, err := http.Get(env.Server.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d, %v", resp.StatusCode, err)
	}
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "drip_payouts_total") || strings.HasPrefix(line, "drip_payout_refusals_total") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("/metrics counts no payout or refusal:\n%s", body)
	}
	return out
}

func sqlStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestDryRunChangesNothing: a dry run of /send for each outcome a send
// can have (paid; a replay; each refusal: key, scope, IP, request rate,
// currency, amount, recipient, the owner's rules, send limit, claimer IP
// limit, daily USD cap, no price, balance, a reused key) and a dry run of
// a batch that runs the balance out leave every table as it was, row for
// row. Each dry run answers the status and code the real request then
// gets, and a key a dry run judged is still free.
func TestDryRunChangesNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		ctx := context.Background()
		st, read := tables(t, eng)
		// Each key's bucket holds 40 requests and the clock is frozen.
		env := checkedEnv(t, st, apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 40}, CallerRate: unlimited, Prices: btcAt("50000")})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000, "DOGE": 500})
		for _, name := range []string{"bob", "carol", "dave", "erin", "frank", "grace", "sam"} {
			env.User(t, name)
		}
		sam, err := env.App.Users.Resolve(ctx, "sam", "BTC")
		if err != nil {
			t.Fatal(err)
		}
		if err := env.App.Users.SetStatus(ctx, sam, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		if err := env.App.Coins.SetMinPayout(ctx, "BTC", 10); err != nil {
			t.Fatal(err)
		}
		blacklist := []string{"carol"}
		if _, _, err := env.App.Faucets.SetRules(ctx, f.ID, faucet.RulesChange{Blacklist: &blacklist}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.App.Faucets.SetLimits(ctx, f.ID, []drip.Limit{
			{Coin: "BTC", Per: drip.PerRecipient, WindowSeconds: 86400, MaxCount: 1},
			{Per: drip.PerIP, WindowSeconds: 86400, MaxCount: 1},
		}); err != nil {
			t.Fatal(err)
		}
		secret := env.Key(t, f, drip.ScopeSend)
		readOnly := env.Key(t, f, drip.ScopeRead)
		_, capped := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}, DailyUSDCapMicros: 1_000_000}) // $1: 2000 BTC units
		_, elsewhere := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend},
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}})
		_, spent := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}})
		pre := sendBody{IdempotencyKey: "pre-1", To: "dave", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.9"}
		prePaid := wantPaid(t, env.V2(t, secret, "/send", pre), false)
		// Every key is used once before the reading (a key's last use is
		// written on its first request), and spent's bucket is emptied.
		for _, k := range []string{readOnly, capped} {
			env.V2(t, k, "/send", sendToAlice("warm-up"))
		}
		for range 40 {
			env.V2(t, spent, "/send", `{}`)
		}
		before, metricsBefore := read(), payoutMetrics(t, env)

		preOther := pre
		preOther.Amount = 3000
		cases := []struct {
			name   string
			key    string
			body   sendBody
			status int
			code   string
		}{
			{"paid", secret, sendBody{IdempotencyKey: "d-ok", To: "bob", Amount: 1000, Currency: "BTC"}, 200, ""},
			{"a key that paid", secret, pre, 200, "replayed"},
			{"a key that paid another request", secret, preOther, 409, "idempotency_key_reuse"},
			{"no key", "", sendBody{IdempotencyKey: "d-1", To: "bob", Amount: 1000, Currency: "BTC"}, 401, "unauthenticated"},
			{"a read key", readOnly, sendBody{IdempotencyKey: "d-2", To: "bob", Amount: 1000, Currency: "BTC"}, 403, "insufficient_scope"},
			{"a key for other IPs", elsewhere, sendBody{IdempotencyKey: "d-3", To: "bob", Amount: 1000, Currency: "BTC"}, 403, "forbidden"},
			{"a key out of requests", spent, sendBody{IdempotencyKey: "d-4", To: "bob", Amount: 1000, Currency: "BTC"}, 429, "rate_limited"},
			{"no such coin", secret, sendBody{IdempotencyKey: "d-5", To: "bob", Amount: 1000, Currency: "ZZZ"}, 400, "invalid_currency"},
			{"below the minimum", secret, sendBody{IdempotencyKey: "d-6", To: "bob", Amount: 5, Currency: "BTC"}, 400, "invalid_amount"},
			{"no such user", secret, sendBody{IdempotencyKey: "d-7", To: "nobody", Amount: 1000, Currency: "BTC"}, 400, "recipient_not_payable"},
			{"suspended", secret, sendBody{IdempotencyKey: "d-8", To: "sam", Amount: 1000, Currency: "BTC"}, 400, "recipient_not_payable"},
			{"blacklisted", secret, sendBody{IdempotencyKey: "d-9", To: "carol", Amount: 1000, Currency: "BTC"}, 403, "recipient_refused"},
			{"send limit", secret, sendBody{IdempotencyKey: "d-10", To: "dave", Amount: 1000, Currency: "BTC"}, 429, "send_limit_reached"},
			{"claimer IP limit", secret, sendBody{IdempotencyKey: "d-11", To: "erin", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.9"}, 429, "claimer_ip_limited"},
			{"over the daily USD cap", capped, sendBody{IdempotencyKey: "d-12", To: "frank", Amount: 2500, Currency: "BTC"}, 429, "daily_usd_cap_reached"},
			{"a capped key without a price", capped, sendBody{IdempotencyKey: "d-13", To: "frank", Amount: 100, Currency: "DOGE"}, 503, "price_unavailable"},
			{"balance", secret, sendBody{IdempotencyKey: "d-14", To: "grace", Amount: 1000, Currency: "DOGE"}, 409, "insufficient_balance"},
		}
		answer := func(r *apptest.V2Reply) string {
			if r.Code() != "" {
				return fmt.Sprintf("%d %s", r.HTTPStatus, r.Code())
			}
			if r.Header.Get("Idempotent-Replayed") == "true" {
				return fmt.Sprintf("%d replayed", r.HTTPStatus)
			}
			return fmt.Sprint(r.HTTPStatus)
		}
		dry := map[string]string{}
		for _, c := range cases {
			body := map[string]any{"idempotency_key": c.body.IdempotencyKey, "to": c.body.To, "amount": c.body.Amount,
				"currency": c.body.Currency, "ip_address": c.body.IPAddress, "dry_run": true}
			r := env.V2(t, c.key, "/send", body)
			dry[c.name] = answer(r)
			want := strings.TrimSpace(fmt.Sprintf("%d %s", c.status, c.code))
			if dry[c.name] != want {
				t.Errorf("dry run, %s: %s, want %s: %s", c.name, dry[c.name], want, r.Raw)
				continue
			}
			var data map[string]any
			if r.HTTPStatus == http.StatusOK {
				r.Data(t, &data)
				if data["dry_run"] != true {
					t.Errorf("dry run, %s: dry_run %v in %s", c.name, data["dry_run"], r.Raw)
				}
			}
			switch {
			case c.name == "paid":
				if _, has := data["payout_id"]; has || data["balance"] != 8000.0 {
					t.Errorf("dry run that would pay: %s, want no payout_id and the balance after it, 8000", r.Raw)
				}
			case c.code == "replayed":
				if data["payout_id"] != float64(prePaid.PayoutID) {
					t.Errorf("dry run of a key that paid: %s, want payout %d", r.Raw, prePaid.PayoutID)
				}
			case r.HTTPStatus != http.StatusOK && r.HTTPStatus != http.StatusUnauthorized && c.code != "insufficient_scope" &&
				c.code != "forbidden" && c.code != "rate_limited" && !strings.HasPrefix(r.Envelope.Message, "Dry run: "):
				t.Errorf("dry run, %s: message %q, want it to say it was a dry run", c.name, r.Envelope.Message)
			}
		}

		// A batch: three payouts for a balance of 9000 with limits that
		// let each recipient be paid once: the first two would be paid,
		// in order, and the third refused; a duplicate repeats the first.
		items := []sendBody{
			{IdempotencyKey: "db-0", To: "erin", Amount: 4000, Currency: "BTC"},
			{IdempotencyKey: "db-1", To: "frank", Amount: 4000, Currency: "BTC"},
			{IdempotencyKey: "db-2", To: "grace", Amount: 4000, Currency: "BTC"},
			{IdempotencyKey: "db-0", To: "erin", Amount: 4000, Currency: "BTC"},
			{IdempotencyKey: "db-4", To: "carol", Amount: 10, Currency: "BTC"},
			pre,
		}
		d := batch(t, env, secret, true, items...)
		var got []string
		for _, it := range d.Items {
			got = append(got, it.outcome())
		}
		wantBatch := []string{"200", "200", "409 insufficient_balance", "200 replayed", "403 recipient_refused", "200 replayed"}
		if diff := cmp.Diff(wantBatch, got); diff != "" {
			t.Errorf("batch dry run (-want +got):\n%s", diff)
		}
		if !d.DryRun || d.Paid != 2 || d.Replayed != 2 || d.Failed != 2 {
			t.Errorf("batch dry run: dry_run %v, paid %d, replayed %d, failed %d; want true, 2, 2, 2", d.DryRun, d.Paid, d.Replayed, d.Failed)
		}
		if len(d.Items) == len(items) && d.Items[0].Data != nil && d.Items[1].Data != nil {
			if b0, b1 := d.Items[0].Data.Balance, d.Items[1].Data.Balance; b0 != 5000 || b1 != 1000 || d.Items[0].Data.PayoutID != 0 || !d.Items[0].Data.DryRun {
				t.Errorf("batch dry run items 0 and 1: %+v and %+v, want balances 5000 and 1000, no payout_id, dry_run", d.Items[0].Data, d.Items[1].Data)
			}
		}

		if diff := cmp.Diff(before, read()); diff != "" {
			t.Errorf("tables after the dry runs (-before +after):\n%s", diff)
		}
		if diff := cmp.Diff(metricsBefore, payoutMetrics(t, env)); diff != "" {
			t.Errorf("payout and refusal metrics after the dry runs (-before +after):\n%s", diff)
		}

		// The real requests get what the dry runs said.
		for _, c := range cases {
			sent := answer(env.V2(t, c.key, "/send", c.body))
			if sent != dry[c.name] {
				t.Errorf("%s: the send got %s, its dry run said %s", c.name, sent, dry[c.name])
			}
		}
		// The real batch runs after the real sends paid bob 1000: the
		// balance is 8000, so one of the three is still refused. Which one
		// depends on the order its items reach the ledger: the dry run
		// judges them in the order given, the ledger in the order they
		// come (D62).
		d = batch(t, env, secret, false, items...)
		got = got[:0]
		for _, it := range d.Items {
			got = append(got, it.outcome())
		}
		first := slices.Clone(got[:3])
		slices.Sort(first)
		if diff := cmp.Diff([]string{"200", "200", "409 insufficient_balance"}, first); diff != "" {
			t.Errorf("the real batch's first three items (-want +got):\n%s", diff)
		}
		if want := strings.Replace(got[0], "200", "200 replayed", 1); got[3] != want {
			t.Errorf("the real batch's item 3 (item 0 again): %s, want %s", got[3], want)
		}
		if diff := cmp.Diff(wantBatch[4:], got[4:]); diff != "" {
			t.Errorf("the real batch's items 4 and 5 (-want +got):\n%s", diff)
		}
		if b := env.Balance(t, f.AccountID, "BTC"); b != 0 {
			t.Errorf("faucet BTC %d after the real batch, want 0", b)
		}
	})
}

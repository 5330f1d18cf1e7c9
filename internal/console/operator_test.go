package console_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// operatorEnv is the console over st with an operator, olga, logged in.
func operatorEnv(t *testing.T, st store.Store) (*apptest.Env, *apptest.Browser) {
	t.Helper()
	env := apptest.New(t, st, apptest.Options{Console: true})
	env.Member(t, "olga", true)
	return env, env.Browser(t).LogIn(t, "olga")
}

// opLog is the operator log, newest first.
func opLog(t *testing.T, env *apptest.Env) []store.OperatorLogEntry {
	t.Helper()
	entries, err := env.App.Store.OperatorLogList(context.Background(), &store.OperatorLogListParams{Limit: 100})
	if err != nil {
		t.Fatalf("OperatorLogList: %v", err)
	}
	return entries
}

// wantLogged fails unless the newest operator log entry is action on
// target by olga, with these details among its own.
func wantLogged(t *testing.T, env *apptest.Env, action, target string, detail map[string]any) {
	t.Helper()
	entries := opLog(t, env)
	if len(entries) == 0 {
		t.Fatalf("the operator log is empty; want %s on %s", action, target)
	}
	e := entries[0]
	if e.Action != action || e.Target != target || e.Operator != "olga" {
		t.Fatalf("newest operator log entry: %s on %q by %s; want %s on %q by olga", e.Action, e.Target, e.Operator, action, target)
	}
	var got map[string]any
	dec := json.NewDecoder(bytes.NewReader(e.Detail))
	dec.UseNumber() // amounts are int64s, not floats
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("detail %s: %v", e.Detail, err)
	}
	for k, v := range detail {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s's detail %s = %v; want %v (all: %s)", action, k, got[k], v, e.Detail)
		}
	}
}

func wantRedirect(t *testing.T, p *apptest.Page, to string) {
	t.Helper()
	if p.Status != http.StatusSeeOther || p.Location != to {
		t.Fatalf("status %d to %q; want 303 to %q\n%s", p.Status, p.Location, to, p.Body)
	}
}

func wantPage(t *testing.T, p *apptest.Page, status int, want ...string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d; want %d\n%s", p.Status, status, p.Body)
	}
	for _, w := range want {
		if !strings.Contains(p.Body, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
}

// Every operator path, GET and POST, answers anyone but an operator (a
// member, a visitor) with the same 404 as a path that does not exist, and
// changes nothing.
func TestOperatorPagesHiddenFromOthers(t *testing.T) {
	t.Parallel()
	env, _ := operatorEnv(t, storetest.OpenSQLite(t))
	alice := env.Member(t, "alice", false)
	f, _ := env.Faucet(t, map[string]int64{"BTC": 1000})
	if err := env.App.Listing.SetCost(context.Background(), "BTC", 100); err != nil {
		t.Fatal(err)
	}
	req, err := env.App.Listing.Request(context.Background(), f, "BTC")
	if err != nil {
		t.Fatal(err)
	}
	gets := []string{"/operator", "/operator/users", "/operator/users?q=alice", "/operator/deposits", "/operator/coins",
		"/operator/listing", "/operator/log", "/operator/nothing"}
	posts := []struct {
		path string
		form []string
	}{
		{fmt.Sprintf("/operator/users/%d/suspend", alice.ID), nil},
		{fmt.Sprintf("/operator/users/%d/verify", alice.ID), nil},
		{"/operator/deposits", []string{"kind", "user", "target", "alice", "coin", "BTC", "amount", "1"}},
		{"/operator/coins/DOGE/disable", nil},
		{"/operator/coins/BTC/min-payout", []string{"min", "5", "unit", "units"}},
		{"/operator/listing/costs", []string{"coin", "BTC", "amount", "1"}},
		{fmt.Sprintf("/operator/listing/%d/reject", req.ID), nil},
		{fmt.Sprintf("/operator/listing/%d/approve", req.ID), nil},
	}
	missing := env.Browser(t).Get(t, "/account/no-such-page") // a console path it does not serve
	for who, b := range map[string]*apptest.Browser{"a member": env.Browser(t).LogIn(t, "alice"), "a visitor": env.Browser(t)} {
		for _, path := range gets {
			if p := b.Get(t, path); p.Status != http.StatusNotFound || p.Body != missing.Body {
				t.Errorf("%s: GET %s = %d; want the plain 404 of a missing page\n%s", who, path, p.Status, p.Body)
			}
		}
		for _, c := range posts {
			if p := b.Post(t, c.path, c.form...); p.Status != http.StatusNotFound || p.Body != missing.Body {
				t.Errorf("%s: POST %s = %d; want the plain 404 of a missing page", who, c.path, p.Status)
			}
		}
	}
	if u, _ := env.App.Store.UserGetByID(context.Background(), alice.ID); u.Status != drip.UserActive {
		t.Error("alice was suspended by a refused request")
	}
	if _, err := env.App.Coins.Active(context.Background(), "DOGE"); err != nil {
		t.Errorf("DOGE was disabled by a refused request: %v", err)
	}
	if got := env.Balance(t, alice.AccountID, "BTC"); got != 0 {
		t.Errorf("alice holds %d BTC after a refused deposit; want 0", got)
	}
	if r, _ := env.App.Listing.Status(context.Background(), f.ID); r.Status != drip.ListingPending {
		t.Errorf("the listing request is %s after refused decisions; want pending", r.Status)
	}
	if costs, _ := env.App.Listing.Costs(context.Background()); costs["BTC"] != 100 {
		t.Errorf("the BTC listing cost is %d after a refused change; want 100", costs["BTC"])
	}
	if n := len(opLog(t, env)); n != 0 {
		t.Errorf("the operator log has %d entries; want none", n)
	}
}

// The overview shows the reconcile result and the totals per coin; a
// broken ledger is shown as such, and so is a copy of events by faucet
// that does not match its events (D72).
func TestOperatorOverview(t *testing.T) {
	t.Parallel()
	st, path := storetest.OpenSQLitePath(t)
	env, b := operatorEnv(t, st)
	f, _ := env.Faucet(t, map[string]int64{"BTC": 150_000_000})
	wantPage(t, b.Get(t, "/operator"), http.StatusOK, `<span class="badge on">OK</span>`,
		"<th scope=\"row\">BTC</th>", "1.50000000", "-1.50000000", `href="/operator/users"`, `href="/operator/log"`)
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	// A sum of the statistics for a payout the faucet never made (D73):
	// wrong figures for its owner, but no money moved.
	if _, err := raw.Exec(`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at) VALUES (?, 'BTC', 1, 1, 500, 0)`, f.ID); err != nil {
		t.Fatal(err)
	}
	faucetItem := fmt.Sprintf("<li>Faucet %d</li>", f.ID)
	p := b.Get(t, "/operator")
	wantPage(t, p, http.StatusOK, "statistics disagree with their payouts: their owners see wrong figures", faucetItem, "drip admin stats rebuild")
	if strings.Contains(p.Body, `<span class="badge on">OK</span>`) || strings.Contains(p.Body, "The ledger does not reconcile") {
		t.Error("wrong statistics alone are shown OK, or as a ledger that does not reconcile")
	}

	// A credit with no journal entry, as a bug or a hand edit would leave.
	err = env.App.Store.Transact(context.Background(), func(tx store.Tx) error {
		_, err := tx.BalanceCredit(context.Background(), drip.AccountListing, "BTC", 5)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// And a row of the events' copy that names no event.
	if _, err := raw.Exec(`INSERT INTO events_by_faucet (faucet_id, seq) VALUES (1, 999999)`); err != nil {
		t.Fatal(err)
	}
	p = b.Get(t, "/operator")
	wantPage(t, p, http.StatusOK, "The ledger does not reconcile", "<strong>BTC</strong>: the balances sum to 5 smallest units",
		"Account 2 in <strong>BTC</strong>: balance 5, journal 0", "<li>Event 999999</li>", faucetItem)
	if strings.Contains(p.Body, `<span class="badge on">OK</span>`) {
		t.Error("a broken ledger is shown OK")
	}
}

// The search finds users by any part of their username, email or
// payout_user_hash, a page at a time; suspending an owner refuses their
// faucet's v1 key at once (D13), unsuspending lets it pay again, and an
// operator can mark an email verified but not suspend themself. Each
// action is in the operator log.
func TestOperatorUsers(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	ctx := context.Background()
	f, key := env.Faucet(t, map[string]int64{"BTC": 100_000})
	owner, err := env.App.Store.UserGetByID(ctx, f.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	bob := env.User(t, "bob")
	send := func() int {
		return env.Post(t, "/send", url.Values{"api_key": {key}, "to": {"bob"}, "amount": {"100"}, "currency": {"BTC"}}).Status()
	}
	if s := send(); s != 200 {
		t.Fatalf("a send before the suspension: %d; want 200", s)
	}

	wantPage(t, b.Get(t, "/operator/users?q="+owner.Username), http.StatusOK, owner.Email, owner.PayoutUserHash,
		fmt.Sprintf(`action="/operator/users/%d/suspend"`, owner.ID))
	wantPage(t, b.Get(t, "/operator/users?q=BOB@EXAMPLE"), http.StatusOK, "bob@example.com")
	if p := b.Get(t, "/operator/users?q="+bob.PayoutUserHash[10:30]); !strings.Contains(p.Body, "bob@example.com") || strings.Contains(p.Body, owner.Email) {
		t.Error("a part of bob's payout_user_hash does not find bob alone")
	}

	p := b.Post(t, fmt.Sprintf("/operator/users/%d/suspend", owner.ID), "q", owner.Username)
	wantRedirect(t, p, "/operator/users?q="+owner.Username+"&done=op-suspended")
	wantPage(t, b.Get(t, p.Location), http.StatusOK, "The user is suspended", `<span class="badge off">suspended</span>`)
	if u, _ := env.App.Store.UserGetByID(ctx, owner.ID); u.Status != drip.UserSuspended {
		t.Fatalf("the owner is %s; want suspended", u.Status)
	}
	wantLogged(t, env, "user.suspend", "user "+owner.Username, map[string]any{"user_id": owner.ID, "username": owner.Username})
	if s := send(); s != 401 {
		t.Errorf("a send by the suspended owner's faucet: %d; want 401 at once (spec 5)", s)
	}

	wantRedirect(t, b.Post(t, fmt.Sprintf("/operator/users/%d/unsuspend", owner.ID)), "/operator/users?done=op-unsuspended")
	wantLogged(t, env, "user.unsuspend", "user "+owner.Username, nil)
	if s := send(); s != 200 {
		t.Errorf("a send after the unsuspension: %d; want 200", s)
	}

	carol, err := env.App.Users.Create(ctx, user.CreateParams{Username: "carol", Email: "carol@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	wantPage(t, b.Get(t, "/operator/users?q=carol"), http.StatusOK, "not verified", "Mark carol's email verified")
	wantRedirect(t, b.Post(t, fmt.Sprintf("/operator/users/%d/verify", carol.ID), "q", "carol", "offset", "0"),
		"/operator/users?q=carol&done=op-verified")
	if u, _ := env.App.Store.UserGetByID(ctx, carol.ID); !u.EmailVerified {
		t.Error("carol's email is not verified")
	}
	wantLogged(t, env, "user.verify", "user carol", map[string]any{"email": "carol@example.com"})

	olga, _ := env.App.Users.ByUsername(ctx, "olga")
	before := len(opLog(t, env))
	wantPage(t, b.Post(t, fmt.Sprintf("/operator/users/%d/suspend", olga.ID)), http.StatusUnprocessableEntity, "You cannot suspend yourself.")
	if u, _ := env.App.Store.UserGetByID(ctx, olga.ID); u.Status != drip.UserActive {
		t.Error("the operator suspended themself")
	}
	if n := len(opLog(t, env)); n != before {
		t.Error("a refused suspension was logged")
	}
	wantPage(t, b.Post(t, "/operator/users/99999/suspend"), http.StatusNotFound, "There is no such user.")
}

// The search is paged, 25 users a page.
func TestOperatorUsersPaged(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	for i := range 30 {
		env.User(t, fmt.Sprintf("user%02d", i))
	}
	first := b.Get(t, "/operator/users?q=user")
	wantPage(t, first, http.StatusOK, "user00@example.com", "user24@example.com", `href="/operator/users?offset=25&amp;q=user"`)
	if strings.Contains(first.Body, "user25@example.com") || strings.Contains(first.Body, "Previous") {
		t.Error("the first page shows the 26th user or a previous page")
	}
	second := b.Get(t, "/operator/users?q=user&offset=25")
	wantPage(t, second, http.StatusOK, "user25@example.com", "user29@example.com", `href="/operator/users?q=user"`)
	if strings.Contains(second.Body, "user24@example.com") || strings.Contains(second.Body, "Next") {
		t.Error("the second page shows the 25th user or a next page")
	}
}

// A deposit credits a faucet (by id) or a user (by username) from
// system:deposits, exactly as typed in coins, in one transfer logged
// with it; bad input is shown beside its field and moves nothing; the
// ledger reconciles after. On both engines.
func TestOperatorDeposit(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env, b := operatorEnv(t, eng.Open(t))
			f, _ := env.Faucet(t, nil)
			alice := env.Member(t, "alice", false)
			wantPage(t, b.Get(t, "/operator/deposits"), http.StatusOK, `<label for="amount">Amount, in coins</label>`, `value="DOGE"`)

			p := b.Post(t, "/operator/deposits", "kind", "faucet", "target", fmt.Sprint(f.ID), "coin", "btc", "amount", "0.5")
			wantRedirect(t, p, "/operator/deposits?done=op-deposited")
			wantPage(t, b.Get(t, p.Location), http.StatusOK, "The deposit is made")
			if got := env.Balance(t, f.AccountID, "BTC"); got != 50_000_000 {
				t.Errorf("the faucet holds %d BTC; want 50000000", got)
			}
			wantLogged(t, env, "deposit", fmt.Sprintf("faucet %d", f.ID),
				map[string]any{"faucet_id": f.ID, "coin": "BTC", "amount": 50_000_000, "amount_coins": "0.5", "balance": 50_000_000})

			wantRedirect(t, b.Post(t, "/operator/deposits", "kind", "user", "target", "alice", "coin", "DOGE", "amount", "12.00000001"),
				"/operator/deposits?done=op-deposited")
			if got := env.Balance(t, alice.AccountID, "DOGE"); got != 1_200_000_001 {
				t.Errorf("alice holds %d DOGE; want 1200000001", got)
			}
			wantLogged(t, env, "deposit", "user alice", map[string]any{"username": "alice", "amount": 1_200_000_001})

			for _, c := range []struct {
				name  string
				form  []string
				field string
				want  string
			}{
				{"nine decimals", []string{"kind", "user", "target", "alice", "coin", "BTC", "amount", "0.000000001"}, "amount", "at most 8 decimals"},
				{"zero", []string{"kind", "user", "target", "alice", "coin", "BTC", "amount", "0"}, "amount", "a deposit is more than 0"},
				{"negative", []string{"kind", "user", "target", "alice", "coin", "BTC", "amount", "-1"}, "amount", "Invalid amount"},
				{"a float's exponent", []string{"kind", "user", "target", "alice", "coin", "BTC", "amount", "1e3"}, "amount", "Invalid amount"},
				{"no such faucet", []string{"kind", "faucet", "target", "99999", "coin", "BTC", "amount", "1"}, "target", "No faucet 99999."},
				{"a faucet named, not numbered", []string{"kind", "faucet", "target", "alice", "coin", "BTC", "amount", "1"}, "target", "the faucet&#39;s id"},
				{"no such user", []string{"kind", "user", "target", "nobody", "coin", "BTC", "amount", "1"}, "target", "No user named"},
				{"no such coin", []string{"kind", "user", "target", "alice", "coin", "NOPE", "amount", "1"}, "coin", "Choose one of the coins."},
				{"no kind", []string{"target", "alice", "coin", "BTC", "amount", "1"}, "target", "faucet or a user"},
			} {
				p := b.Post(t, "/operator/deposits", c.form...)
				wantPage(t, p, http.StatusUnprocessableEntity, `<p class="field-error" id="`+c.field+`-error">`, c.want)
			}
			if got := env.Balance(t, alice.AccountID, "BTC"); got != 0 {
				t.Errorf("alice holds %d BTC after refused deposits; want 0", got)
			}
			if n := len(opLog(t, env)); n != 2 {
				t.Errorf("the operator log has %d entries; want the 2 deposits made", n)
			}
			env.Reconcile(t)
		})
	}
}

// A deposit creates money: with a session last confirmed more than 15
// minutes ago, its page and its form send the operator to confirm it is
// them, and nothing moves until they have.
func TestOperatorDepositAsksToConfirm(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	alice := env.Member(t, "alice", false)
	env.Clock.Advance(16 * time.Minute)
	confirm := "/account/confirm?next=%2Foperator%2Fdeposits"
	wantRedirect(t, b.Get(t, "/operator/deposits"), confirm)
	wantRedirect(t, b.Post(t, "/operator/deposits", "kind", "user", "target", "alice", "coin", "BTC", "amount", "1"), confirm)
	if got := env.Balance(t, alice.AccountID, "BTC"); got != 0 {
		t.Fatalf("alice holds %d BTC before the operator confirmed; want 0", got)
	}
	if n := len(opLog(t, env)); n != 0 {
		t.Fatalf("the operator log has %d entries; want none", n)
	}
	wantRedirect(t, b.Post(t, "/account/confirm", "next", "/operator/deposits", "password", apptest.Password), "/operator/deposits?done=confirmed")
	wantRedirect(t, b.Post(t, "/operator/deposits", "kind", "user", "target", "alice", "coin", "BTC", "amount", "1"), "/operator/deposits?done=op-deposited")
	if got := env.Balance(t, alice.AccountID, "BTC"); got != 100_000_000 {
		t.Errorf("alice holds %d BTC after the confirmed deposit; want 100000000", got)
	}
}

// Coins are disabled and enabled, and their minimum payout set in coins
// or smallest units, as every interface then sees; each change is logged.
func TestOperatorCoins(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	ctx := context.Background()
	wantPage(t, b.Get(t, "/operator/coins"), http.StatusOK, `action="/operator/coins/DOGE/disable"`, `<label for="min-BTC" class="op-sr">`)

	wantRedirect(t, b.Post(t, "/operator/coins/doge/disable"), "/operator/coins?done=op-coin-disabled")
	if _, err := env.App.Coins.Active(ctx, "DOGE"); drip.ErrorCode(err) != drip.CodeInvalidCurrency {
		t.Errorf("DOGE after disabling: %v; want it refused", err)
	}
	wantLogged(t, env, "coin.disable", "coin DOGE", map[string]any{"was_active": true})
	wantPage(t, b.Get(t, "/operator/coins?done=op-coin-disabled"), http.StatusOK, "The coin is disabled", `action="/operator/coins/DOGE/enable"`)
	wantRedirect(t, b.Post(t, "/operator/coins/DOGE/enable"), "/operator/coins?done=op-coin-enabled")
	if _, err := env.App.Coins.Active(ctx, "DOGE"); err != nil {
		t.Errorf("DOGE after enabling: %v", err)
	}

	minOf := func(symbol string) int64 {
		t.Helper()
		coins, err := env.App.Store.CoinList(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range coins {
			if c.Symbol == symbol {
				return c.MinPayout
			}
		}
		t.Fatalf("no coin %s", symbol)
		return 0
	}
	wantRedirect(t, b.Post(t, "/operator/coins/BTC/min-payout", "min", "0.001", "unit", "coins"), "/operator/coins?done=op-min-payout")
	if got := minOf("BTC"); got != 100_000 {
		t.Errorf("BTC's minimum payout = %d; want 100000", got)
	}
	wantLogged(t, env, "coin.min_payout", "coin BTC", map[string]any{"from": 1, "to": 100_000, "to_coins": "0.001"})
	wantRedirect(t, b.Post(t, "/operator/coins/LTC/min-payout", "min", "250", "unit", "units"), "/operator/coins?done=op-min-payout")
	if got := minOf("LTC"); got != 250 {
		t.Errorf("LTC's minimum payout = %d; want 250", got)
	}
	for _, c := range [][2]string{{"0", "coins"}, {"0", "units"}, {"0.5", "units"}, {"0.000000001", "coins"}, {"abc", "coins"}} {
		p := b.Post(t, "/operator/coins/LTC/min-payout", "min", c[0], "unit", c[1])
		wantPage(t, p, http.StatusUnprocessableEntity, `<p class="field-error" id="min-LTC-error">`)
	}
	if got := minOf("LTC"); got != 250 {
		t.Errorf("LTC's minimum payout after refused changes = %d; want 250", got)
	}
	if p := b.Post(t, "/operator/coins/NOPE/disable"); p.Status != http.StatusNotFound {
		t.Errorf("disabling a coin that does not exist: %d; want 404", p.Status)
	}
	if n := len(opLog(t, env)); n != 4 {
		t.Errorf("the operator log has %d entries; want 4", n)
	}
}

// The operator sets listing costs and decides pending requests: a
// rejection refunds the fee (D44), an approval lists the faucet; both are
// logged and the ledger reconciles. A faucet's name is escaped.
func TestOperatorListing(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	ctx := context.Background()
	wantPage(t, b.Get(t, "/operator/listing"), http.StatusOK, "Listing is not offered in any coin yet", "No request is waiting.")
	wantRedirect(t, b.Post(t, "/operator/listing/costs", "coin", "BTC", "amount", "0.0001"), "/operator/listing?done=op-listing-cost")
	if costs, _ := env.App.Listing.Costs(ctx); costs["BTC"] != 10_000 {
		t.Fatalf("listing costs %v; want BTC 10000", costs)
	}
	wantLogged(t, env, "listing.cost", "coin BTC", map[string]any{"amount": 10_000})
	wantPage(t, b.Post(t, "/operator/listing/costs", "coin", "BTC", "amount", "x"), http.StatusUnprocessableEntity, `id="amount-error"`)

	f, _ := env.Faucet(t, map[string]int64{"BTC": 50_000})
	hostile := `"><img src=x onerror=alert(1)>`
	f.Name = hostile
	if err := env.App.Store.Transact(ctx, func(tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, f) }); err != nil {
		t.Fatal(err)
	}
	req, err := env.App.Listing.Request(ctx, f, "BTC")
	if err != nil {
		t.Fatal(err)
	}
	p := b.Get(t, "/operator/listing")
	wantPage(t, p, http.StatusOK, fmt.Sprintf(`action="/operator/listing/%d/reject"`, req.ID), "0.00010000 BTC",
		"&#34;&gt;&lt;img src=x onerror=alert(1)&gt;")
	if strings.Contains(p.Body, hostile) {
		t.Error("the faucet's name is not escaped")
	}
	if got := env.Balance(t, f.AccountID, "BTC"); got != 40_000 {
		t.Fatalf("the faucet holds %d after requesting; want 40000", got)
	}

	wantRedirect(t, b.Post(t, fmt.Sprintf("/operator/listing/%d/reject", req.ID)), "/operator/listing?done=op-rejected")
	if got := env.Balance(t, f.AccountID, "BTC"); got != 50_000 {
		t.Errorf("the faucet holds %d after the rejection; want its 50000 back", got)
	}
	wantLogged(t, env, "listing.reject", fmt.Sprintf("listing request %d", req.ID), map[string]any{"faucet_id": f.ID, "refunded": 10_000})
	wantPage(t, b.Post(t, fmt.Sprintf("/operator/listing/%d/approve", req.ID)), http.StatusConflict, "rejected already")

	again, err := env.App.Listing.Request(ctx, f, "BTC")
	if err != nil {
		t.Fatal(err)
	}
	wantRedirect(t, b.Post(t, fmt.Sprintf("/operator/listing/%d/approve", again.ID)), "/operator/listing?done=op-approved")
	if r, _ := env.App.Listing.Status(ctx, f.ID); r.Status != drip.ListingApproved {
		t.Errorf("the request is %s; want approved", r.Status)
	}
	wantLogged(t, env, "listing.approve", fmt.Sprintf("listing request %d", again.ID), map[string]any{"faucet_id": f.ID})
	env.Reconcile(t)
}

// The operator log lists every action newest first, 50 a page.
func TestOperatorLogPaged(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	for i := range 51 {
		wantRedirect(t, b.Post(t, "/operator/coins/BTC/min-payout", "min", fmt.Sprint(i+1), "unit", "units"), "/operator/coins?done=op-min-payout")
	}
	entries := opLog(t, env)
	first := b.Get(t, "/operator/log")
	wantPage(t, first, http.StatusOK, "coin.min_payout", `{&#34;coin&#34;:&#34;BTC&#34;,&#34;from&#34;:50,&#34;to&#34;:51,&#34;to_coins&#34;:&#34;0.00000051&#34;}`,
		fmt.Sprintf(`href="/operator/log?before=%d"`, entries[49].ID))
	if strings.Index(first.Body, `&#34;to&#34;:51,`) > strings.Index(first.Body, `&#34;to&#34;:50,`) {
		t.Error("the log is not newest first")
	}
	if strings.Contains(first.Body, `&#34;to&#34;:1,`) {
		t.Error("the first page shows the 51st entry")
	}
	older := b.Get(t, fmt.Sprintf("/operator/log?before=%d", entries[49].ID))
	wantPage(t, older, http.StatusOK, `&#34;to&#34;:1,`, `href="/operator/log"`)
	if strings.Contains(older.Body, `&#34;to&#34;:2,`) {
		t.Error("the older page repeats an entry of the first")
	}
}

// A hostile username or email, as an older version or a hand edit could
// have stored, is escaped in the search results, and so is the query.
func TestOperatorSearchEscapes(t *testing.T) {
	t.Parallel()
	env, b := operatorEnv(t, storetest.OpenSQLite(t))
	ctx := context.Background()
	name, email := "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>@example.com`
	err := env.App.Store.Transact(ctx, func(tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "user", env.Clock.Now())
		if err != nil {
			return err
		}
		_, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: name, Email: email, EmailVerified: true, CreatedAt: env.Clock.Now()})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Get(t, "/operator/users?q="+url.QueryEscape("<script>"))
	wantPage(t, p, http.StatusOK, "&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;@example.com")
	for _, raw := range []string{name, email, "<script>\""} {
		if strings.Contains(p.Body, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
}

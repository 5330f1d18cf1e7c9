package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// walletEngines runs fn on SQLite, and on PostgreSQL when it is set up
// (DRIP_TEST_POSTGRES_URL), each a fresh application with the console on.
func walletEngines(t *testing.T, fn func(t *testing.T, env *apptest.Env)) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, apptest.New(t, engine.Open(t), apptest.Options{Console: true}))
		})
	}
}

// ownFaucet creates a faucet of owner named name, with funds deposited.
func ownFaucet(t *testing.T, env *apptest.Env, owner *drip.User, name string, funds map[string]int64) (*drip.Faucet, string) {
	t.Helper()
	ctx := context.Background()
	n := strconv.FormatInt(owner.ID, 10) + strconv.Itoa(len(name))
	f, key, err := env.App.Faucets.Create(ctx, faucet.CreateParams{OwnerID: owner.ID, Name: name,
		Domain: "f" + n + ".example.com", URL: "https://f" + n + ".example.com/"})
	if err != nil {
		t.Fatalf("create faucet %q: %v", name, err)
	}
	for coin, amount := range funds {
		if _, err := env.App.Ledger.Deposit(ctx, f, coin, amount); err != nil {
			t.Fatalf("deposit: %v", err)
		}
	}
	return f, key
}

// pay sends a real payout through v1 with a faucet's key.
func pay(t *testing.T, env *apptest.Env, key, to string, amount int64, coin string) {
	t.Helper()
	r := env.Post(t, "/send", url.Values{"api_key": {key}, "to": {to}, "amount": {strconv.FormatInt(amount, 10)}, "currency": {coin}})
	if r.Status() != 200 {
		t.Fatalf("send %d %s to %s: %s", amount, coin, to, r.Raw)
	}
}

func wantStatus(t *testing.T, what string, p *apptest.Page, status int, location string) {
	t.Helper()
	if p.Status != status || p.Location != location {
		t.Fatalf("%s: %d to %q; want %d to %q\n%s", what, p.Status, p.Location, status, location, p.Body)
	}
}

func wantBody(t *testing.T, what string, p *apptest.Page, has ...string) {
	t.Helper()
	for _, s := range has {
		if !strings.Contains(p.Body, s) {
			t.Errorf("%s lacks %q", what, s)
		}
	}
}

func wantNot(t *testing.T, what string, p *apptest.Page, hasnt ...string) {
	t.Helper()
	for _, s := range hasnt {
		if strings.Contains(p.Body, s) {
			t.Errorf("%s shows %q", what, s)
		}
	}
}

// A login lands on the wallet, which shows every active coin with 8
// decimals and its USD value where a price is known (D60), and the
// user's payout_user_hash (D12).
func TestWalletBalances(t *testing.T) {
	t.Parallel()
	prices := price.Builtin()
	delete(prices, "DOGE") // no price: the page says so
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true, Prices: price.Static(prices, "static", nil)})
	alice := env.Member(t, "alice", false)
	_, key := env.Faucet(t, map[string]int64{"BTC": 1e8, "DOGE": 1e10, "ETH": 1e8})
	pay(t, env, key, "alice", 12_345_678, "BTC")
	pay(t, env, key, "alice", 1, "BTC")
	pay(t, env, key, "alice", 250_000_000, "DOGE")
	pay(t, env, key, "alice", 1, "ETH") // $0.00003: not nothing

	b := env.Browser(t)
	wantStatus(t, "the wallet logged out", b.Get(t, "/wallet"), http.StatusSeeOther, "/login")
	wantStatus(t, "log in", b.Post(t, "/login", "identifier", "alice", "password", apptest.Password), http.StatusSeeOther, "/wallet")
	p := b.Get(t, "/wallet")
	wantStatus(t, "the wallet", p, http.StatusOK, "")
	// 0.12345679 BTC at $90000 is $11111.1111.
	wantBody(t, "the wallet", p, "<td class=\"num\">0.12345679</td>", "$11,111.11", "<td class=\"num\">2.50000000</td>", "no price",
		"<td class=\"num\">0.00000001</td>", "&lt; $0.01", "<td class=\"num\">0.00000000</td>", "LTC", alice.PayoutUserHash, "Faucets pay you", `href="/wallet" aria-current="page"`,
		`href="/wallet/payouts"`, `href="/wallet/addresses"`, `href="/wallet/fund"`)
	if len(alice.PayoutUserHash) != 40 {
		t.Fatalf("alice's payout_user_hash %q", alice.PayoutUserHash)
	}
	// The total is of the priced balances alone.
	wantBody(t, "the wallet's total", p, "<strong>$11,111.11</strong>")
	// A disabled coin is listed only while the wallet holds some.
	if err := env.App.Coins.SetActive(context.Background(), "LTC", false); err != nil {
		t.Fatal(err)
	}
	if err := env.App.Coins.SetActive(context.Background(), "DOGE", false); err != nil {
		t.Fatal(err)
	}
	p = b.Get(t, "/wallet")
	wantBody(t, "the wallet with DOGE disabled", p, "2.50000000", "disabled")
	wantNot(t, "the wallet with LTC disabled", p, "<strong>LTC</strong>")
}

// The payouts received: newest first, 50 a page, filtered by coin and by
// faucet, only the user's own, and a faucet's hostile name escaped.
func TestWalletPayouts(t *testing.T) {
	walletEngines(t, func(t *testing.T, env *apptest.Env) {
		env.Member(t, "alice", false)
		env.Member(t, "bob", false)
		owner := env.User(t, "evil")
		hostile := `<script>alert(1)</script>`
		g, gkey := ownFaucet(t, env, owner, hostile, map[string]int64{"BTC": 2e8})
		f, fkey := env.Faucet(t, map[string]int64{"BTC": 1e8, "DOGE": 1e8})
		for i := 1; i <= 51; i++ {
			pay(t, env, fkey, "alice", int64(i), "BTC")
		}
		pay(t, env, fkey, "alice", 700, "DOGE")
		pay(t, env, gkey, "alice", 123_456_789, "BTC") // the newest
		pay(t, env, fkey, "bob", 999, "BTC")

		b := env.Browser(t).LogIn(t, "alice")
		p := b.Get(t, "/wallet/payouts")
		wantStatus(t, "payouts", p, http.StatusOK, "")
		if n := strings.Count(p.Body, "<tr><td>"); n != 50 {
			t.Errorf("the first page lists %d payouts; want 50", n)
		}
		wantBody(t, "payouts", p, "&lt;script&gt;alert(1)&lt;/script&gt;", "1.23456789", "0.00000700", "2026-03-14 15:09:26", f.Name)
		wantNot(t, "payouts", p, hostile, "0.00000999", "0.00000001<") // bob's, and the oldest (on the next page)
		if i, j := strings.Index(p.Body, "1.23456789"), strings.Index(p.Body, "0.00000700"); i < 0 || j < 0 || i > j {
			t.Error("payouts are not newest first")
		}
		next := between(p.Body, `<a class="button secondary" href="`, `" rel="next">`)
		if !strings.HasPrefix(next, "/wallet/payouts?before=") {
			t.Fatalf("the next page's link is %q", next)
		}
		p = b.Get(t, strings.ReplaceAll(next, "&amp;", "&"))
		if n := strings.Count(p.Body, "<tr><td>"); n != 3 {
			t.Errorf("the second page lists %d payouts; want 3", n)
		}
		wantBody(t, "the second page", p, "0.00000001", "0.00000003", ">Newest<")
		wantNot(t, "the second page", p, `rel="next"`, "0.00000700")

		// Filters: by coin, by faucet (the select lists the faucets that paid).
		p = b.Get(t, "/wallet/payouts?coin=doge")
		if n := strings.Count(p.Body, "<tr><td>"); n != 1 || !strings.Contains(p.Body, "0.00000700") {
			t.Errorf("DOGE filter lists %d payouts:\n%s", n, p.Body)
		}
		wantBody(t, "the faucet select", p, fmt.Sprintf(`<option value="%d">&lt;script&gt;`, g.ID), fmt.Sprintf(`<option value="%d">%s`, f.ID, f.Name))
		p = b.Get(t, fmt.Sprintf("/wallet/payouts?faucet=%d", g.ID))
		if n := strings.Count(p.Body, "<tr><td>"); n != 1 || !strings.Contains(p.Body, "1.23456789") {
			t.Errorf("faucet filter lists %d payouts", n)
		}
		p = b.Get(t, fmt.Sprintf("/wallet/payouts?faucet=%d&coin=DOGE", g.ID))
		wantBody(t, "an empty filter", p, "No payouts match these filters")

		// Nonsense in the query is said next to its field.
		p = b.Get(t, "/wallet/payouts?coin=NOPE&faucet=x")
		wantStatus(t, "a bad filter", p, http.StatusUnprocessableEntity, "")
		wantBody(t, "a bad filter", p, `id="coin-error"`, `id="faucet-error"`)
		wantStatus(t, "a bad cursor", b.Get(t, "/wallet/payouts?before=-3"), http.StatusUnprocessableEntity, "")

		// A member never paid sees the empty state, and no one else's.
		env.Member(t, "carol", false)
		p = env.Browser(t).LogIn(t, "carol").Get(t, "/wallet/payouts")
		wantBody(t, "carol's payouts", p, "No payouts yet")
		wantNot(t, "carol's payouts", p, "<tr><td>")
	})
}

// between is the text of s between the first from and the next to.
func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(after, to)
	return in
}

// Addresses are linked and removed per coin (D10, D11); one held by
// another account is refused without telling whose.
func TestWalletAddresses(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	ctx := context.Background()
	a := env.Browser(t).LogIn(t, "alice")
	bob := env.Browser(t).LogIn(t, "bob")

	wantStatus(t, "an empty list", a.Get(t, "/wallet/addresses"), http.StatusOK, "")
	wantBody(t, "an empty list", a.Get(t, "/wallet/addresses"), "No address linked yet")
	wantStatus(t, "link", a.Post(t, "/wallet/addresses", "coin", "btc", "address", " 1AliceAddr "), http.StatusSeeOther, "/wallet/addresses?done=address-linked")
	if u, err := env.App.Store.UserGetByAddress(ctx, "BTC", "1AliceAddr"); err != nil || u.ID != alice.ID {
		t.Fatalf("BTC:1AliceAddr belongs to %v, %v; want alice", u, err)
	}
	p := a.Get(t, "/wallet/addresses?done=address-linked")
	wantBody(t, "the list", p, "1AliceAddr", "The address is linked")

	// The same address for another coin is another link.
	wantStatus(t, "link for DOGE", a.Post(t, "/wallet/addresses", "coin", "DOGE", "address", "1AliceAddr"), http.StatusSeeOther, "/wallet/addresses?done=address-linked")

	// Refusals, each next to its field, nothing stored.
	cases := []struct {
		name, who, coin, address string
		b                        *apptest.Browser
		status                   int
		field, message           string
	}{
		{"another's address", "bob", "BTC", "1AliceAddr", bob, http.StatusConflict, "address-error", "already linked to another account"},
		{"one's own again", "alice", "BTC", "1AliceAddr", a, http.StatusConflict, "address-error", "You have linked this BTC address already"},
		{"a space", "bob", "BTC", "1 Bob", bob, http.StatusUnprocessableEntity, "address-error", "Invalid address"},
		{"empty", "bob", "BTC", "", bob, http.StatusUnprocessableEntity, "address-error", "Invalid address"},
		{"no such coin", "bob", "NOPE", "1BobAddr", bob, http.StatusUnprocessableEntity, "coin-error", "Invalid currency"},
	}
	for _, c := range cases {
		p := c.b.Post(t, "/wallet/addresses", "coin", c.coin, "address", c.address)
		if p.Status != c.status || !strings.Contains(p.Body, `id="`+c.field+`"`) || !strings.Contains(p.Body, c.message) {
			t.Errorf("%s: %d, want %d with %s saying %q\n%s", c.name, p.Status, c.status, c.field, c.message, p.Body)
		}
		if c.name == "another's address" && strings.Contains(p.Body, "alice") {
			t.Errorf("%s: the refusal names the holder", c.name)
		}
	}
	if list, _ := env.App.Store.UserAddressList(ctx, alice.ID); len(list) != 2 {
		t.Errorf("alice's addresses %v; want BTC and DOGE", list)
	}

	// A hostile address is shown escaped.
	hostile := `"><svg/onload=alert(1)>`
	wantStatus(t, "link a hostile address", bob.Post(t, "/wallet/addresses", "coin", "LTC", "address", hostile), http.StatusSeeOther, "/wallet/addresses?done=address-linked")
	p = bob.Get(t, "/wallet/addresses")
	wantBody(t, "bob's list", p, "&#34;&gt;&lt;svg/onload=alert(1)&gt;")
	wantNot(t, "bob's list", p, hostile)

	// Only the holder removes an address.
	wantStatus(t, "bob removing alice's", bob.Post(t, "/wallet/addresses/remove", "coin", "BTC", "address", "1AliceAddr"), http.StatusNotFound, "")
	wantStatus(t, "remove", a.Post(t, "/wallet/addresses/remove", "coin", "BTC", "address", "1AliceAddr"), http.StatusSeeOther, "/wallet/addresses?done=address-removed")
	if _, err := env.App.Store.UserGetByAddress(ctx, "BTC", "1AliceAddr"); err == nil {
		t.Error("BTC:1AliceAddr is still linked after its removal")
	}
	if u, err := env.App.Store.UserGetByAddress(ctx, "DOGE", "1AliceAddr"); err != nil || u.ID != alice.ID {
		t.Errorf("DOGE:1AliceAddr went with the BTC one: %v, %v", u, err)
	}
	p = a.Post(t, "/wallet/addresses/remove", "coin", "BTC", "address", "1AliceAddr")
	wantStatus(t, "removing it again", p, http.StatusNotFound, "")
	wantBody(t, "removing it again", p, "not linked to your account")
	// Freed, it may be bob's.
	wantStatus(t, "bob links the freed address", bob.Post(t, "/wallet/addresses", "coin", "BTC", "address", "1AliceAddr"), http.StatusSeeOther, "/wallet/addresses?done=address-linked")
}

// Funding a faucet moves exactly the amount typed, in coins, from the
// wallet to the user's own faucet, as one ledger transfer; every refusal
// moves nothing.
func TestWalletFund(t *testing.T) {
	walletEngines(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		alice := env.Member(t, "alice", false)
		mine, _ := ownFaucet(t, env, alice, "Alice's faucet", nil)
		others, key := env.Faucet(t, map[string]int64{"BTC": 5e8})
		pay(t, env, key, "alice", 1e8, "BTC") // alice holds 1 BTC
		b := env.Browser(t).LogIn(t, "alice")

		p := b.Get(t, "/wallet/fund")
		wantBody(t, "the fund page", p, "Alice&#39;s faucet", "BTC: you hold 1.00000000", `for="amount"`)
		wantNot(t, "the fund page", p, others.Name)

		id := strconv.FormatInt(mine.ID, 10)
		wantStatus(t, "fund", b.Post(t, "/wallet/fund", "faucet", id, "coin", "btc", "amount", "0.3"),
			http.StatusSeeOther, "/wallet/fund?coin=BTC&done=funded&faucet="+id)
		if w, f := env.Balance(t, alice.AccountID, "BTC"), env.Balance(t, mine.AccountID, "BTC"); w != 70_000_000 || f != 30_000_000 {
			t.Fatalf("after funding 0.3 BTC: wallet %d, faucet %d; want 70000000, 30000000", w, f)
		}
		p = b.Get(t, "/wallet/fund?coin=BTC&done=funded&faucet="+id)
		wantBody(t, "after the fund", p, "Moved:", "0.70000000 BTC", "0.30000000 BTC")

		refusals := []struct {
			name, faucet, coin, amount string
			status                     int
			field, message             string
		}{
			{"more than held", id, "BTC", "0.70000001", http.StatusUnprocessableEntity, "amount-error", "Insufficient funds"},
			{"more than 8 decimals", id, "BTC", "0.000000001", http.StatusUnprocessableEntity, "amount-error", "at most 8 decimals"},
			{"zero", id, "BTC", "0", http.StatusUnprocessableEntity, "amount-error", "above zero"},
			{"negative", id, "BTC", "-1", http.StatusUnprocessableEntity, "amount-error", "Invalid amount"},
			{"not a number", id, "BTC", "lots", http.StatusUnprocessableEntity, "amount-error", "Invalid amount"},
			{"a float's notation", id, "BTC", "1e-3", http.StatusUnprocessableEntity, "amount-error", "Invalid amount"},
			{"no such coin", id, "NOPE", "0.1", http.StatusUnprocessableEntity, "coin-error", "Invalid currency"},
			{"someone else's faucet", strconv.FormatInt(others.ID, 10), "BTC", "0.1", http.StatusNotFound, "faucet-error", "no such faucet among yours"},
			{"a faucet that does not exist", "999999", "BTC", "0.1", http.StatusNotFound, "faucet-error", "no such faucet among yours"},
			{"no faucet", "", "BTC", "0.1", http.StatusNotFound, "faucet-error", "Choose one of your faucets"},
		}
		for _, c := range refusals {
			p := b.Post(t, "/wallet/fund", "faucet", c.faucet, "coin", c.coin, "amount", c.amount)
			if p.Status != c.status || !strings.Contains(p.Body, `id="`+c.field+`"`) || !strings.Contains(p.Body, c.message) {
				t.Errorf("%s: %d, want %d with %s saying %q\n%s", c.name, p.Status, c.status, c.field, c.message, p.Body)
			}
		}
		if w, f, o := env.Balance(t, alice.AccountID, "BTC"), env.Balance(t, mine.AccountID, "BTC"), env.Balance(t, others.AccountID, "BTC"); w != 70_000_000 || f != 30_000_000 || o != 4e8 {
			t.Errorf("after the refusals: wallet %d, faucet %d, other faucet %d; want 70000000, 30000000, 400000000", w, f, o)
		}
		journal, _, err := env.App.Store.TransactionList(ctx, &store.PageParams{ID: alice.AccountID, Coin: "BTC", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		funds := 0
		for _, tr := range journal {
			if tr.Kind == "fund" {
				funds++
				if tr.Amount != -30_000_000 {
					t.Errorf("the fund's journal entry moved %d; want -30000000", tr.Amount)
				}
			}
		}
		if funds != 1 {
			t.Errorf("%d fund transfers in alice's journal; want 1", funds)
		}
		env.Reconcile(t)

		// A member who owns no faucet is told how to get one.
		env.Member(t, "bob", false)
		wantBody(t, "bob's fund page", env.Browser(t).LogIn(t, "bob").Get(t, "/wallet/fund"), "You own no faucet yet", `href="/manage#create"`)
	})
}

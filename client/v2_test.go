package client

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
)

// TestEveryV2Method calls every v2 method once against the real
// application, compares each reply with what the server holds, and then
// checks that the calls covered the OpenAPI document: every path, and
// every member of every request body. A path or member the document gains
// and the client lacks fails here.
func TestEveryV2Method(t *testing.T) {
	eachEngine(t, apptest.Options{}, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		bob := e.User(t, "bob")
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10_000_000, "DOGE": 500_000_000})
		if err := e.App.Listing.SetCost(ctx, "BTC", 100_000); err != nil {
			t.Fatal(err)
		}
		key := e.Key(t, f, drip.ScopeRead, drip.ScopeSend, drip.ScopeManage, drip.ScopeAdmin)
		rec := newRecorder(t, nil)
		c := newClient(t, e.Server.URL, key, rec)
		held := func() *drip.Faucet {
			t.Helper()
			got, err := e.App.Faucets.Get(ctx, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		check := func(what string, want, got any) {
			t.Helper()
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s (-server holds +client got):\n%s", what, d)
			}
		}

		sent, err := c.Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.7", Referral: "spring"})
		if err != nil {
			t.Fatal(err)
		}
		payouts, err := e.App.Faucets.Payouts(ctx, f, "BTC", 10)
		if err != nil || len(payouts) != 1 {
			t.Fatalf("the server holds payouts %v (%v), want the one sent", payouts, err)
		}
		check("Send", SendResult{RateLimitRemaining: sent.RateLimitRemaining, Currency: "BTC", Balance: e.Balance(t, f.AccountID, "BTC"),
			BalanceBitcoin: "0.09999", PayoutID: payouts[0].ID, PayoutUserHash: bob.PayoutUserHash,
			IdempotencyKey: sent.IdempotencyKey, Attempts: 1}, *sent)
		if len(sent.IdempotencyKey) != 32 {
			t.Errorf("generated idempotency key %q, want 32 hex digits", sent.IdempotencyKey)
		}

		bal, err := c.Balance(ctx, "btc")
		if err != nil {
			t.Fatal(err)
		}
		check("Balance", Balance{Currency: "BTC", Balance: 9_999_000, BalanceBitcoin: "0.09999"}, *bal)

		bals, err := c.Balances(ctx)
		if err != nil {
			t.Fatal(err)
		}
		active, err := e.App.Coins.ListActive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var wantBals []Balance
		var wantCoins []Currency
		for _, coin := range active {
			units := e.Balance(t, f.AccountID, coin.Symbol)
			wantBals = append(wantBals, Balance{Currency: coin.Symbol, Balance: units, BalanceBitcoin: jsonNumber(drip.FormatCoins(units))})
			wantCoins = append(wantCoins, Currency{Currency: coin.Symbol, Name: coin.Name, MinimumPayout: coin.MinPayout,
				MinimumPayoutBitcoin: jsonNumber(drip.FormatCoins(coin.MinPayout)), RateLimits: []Limit{}})
		}
		check("Balances", wantBals, bals.Balances)

		coins, err := c.Currencies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check("Currencies", wantCoins, coins.Currencies)

		addr, err := c.CheckAddress(ctx, "bob@example.com", "BTC")
		if err != nil {
			t.Fatal(err)
		}
		check("CheckAddress", AddressCheck{Address: "bob@example.com", Currency: "BTC", PayoutUserHash: bob.PayoutUserHash}, *addr)

		list, err := c.Payouts(ctx, PayoutsQuery{Currency: "BTC", Count: 5})
		if err != nil {
			t.Fatal(err)
		}
		check("Payouts", []Payout{{PayoutID: payouts[0].ID, To: "bob", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.7",
			Referral: "spring", CreatedAt: stamp(payouts[0].CreatedAt)}}, list.Payouts)

		daily, err := c.DailyStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		today := e.Clock.Now().UTC().Format("2006-01-02")
		check("DailyStats", []Day{{Date: today, Currency: "BTC", Payouts: 1, Amount: 1000, AmountBitcoin: "0.00001", UniqueUsers: 1}}, daily.Days)
		if daily.To != today {
			t.Errorf("DailyStats to %s, want %s", daily.To, today)
		}

		users, err := c.UserStats(ctx, "BTC", 1)
		if err != nil {
			t.Fatal(err)
		}
		check("UserStats", &Page[UserStat]{Items: []UserStat{{PayoutUserHash: bob.PayoutUserHash, Payouts: 1, Amount: 1000,
			AmountBitcoin: "0.00001", LastPayoutAt: stamp(payouts[0].CreatedAt)}}, Page: 1, PerPage: 50, Total: 1}, users)

		txs, err := c.Transactions(ctx, "BTC", 1)
		if err != nil {
			t.Fatal(err)
		}
		if txs.Total != 2 || len(txs.Items) != 2 || txs.Items[0].Type != "payout" || txs.Items[0].PayoutID == nil ||
			*txs.Items[0].PayoutID != payouts[0].ID || txs.Items[0].Amount != -1000 || txs.Items[1].Type != "deposit" || txs.Items[1].Amount != 10_000_000 {
			t.Errorf("Transactions: %+v, want the payout of %d then the deposit", txs, payouts[0].ID)
		}

		limits, err := c.SetRateLimits(ctx, []LimitInput{{Currency: "BTC", Per: "recipient", WindowSeconds: 3600, MaxCount: 5},
			{Per: "faucet", WindowSeconds: 60, MaxAmount: 1_000_000}})
		if err != nil {
			t.Fatal(err)
		}
		wantLimits := []Limit{{Currency: new("BTC"), Per: "recipient", WindowSeconds: 3600, MaxCount: new(int64(5))},
			{Per: "faucet", WindowSeconds: 60, MaxAmount: new(int64(1_000_000))}}
		check("SetRateLimits", wantLimits, limits.RateLimits)
		check("SetRateLimits, held", []drip.Limit{{Coin: "BTC", Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 5},
			{Per: drip.PerFaucet, WindowSeconds: 60, MaxAmount: 1_000_000}}, held().Limits)
		rl, err := c.RateLimits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check("RateLimits", wantLimits, rl.RateLimits)
		if rl.RequestRate.PerMinute != e.App.Rate.PerMinute || rl.RequestRate.Burst != e.App.Rate.Burst || rl.RequestRate.Remaining <= 0 {
			t.Errorf("RateLimits request rate %+v, the server's %+v", rl.RequestRate, e.App.Rate)
		}

		wl, err := c.SetIPWhitelist(ctx, []string{"127.0.0.0/8", "203.0.113.7"})
		if err != nil {
			t.Fatal(err)
		}
		check("SetIPWhitelist", held().IPWhitelistStrings(), wl.IPWhitelist)
		if wl, err = c.IPWhitelist(ctx); err != nil {
			t.Fatal(err)
		}
		check("IPWhitelist", held().IPWhitelistStrings(), wl.IPWhitelist)
		if len(wl.IPWhitelist) != 2 {
			t.Errorf("IPWhitelist %v, want the two entries set", wl.IPWhitelist)
		}

		lb, err := c.ToggleLowBalanceNotification(ctx, LowBalanceToggle{Enabled: new(true), Thresholds: map[string]int64{"BTC": 500_000}})
		if err != nil {
			t.Fatal(err)
		}
		check("ToggleLowBalanceNotification", LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": 500_000}}, lb.LowBalance)
		check("ToggleLowBalanceNotification, held", drip.LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": 500_000}}, held().LowBalance)
		if lb, err = c.LowBalanceNotification(ctx); err != nil {
			t.Fatal(err)
		}
		check("LowBalanceNotification", &LowBalanceNotification{LowBalance: LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": 500_000}},
			Notifications: []Notification{}}, lb)

		rules, err := c.UpdateAntiFraudRules(ctx, AntiFraudUpdate{TrustRank: 10, NegativeRank: new(20), Whitelist: []string{"bob"}, Blacklist: []string{"mallory"}})
		if err != nil {
			t.Fatal(err)
		}
		hr := held().Rules
		check("UpdateAntiFraudRules", AntiFraudRules{AntiFraud: hr.AntiFraud, TrustRank: 10, NegativeRank: 20, Whitelist: []string{"bob"}, Blacklist: []string{"mallory"}}, *rules)
		check("UpdateAntiFraudRules, held", drip.Rules{AntiFraud: hr.AntiFraud, TrustRank: 10, NegativeRank: 20, Whitelist: []string{"bob"}, Blacklist: []string{"mallory"}}, hr)
		if rules, err = c.ToggleAntiFraud(ctx, new(!hr.AntiFraud)); err != nil {
			t.Fatal(err)
		}
		if rules.AntiFraud == hr.AntiFraud || held().Rules.AntiFraud != rules.AntiFraud {
			t.Errorf("ToggleAntiFraud: anti_fraud %v, held %v, was %v", rules.AntiFraud, held().Rules.AntiFraud, hr.AntiFraud)
		}
		if rules, err = c.AntiFraudRules(ctx); err != nil {
			t.Fatal(err)
		}
		hr = held().Rules
		check("AntiFraudRules", AntiFraudRules{AntiFraud: hr.AntiFraud, TrustRank: hr.TrustRank, NegativeRank: hr.NegativeRank, Whitelist: hr.Whitelist, Blacklist: hr.Blacklist}, *rules)

		rec2, err := c.UpdateFaucet(ctx, FaucetSettings{Name: "Renamed", Domain: "renamed.example.com", URL: "https://renamed.example.com/claim",
			Description: "Now with DOGE.", TimerMinutes: 30, CurrenciesSelected: []string{"DOGE", "BTC"}, CategoriesSelected: []string{"altcoins"}})
		if err != nil {
			t.Fatal(err)
		}
		h := held()
		if h.Name != "Renamed" || h.Domain != "renamed.example.com" || h.Settings.TimerMinutes != 30 || fmt.Sprint(h.Settings.Currencies) != "[DOGE BTC]" {
			t.Errorf("UpdateFaucet: the server holds %+v", h)
		}
		fc, err := c.Faucet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check("UpdateFaucet and Faucet", rec2, fc)
		check("Faucet", Faucet{ID: f.ID, Name: h.Name, Domain: h.Domain, URL: h.URL, Description: h.Settings.Description,
			TimerMinutes: 30, CurrenciesSelected: []string{"DOGE", "BTC"}, CategoriesSelected: []string{"altcoins"}, OwnerStatus: "active",
			CreatedAt: stamp(h.CreatedAt), IPWhitelist: h.IPWhitelistStrings(), RateLimits: wantLimits, AntiFraud: *rules,
			LowBalance: lb.LowBalance, Balances: []Balance{{"BTC", 9_999_000, "0.09999"}, {"DOGE", 500_000_000, "5"}}}, *fc)
		// With DOGE selected first, a balance without a coin is DOGE's (D28).
		if bal, err = c.Balance(ctx, ""); err != nil || bal.Currency != "DOGE" {
			t.Errorf("Balance without a coin: %+v, %v; want DOGE, the first selected", bal, err)
		}

		if err := e.App.Audit.Record(ctx, f.ID, 1, "set_ip_whitelist", map[string]any{"ip_whitelist": []string{}}, "IP whitelist updated.", false); err != nil {
			t.Fatal(err)
		}
		audit, err := c.Audit(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(audit.Entries) != 1 || audit.Entries[0].Tool != "set_ip_whitelist" || string(audit.Entries[0].Arguments) != `{"ip_whitelist":[]}` {
			t.Errorf("Audit: %+v, want the one entry recorded", audit.Entries)
		}

		// The events feed (D59): the payout sent above, read on from a
		// cursor (on PostgreSQL an event is answered a moment after its
		// commit, once no open transaction could precede it).
		var evs *Events
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if evs, err = c.Events(ctx, EventsQuery{Types: []string{EventPayoutSent}, Limit: 1}); err != nil {
				t.Fatal(err)
			}
			if len(evs.Events) > 0 || time.Now().After(deadline) {
				break
			}
		}
		var sentData PayoutSent
		if len(evs.Events) != 1 || evs.Events[0].Event != EventPayoutSent || json.Unmarshal(evs.Events[0].Data, &sentData) != nil ||
			sentData.PayoutID != fmt.Sprint(sent.PayoutID) {
			t.Errorf("Events: %+v, want the payout.sent of payout %d", evs, sent.PayoutID)
		}
		if more, err := c.Events(ctx, EventsQuery{After: evs.Next, Types: []string{EventPayoutSent}, Limit: 100}); err != nil || len(more.Events) != 0 {
			t.Errorf("Events after the first payout's: %+v, %v; want none", more, err)
		}

		cost, err := c.ApprovalCost(ctx, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		check("ApprovalCost", ApprovalCost{Currency: "BTC", Cost: 100_000, CostBitcoin: "0.001", Balance: 9_999_000}, *cost)
		appr, err := c.RequestApproval(ctx, "BTC")
		if err != nil {
			t.Fatal(err)
		}
		st, err := e.App.Listing.Status(ctx, f.ID)
		if err != nil || st == nil {
			t.Fatalf("listing status %v, %v", st, err)
		}
		check("RequestApproval", ApprovalRequest{Listing: Listing{RequestID: st.ID, Currency: "BTC", Amount: 100_000, Status: "pending",
			CreatedAt: stamp(st.CreatedAt)}, Balance: e.Balance(t, f.AccountID, "BTC")}, *appr)
		if appr.Balance != 9_899_000 {
			t.Errorf("RequestApproval left %d, want 9899000", appr.Balance)
		}

		created, err := c.CreateFaucet(ctx, NewFaucet{Name: "Second", Domain: "second.example.com", URL: "https://second.example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		second, err := e.App.Faucets.Get(ctx, created.Faucet.ID)
		if err != nil || second.OwnerID != f.OwnerID || second.Name != "Second" {
			t.Errorf("CreateFaucet: the server holds %+v (%v), want Second owned by %d", second, err, f.OwnerID)
		}
		if _, err := newV1(t, e.Server.URL, created.APIKey).GetBalance(ctx, "BTC"); err != nil {
			t.Errorf("the created faucet's api_key: %v", err)
		}

		// A dry run pays nothing; a batch answers each item (D61, D62).
		before := e.Balance(t, f.AccountID, "BTC")
		dry, err := c.Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		check("Send dry run", SendResult{RateLimitRemaining: dry.RateLimitRemaining, Currency: "BTC", Balance: before - 1000,
			BalanceBitcoin: dry.BalanceBitcoin, PayoutUserHash: bob.PayoutUserHash, DryRun: true,
			IdempotencyKey: dry.IdempotencyKey, Attempts: 1}, *dry)
		items := []SendRequest{{To: "bob", Amount: 1000, Currency: "BTC"}, {To: "no_such_user", Amount: 1000, Currency: "BTC"}}
		judged, err := c.SendBatch(ctx, items, true)
		if err != nil {
			t.Fatal(err)
		}
		if !judged.DryRun || judged.Paid != 1 || judged.Failed != 1 || judged.Items[0].Data.PayoutID != 0 || e.Balance(t, f.AccountID, "BTC") != before {
			t.Errorf("SendBatch dry run: %+v, balance %d, want 1 would-be payout, 1 refusal, nothing paid", judged, e.Balance(t, f.AccountID, "BTC"))
		}
		batch, err := c.SendBatch(ctx, items, false)
		if err != nil {
			t.Fatal(err)
		}
		if batch.Paid != 1 || batch.Failed != 1 || batch.Items[0].Data == nil || batch.Items[0].Data.PayoutID <= 0 ||
			batch.Items[0].IdempotencyKey != items[0].IdempotencyKey || e.Balance(t, f.AccountID, "BTC") != before-1000 {
			t.Errorf("SendBatch: %+v, want item 0 paid with its key, item 1 refused", batch)
		}
		if err := batch.Items[1].Err(); ErrorCode(err) != CodeRecipientNotPayable {
			t.Errorf("SendBatch item 1: %v, want recipient_not_payable", err)
		}

		// The calls above covered the document: each of its paths, and each
		// member of each request body.
		doc, err := apptest.V2Document()
		if err != nil {
			t.Fatal(err)
		}
		var documented []string
		for path, item := range doc.Paths.Map() {
			if "/api/v2"+path == apiv2.OpenAPIPath {
				continue
			}
			documented = append(documented, path)
			if item.Post == nil || item.Post.RequestBody == nil {
				continue
			}
			for member := range item.Post.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties {
				if !rec.sent(path, member) {
					t.Errorf("no request to %s carried %q: the client cannot send it, or this test does not", path, member)
				}
			}
		}
		if d := cmp.Diff(slices.Sorted(slices.Values(documented)), rec.called()); d != "" {
			t.Errorf("v2 paths of the OpenAPI document (-) the client did not call, (+) it called outside the document:\n%s", d)
		}
	})
}

// TestV1EveryMethod calls every v1 method once against the real
// application and compares each reply with what the server holds.
func TestV1EveryMethod(t *testing.T) {
	eachEngine(t, apptest.Options{}, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		bob := e.User(t, "bob")
		f, apiKey := e.Faucet(t, map[string]int64{"BTC": 10_000_000})
		v := newV1(t, e.Server.URL, apiKey)

		sent, err := v.Send(ctx, V1SendRequest{To: "bob", Amount: 1000, Currency: "btc", IPAddress: "203.0.113.7", Referral: "spring"})
		if err != nil {
			t.Fatal(err)
		}
		payouts, err := e.App.Faucets.Payouts(ctx, f, "", 10)
		if err != nil || len(payouts) != 1 || payouts[0].Referral != "spring" || payouts[0].IPAddress != "203.0.113.7" {
			t.Fatalf("the server holds payouts %+v (%v), want the one sent", payouts, err)
		}
		if sent.Status != 200 || sent.PayoutID != payouts[0].ID || sent.Currency != "BTC" || sent.Balance != e.Balance(t, f.AccountID, "BTC") ||
			sent.BalanceBitcoin != "0.09999" || sent.PayoutUserHash != bob.PayoutUserHash {
			t.Errorf("Send: %+v; the server holds payout %d, balance %d", sent, payouts[0].ID, e.Balance(t, f.AccountID, "BTC"))
		}

		addr, err := v.CheckAddress(ctx, "bob", "BTC")
		if err != nil || addr.PayoutUserHash != bob.PayoutUserHash {
			t.Errorf("CheckAddress: %+v, %v; want %s", addr, err, bob.PayoutUserHash)
		}
		bal, err := v.GetBalance(ctx, "")
		if err != nil || bal.Currency != "BTC" || bal.Balance != 9_999_000 || bal.BalanceBitcoin != "0.09999" {
			t.Errorf("GetBalance: %+v, %v", bal, err)
		}
		list, err := v.Payouts(ctx, 5, "BTC")
		if err != nil || len(list.Rewards) != 1 || list.Rewards[0].To != "bob" || list.Rewards[0].Amount != 1000 {
			t.Fatalf("Payouts: %+v, %v", list, err)
		}
		if when, err := list.Rewards[0].Time(); err != nil || !when.Equal(payouts[0].CreatedAt.Truncate(time.Second)) {
			t.Errorf("Payouts date %q is %v (%v), want %v", list.Rewards[0].Date, when, err, payouts[0].CreatedAt)
		}
		coins, err := v.Currencies(ctx)
		if err != nil {
			t.Fatal(err)
		}
		active, err := e.App.Coins.ListActive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, c := range active {
			want = append(want, c.Symbol)
		}
		if d := cmp.Diff(want, coins.Currencies); d != "" || len(coins.CurrenciesNames) != len(want) {
			t.Errorf("Currencies (-server +client):\n%s names %v", d, coins.CurrenciesNames)
		}
	})
}

// stamp writes a time as drip's replies do (RFC 3339, UTC).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func jsonNumber(s string) json.Number { return json.Number(s) }

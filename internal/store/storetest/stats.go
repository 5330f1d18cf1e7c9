package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the statistics (D37).

func testStatsDailyByUTCDayAndCoin(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 100000)
	deposit(t, st, f.AccountID, "DOGE", 100000)
	deposit(t, st, g.AccountID, "BTC", 100000)

	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	// since is 20:00 UTC on the 13th, given in another zone.
	since := time.Date(2026, 3, 13, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	pay(t, st, f, alice, "BTC", 1, "", since.Add(-time.Microsecond)) // before since
	pay(t, st, f, bob, "BTC", 2, "", since)
	pay(t, st, f, alice, "BTC", 100, "", midnight.Add(-time.Microsecond))
	pay(t, st, f, bob, "BTC", 200, "", midnight.Add(-time.Hour))
	pay(t, st, f, alice, "BTC", 50, "", midnight.Add(-24*time.Hour)) // the first microsecond of the 14th
	pay(t, st, f, alice, "BTC", 7, "", midnight)
	pay(t, st, f, carol, "DOGE", 9, "", midnight.Add(time.Hour))
	pay(t, st, f, alice, "DOGE", 11, "", midnight.Add(24*time.Hour-time.Microsecond))
	pay(t, st, g, carol, "BTC", 999, "", midnight.Add(-time.Hour)) // another faucet

	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	want := []drip.DailyStat{
		{Day: day(15), Coin: "BTC", Payouts: 1, Amount: 7, Recipients: 1},
		{Day: day(15), Coin: "DOGE", Payouts: 2, Amount: 20, Recipients: 2},
		{Day: day(14), Coin: "BTC", Payouts: 3, Amount: 350, Recipients: 2},
		{Day: day(13), Coin: "BTC", Payouts: 1, Amount: 2, Recipients: 1},
	}
	got, err := st.StatsDaily(ctx, f.ID, since)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StatsDaily (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.Day.Location() != time.UTC {
			t.Errorf("StatsDaily day %v in %v, want UTC", s.Day, s.Day.Location())
		}
	}
	got, err = st.StatsDaily(ctx, f.ID, midnight)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := cmp.Diff(want[:2], got); diff != "" {
		t.Errorf("StatsDaily since midnight (-want +got):\n%s", diff)
	}
	got, err = st.StatsDaily(ctx, newFaucet(t, st, owner, "key3").ID, since)
	if err != nil || len(got) != 0 {
		t.Errorf("StatsDaily of a faucet that never paid = %+v, %v; want empty", got, err)
	}
}

func testStatsUsersLargestFirstAndPaged(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol, dave := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol"), newUser(t, st, "dave")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, f.AccountID, "DOGE", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)
	pay(t, st, f, alice, "BTC", 10, "", t0)
	pay(t, st, f, bob, "BTC", 50, "", t0.Add(time.Minute))
	pay(t, st, f, alice, "BTC", 20, "", t0.Add(2*time.Minute))
	pay(t, st, f, carol, "BTC", 30, "", t0.Add(3*time.Minute)) // ties with alice: the earlier user first
	pay(t, st, f, dave, "DOGE", 1000, "", t0)                  // another coin
	pay(t, st, g, dave, "BTC", 5000, "", t0)                   // another faucet

	all := []drip.UserStat{
		{PayoutUserHash: bob.PayoutUserHash, Payouts: 1, Amount: 50, LastPayoutAt: t0.Add(time.Minute)},
		{PayoutUserHash: alice.PayoutUserHash, Payouts: 2, Amount: 30, LastPayoutAt: t0.Add(2 * time.Minute)},
		{PayoutUserHash: carol.PayoutUserHash, Payouts: 1, Amount: 30, LastPayoutAt: t0.Add(3 * time.Minute)},
	}
	for _, c := range []struct {
		name      string
		p         store.PageParams
		want      []drip.UserStat
		wantTotal int64
	}{
		{"first page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2}, all[:2], 3},
		{"second page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 2}, all[2:], 3},
		{"past the end", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 4}, nil, 3},
		{"one page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 50}, all, 3},
		{"other coin", store.PageParams{ID: f.ID, Coin: "DOGE", Limit: 50}, []drip.UserStat{
			{PayoutUserHash: dave.PayoutUserHash, Payouts: 1, Amount: 1000, LastPayoutAt: t0}}, 1},
		{"a coin never paid", store.PageParams{ID: f.ID, Coin: "LTC", Limit: 50}, nil, 0},
	} {
		got, total, err := st.StatsUsers(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: StatsUsers: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: StatsUsers (-want +got):\n%s", c.name, diff)
		}
		if total != c.wantTotal {
			t.Errorf("%s: StatsUsers total = %d, want %d", c.name, total, c.wantTotal)
		}
	}
}

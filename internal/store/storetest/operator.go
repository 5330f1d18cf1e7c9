package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the operator pages (issue 11, item 6).

func testOperatorLogNewestFirstAndPaged(t *testing.T, st store.Store) {
	ctx := context.Background()
	olga := newUser(t, st, "olga")
	oscar := newUser(t, st, "oscar")
	add := func(by *drip.User, action, target, detail string, at time.Time) int64 {
		t.Helper()
		var id int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			id, err = tx.OperatorLogAdd(ctx, &store.OperatorLogEntry{OperatorID: by.ID, Action: action, Target: target, Detail: []byte(detail), CreatedAt: at})
			return err
		})
		return id
	}
	first := add(olga, "user.suspend", "user alice", `{"username":"alice"}`, t0)
	second := add(oscar, "deposit", "faucet 3", `{"amount":"0.5","coin":"BTC"}`, t0.Add(time.Second))
	third := add(olga, "coin.disable", "coin DOGE", `{}`, t0.Add(2*time.Second))
	list := func(before int64, limit int) []store.OperatorLogEntry {
		t.Helper()
		got, err := st.OperatorLogList(ctx, &store.OperatorLogListParams{BeforeID: before, Limit: limit})
		if err != nil {
			t.Fatalf("OperatorLogList(%d, %d): %v", before, limit, err)
		}
		return got
	}
	want := []store.OperatorLogEntry{
		{ID: third, OperatorID: olga.ID, Operator: "olga", Action: "coin.disable", Target: "coin DOGE", Detail: []byte(`{}`), CreatedAt: t0.Add(2 * time.Second)},
		{ID: second, OperatorID: oscar.ID, Operator: "oscar", Action: "deposit", Target: "faucet 3", Detail: []byte(`{"amount":"0.5","coin":"BTC"}`), CreatedAt: t0.Add(time.Second)},
		{ID: first, OperatorID: olga.ID, Operator: "olga", Action: "user.suspend", Target: "user alice", Detail: []byte(`{"username":"alice"}`), CreatedAt: t0},
	}
	if diff := cmp.Diff(want, list(0, 10)); diff != "" {
		t.Errorf("OperatorLogList from the newest (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], list(0, 2)); diff != "" {
		t.Errorf("OperatorLogList's first page of 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], list(second, 2)); diff != "" {
		t.Errorf("OperatorLogList before the second entry (-want +got):\n%s", diff)
	}
	if got := list(first, 10); len(got) != 0 {
		t.Errorf("OperatorLogList before the first entry = %v, want none", got)
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.OperatorLogAdd(ctx, &store.OperatorLogEntry{OperatorID: 999999, Action: "x", Target: "y", Detail: []byte(`{}`), CreatedAt: t0})
		return err
	})
	if err == nil {
		t.Error("OperatorLogAdd by a user who does not exist succeeded; want the schema to refuse it")
	}
}

func testUserSearchBySubstringPaged(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	alina := newUser(t, st, "alina_x")
	bob := newUser(t, st, "bob")
	newUser(t, st, "albert")
	names := func(q string, limit, offset int) []string {
		t.Helper()
		users, err := st.UserSearch(ctx, &store.UserSearchParams{Query: q, Limit: limit, Offset: offset})
		if err != nil {
			t.Fatalf("UserSearch(%q): %v", q, err)
		}
		out := []string{}
		for _, u := range users {
			out = append(out, u.Username)
		}
		return out
	}
	for _, c := range []struct {
		query         string
		limit, offset int
		want          []string
	}{
		{"", 10, 0, []string{"alice", "alina_x", "bob", "albert"}}, // everyone, in sign-up order
		{"al", 10, 0, []string{"alice", "alina_x", "albert"}},      // a prefix of usernames
		{"AL", 10, 0, []string{"alice", "alina_x", "albert"}},      // in any case
		{"ber", 10, 0, []string{"albert"}},                         // inside a username
		{"bob@example", 10, 0, []string{"bob"}},                    // an email
		{alice.PayoutUserHash, 10, 0, []string{"alice"}},           // a payout_user_hash
		{bob.PayoutUserHash[30:], 10, 0, []string{"bob"}},          // the end of one
		{"_", 10, 0, []string{"alina_x"}},                          // LIKE's wildcards match themselves
		{"%", 10, 0, []string{}},
		{`\`, 10, 0, []string{}},
		{"al", 2, 0, []string{"alice", "alina_x"}}, // paged
		{"al", 2, 2, []string{"albert"}},
		{"nobody", 10, 0, []string{}},
	} {
		if diff := cmp.Diff(c.want, names(c.query, c.limit, c.offset)); diff != "" {
			t.Errorf("UserSearch(%q, limit %d, offset %d) (-want +got):\n%s", c.query, c.limit, c.offset, diff)
		}
	}
	got, err := st.UserSearch(ctx, &store.UserSearchParams{Query: "alina", Limit: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("UserSearch(alina): %v, %v", got, err)
	}
	if diff := cmp.Diff(*alina, got[0]); diff != "" {
		t.Errorf("a user found by UserSearch differs from UserGetByID (-want +got):\n%s", diff)
	}
}

func testUserSetEmailVerified(t *testing.T, st store.Store) {
	ctx := context.Background()
	u := newUser(t, st, "carol")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: u.ID, Email: "carol@example.org", Verified: false})
	})
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetEmailVerified(ctx, u.ID) })
	got, err := st.UserGetByID(ctx, u.ID)
	if err != nil || !got.EmailVerified || got.Email != "carol@example.org" {
		t.Errorf("after UserSetEmailVerified: %+v, %v; want carol@example.org verified", got, err)
	}
	err = try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetEmailVerified(ctx, 999999) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UserSetEmailVerified of no user: %v, want ErrNotFound", err)
	}
}

func testCoinSetMinPayout(t *testing.T, st store.Store) {
	ctx := context.Background()
	minOf := func(symbol string) int64 {
		t.Helper()
		coins, err := st.CoinList(ctx)
		if err != nil {
			t.Fatalf("CoinList: %v", err)
		}
		for _, c := range coins {
			if c.Symbol == symbol {
				return c.MinPayout
			}
		}
		t.Fatalf("no coin %s", symbol)
		return 0
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetMinPayout(ctx, "DOGE", 50_000_000) })
	if got := minOf("DOGE"); got != 50_000_000 {
		t.Errorf("DOGE's minimum payout = %d, want 50000000", got)
	}
	if got := minOf("BTC"); got != 1 {
		t.Errorf("BTC's minimum payout = %d, want it untouched at 1", got)
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetMinPayout(ctx, "NOPE", 5) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CoinSetMinPayout(NOPE): %v, want ErrNotFound", err)
	}
	for _, bad := range []int64{0, -1} {
		if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetMinPayout(ctx, "DOGE", bad) }); err == nil {
			t.Errorf("CoinSetMinPayout(DOGE, %d) succeeded; want the schema to refuse it", bad)
		}
	}
	if got := minOf("DOGE"); got != 50_000_000 {
		t.Errorf("DOGE's minimum payout after refused changes = %d, want 50000000", got)
	}
}

func testBalanceTotalsPerCoinAndHolder(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10_000)
	deposit(t, st, g.AccountID, "BTC", 5_000)
	deposit(t, st, alice.AccountID, "BTC", 300)
	deposit(t, st, f.AccountID, "DOGE", 7)
	transfer(t, st, "BTC", f.AccountID, drip.AccountListing, 700, "listing_fee", t0)
	transfer(t, st, "DOGE", f.AccountID, owner.AccountID, 7, "payout", t0) // the faucet's DOGE is 0 now
	got, err := st.BalanceTotals(ctx)
	if err != nil {
		t.Fatalf("BalanceTotals: %v", err)
	}
	want := []store.BalanceTotal{
		{Coin: "BTC", Holder: "faucet", Accounts: 2, Amount: 14_300},
		{Coin: "BTC", Holder: "system:deposits", Accounts: 1, Amount: -15_300},
		{Coin: "BTC", Holder: "system:listing", Accounts: 1, Amount: 700},
		{Coin: "BTC", Holder: "user", Accounts: 1, Amount: 300},
		{Coin: "DOGE", Holder: "faucet", Accounts: 0, Amount: 0},
		{Coin: "DOGE", Holder: "system:deposits", Accounts: 1, Amount: -7},
		{Coin: "DOGE", Holder: "user", Accounts: 1, Amount: 7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("BalanceTotals (-want +got):\n%s", diff)
	}
}

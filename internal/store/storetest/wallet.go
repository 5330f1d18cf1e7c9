package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the wallet pages (issue 11): the payouts a user
// received, the faucets that paid them, and unlinking an address.

func testPayoutListByRecipient(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)
	r1 := received(t, st, f, alice, "BTC", 10, "203.0.113.1", t0)
	r2 := received(t, st, f, alice, "DOGE", 20, "", t0.Add(time.Second))
	bobs := pay(t, st, f, bob, "BTC", 5, "", t0.Add(time.Second)) // another recipient's
	r3 := received(t, st, g, alice, "BTC", 30, "", t0.Add(2*time.Second))
	// A transfer into the wallet that is not a payout is not listed.
	transfer(t, st, "BTC", drip.AccountDeposits, alice.AccountID, 7, "deposit", t0.Add(3*time.Second))
	r4 := received(t, st, f, alice, "BTC", 40, "", t0.Add(4*time.Second))

	// Paid in the same second by two faucets: the list orders by time,
	// then by id.
	r5 := received(t, st, g, alice, "BTC", 50, "", t0.Add(5*time.Second))
	r6 := received(t, st, f, alice, "BTC", 60, "", t0.Add(5*time.Second))
	r7 := received(t, st, g, alice, "BTC", 70, "", t0.Add(5*time.Second))

	cases := []struct {
		name string
		p    store.PayoutListByRecipientParams
		want []store.ReceivedPayout
	}{
		{"every payout newest first", store.PayoutListByRecipientParams{UserID: alice.ID, Limit: 10}, []store.ReceivedPayout{r7, r6, r5, r4, r3, r2, r1}},
		{"one coin", store.PayoutListByRecipientParams{UserID: alice.ID, Coin: "BTC", Limit: 10}, []store.ReceivedPayout{r7, r6, r5, r4, r3, r1}},
		{"one faucet", store.PayoutListByRecipientParams{UserID: alice.ID, FaucetID: g.ID, Limit: 10}, []store.ReceivedPayout{r7, r5, r3}},
		{"coin and faucet", store.PayoutListByRecipientParams{UserID: alice.ID, Coin: "BTC", FaucetID: f.ID, Limit: 10}, []store.ReceivedPayout{r6, r4, r1}},
		{"first page", store.PayoutListByRecipientParams{UserID: alice.ID, Limit: 2}, []store.ReceivedPayout{r7, r6}},
		{"next page, within the same second", store.PayoutListByRecipientParams{UserID: alice.ID, Before: r6.ID, Limit: 2}, []store.ReceivedPayout{r5, r4}},
		{"next page", store.PayoutListByRecipientParams{UserID: alice.ID, Before: r3.ID, Limit: 2}, []store.ReceivedPayout{r2, r1}},
		{"next page of one faucet", store.PayoutListByRecipientParams{UserID: alice.ID, FaucetID: f.ID, Before: r4.ID, Limit: 2}, []store.ReceivedPayout{r2, r1}},
		{"past the last", store.PayoutListByRecipientParams{UserID: alice.ID, Before: r1.ID, Limit: 2}, nil},
		{"after another user's payout", store.PayoutListByRecipientParams{UserID: alice.ID, Before: bobs.ID, Limit: 10}, nil},
		{"a coin never paid", store.PayoutListByRecipientParams{UserID: alice.ID, Coin: "LTC", Limit: 10}, nil},
		{"a wallet never paid", store.PayoutListByRecipientParams{UserID: owner.ID, Limit: 10}, nil},
	}
	for _, c := range cases {
		got, err := st.PayoutListByRecipient(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: PayoutListByRecipient: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: PayoutListByRecipient (-want +got):\n%s", c.name, diff)
		}
	}
}

// testPayoutListByRecipientMerges: a wallet's list merges the parts of
// many faucets (D67), page after page, each payout once and in order,
// whichever faucet fills a page.
func testPayoutListByRecipientMerges(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	var faucets []*drip.Faucet
	for i := range 5 {
		f := newFaucet(t, st, owner, fmt.Sprintf("key%d", i))
		deposit(t, st, f.AccountID, "BTC", 1000)
		faucets = append(faucets, f)
	}
	// 23 payouts over 5 faucets, some in the same second, one faucet
	// paying a run of them.
	var want []store.ReceivedPayout
	for i := range 23 {
		f := faucets[(i*3)%5]
		if i >= 10 && i < 16 {
			f = faucets[4]
		}
		want = append(want, received(t, st, f, alice, "BTC", int64(i+1), "", t0.Add(time.Duration(i/3)*time.Second)))
	}
	slices.Reverse(want) // newest first: later seconds, and within one the later id
	for _, limit := range []int{1, 4, 7, 23, 30} {
		var got []store.ReceivedPayout
		var before int64
		for pages := 0; ; pages++ {
			if pages > 30 {
				t.Fatalf("limit %d: more than 30 pages", limit)
			}
			page, err := st.PayoutListByRecipient(ctx, &store.PayoutListByRecipientParams{UserID: alice.ID, Before: before, Limit: limit})
			if err != nil {
				t.Fatalf("limit %d: PayoutListByRecipient: %v", limit, err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page))
			}
			got = append(got, page...)
			if len(page) < limit {
				break
			}
			before = page[len(page)-1].ID
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("limit %d: the pages together (-want +got):\n%s", limit, diff)
		}
	}
}

// received pays r as pay does and returns the payout as
// PayoutListByRecipient lists it.
func received(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, ip string, at time.Time) store.ReceivedPayout {
	t.Helper()
	return store.ReceivedPayout{Payout: pay(t, st, f, r, coin, amount, ip, at), FaucetName: f.Name}
}

func testFaucetListPayers(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	f := newFaucet(t, st, owner, "zkey") // "Faucet zkey": listed after "Faucet akey"
	g := newFaucet(t, st, owner, "akey")
	newFaucet(t, st, owner, "never")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)
	pay(t, st, f, alice, "BTC", 1, "", t0)
	pay(t, st, f, alice, "BTC", 1, "", t0)
	pay(t, st, g, alice, "BTC", 1, "", t0)
	pay(t, st, g, bob, "BTC", 1, "", t0)

	for _, c := range []struct {
		user *drip.User
		want []int64
	}{{alice, []int64{g.ID, f.ID}}, {bob, []int64{g.ID}}, {owner, nil}} {
		got, err := st.FaucetListPayers(ctx, c.user.ID)
		if err != nil {
			t.Fatalf("FaucetListPayers(%s): %v", c.user.Username, err)
		}
		var ids []int64
		for _, f := range got {
			ids = append(ids, f.ID)
		}
		if diff := cmp.Diff(c.want, ids, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("FaucetListPayers(%s) ids, by name (-want +got):\n%s", c.user.Username, diff)
		}
	}
}

func testUserAddressRemove(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.UserAddressAdd(ctx, alice.ID, "BTC", "addr1", t0); err != nil {
			return err
		}
		return tx.UserAddressAdd(ctx, alice.ID, "DOGE", "addr1", t0)
	})
	// Only the user who linked it, for that coin, can remove it.
	for _, c := range []struct {
		user       *drip.User
		coin, addr string
	}{{bob, "BTC", "addr1"}, {alice, "LTC", "addr1"}, {alice, "BTC", "addr2"}} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAddressRemove(ctx, c.user.ID, c.coin, c.addr)
		})
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("UserAddressRemove(%s, %s, %s) = %v; want ErrNotFound", c.user.Username, c.coin, c.addr, err)
		}
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserAddressRemove(ctx, alice.ID, "BTC", "addr1")
	})
	got, err := st.UserAddressList(ctx, alice.ID)
	if err != nil {
		t.Fatalf("UserAddressList: %v", err)
	}
	if diff := cmp.Diff([]string{"DOGE:addr1"}, got); diff != "" {
		t.Errorf("addresses after removing BTC:addr1 (-want +got):\n%s", diff)
	}
	// Freed, the address may be linked again, by anyone.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserAddressAdd(ctx, bob.ID, "BTC", "addr1", t0)
	})
	if u, err := st.UserGetByAddress(ctx, "BTC", "addr1"); err != nil || u.ID != bob.ID {
		t.Errorf("UserGetByAddress(BTC, addr1) = %v, %v; want bob", u, err)
	}
}

package storetest

import (
	"context"
	"errors"
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
	pay(t, st, f, bob, "BTC", 5, "", t0.Add(time.Second)) // another recipient's
	r3 := received(t, st, g, alice, "BTC", 30, "", t0.Add(2*time.Second))
	// A transfer into the wallet that is not a payout is not listed.
	transfer(t, st, "BTC", drip.AccountDeposits, alice.AccountID, 7, "deposit", t0.Add(3*time.Second))
	r4 := received(t, st, f, alice, "BTC", 40, "", t0.Add(4*time.Second))

	cases := []struct {
		name string
		p    store.PayoutListByRecipientParams
		want []store.ReceivedPayout
	}{
		{"every payout newest first", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Limit: 10}, []store.ReceivedPayout{r4, r3, r2, r1}},
		{"one coin", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Coin: "BTC", Limit: 10}, []store.ReceivedPayout{r4, r3, r1}},
		{"one faucet", store.PayoutListByRecipientParams{AccountID: alice.AccountID, FaucetID: g.ID, Limit: 10}, []store.ReceivedPayout{r3}},
		{"coin and faucet", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Coin: "BTC", FaucetID: f.ID, Limit: 10}, []store.ReceivedPayout{r4, r1}},
		{"first page", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Limit: 2}, []store.ReceivedPayout{r4, r3}},
		{"next page", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Before: r3.TransferID, Limit: 2}, []store.ReceivedPayout{r2, r1}},
		{"past the last", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Before: r1.TransferID, Limit: 2}, nil},
		{"a coin never paid", store.PayoutListByRecipientParams{AccountID: alice.AccountID, Coin: "LTC", Limit: 10}, nil},
		{"a wallet never paid", store.PayoutListByRecipientParams{AccountID: owner.AccountID, Limit: 10}, nil},
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

// received pays r as pay does and returns the payout as
// PayoutListByRecipient lists it.
func received(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, ip string, at time.Time) store.ReceivedPayout {
	t.Helper()
	p, transferID := payTransfer(t, st, f, r, coin, amount, ip, at)
	return store.ReceivedPayout{Payout: p, TransferID: transferID, FaucetName: f.Name}
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

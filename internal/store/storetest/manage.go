package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the faucet management pages (issue 11): the
// owner's filtered, keyset-paged list of payouts.

func testPayoutSearchFiltersAndPages(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	f, g := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)

	// Two payouts share a time, so the page order falls back to the id.
	p1 := payReferral(t, st, f, alice, "BTC", 1, "spring", t0)
	p2 := payReferral(t, st, f, bob, "BTC", 2, "spring", t0.Add(time.Second))
	p3 := payReferral(t, st, f, alice, "DOGE", 3, "", t0.Add(time.Second))
	p4 := payReferral(t, st, f, alice, "BTC", 4, "=HYPERLINK(1)", t0.Add(2*time.Second))
	other := payReferral(t, st, g, alice, "BTC", 5, "spring", t0.Add(3*time.Second))

	found := func(p drip.Payout, u *drip.User) store.PayoutFound {
		return store.PayoutFound{Payout: p, PayoutUserHash: u.PayoutUserHash}
	}
	for _, tc := range []struct {
		name string
		p    store.PayoutSearchParams
		want []store.PayoutFound
	}{
		{"every payout of the faucet, newest first", store.PayoutSearchParams{},
			[]store.PayoutFound{found(p4, alice), found(p3, alice), found(p2, bob), found(p1, alice)}},
		{"by coin", store.PayoutSearchParams{Coin: "BTC"},
			[]store.PayoutFound{found(p4, alice), found(p2, bob), found(p1, alice)}},
		{"by recipient", store.PayoutSearchParams{RecipientID: alice.ID},
			[]store.PayoutFound{found(p4, alice), found(p3, alice), found(p1, alice)}},
		{"by referral", store.PayoutSearchParams{Referral: "spring"},
			[]store.PayoutFound{found(p2, bob), found(p1, alice)}},
		{"every filter at once", store.PayoutSearchParams{Coin: "BTC", RecipientID: alice.ID, Referral: "spring"},
			[]store.PayoutFound{found(p1, alice)}},
		{"a limit", store.PayoutSearchParams{Limit: 2},
			[]store.PayoutFound{found(p4, alice), found(p3, alice)}},
		{"the page after a payout", store.PayoutSearchParams{BeforeID: p3.ID},
			[]store.PayoutFound{found(p2, bob), found(p1, alice)}},
		{"the page after a payout, filtered", store.PayoutSearchParams{BeforeID: p4.ID, RecipientID: alice.ID, Limit: 1},
			[]store.PayoutFound{found(p3, alice)}},
		{"after the last payout", store.PayoutSearchParams{BeforeID: p1.ID}, []store.PayoutFound{}},
		{"after another faucet's payout", store.PayoutSearchParams{BeforeID: other.ID}, []store.PayoutFound{}},
		{"no match", store.PayoutSearchParams{Coin: "LTC"}, []store.PayoutFound{}},
	} {
		p := tc.p
		p.FaucetID = f.ID
		if p.Limit == 0 {
			p.Limit = 50
		}
		got, err := st.PayoutSearch(ctx, &p)
		if err != nil {
			t.Fatalf("%s: PayoutSearch: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: PayoutSearch (-want +got):\n%s", tc.name, diff)
		}
	}
}

// payReferral records a correct payout with its referral and returns it.
func payReferral(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, referral string, at time.Time) drip.Payout {
	t.Helper()
	p := drip.Payout{FaucetID: f.ID, RecipientID: r.ID, To: r.Username, Coin: coin, Amount: amount,
		IPAddress: "203.0.113.7", Referral: referral, CreatedAt: at}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		tr, err := move(ctx, tx, coin, f.AccountID, r.AccountID, amount, "payout", at)
		if err != nil {
			return err
		}
		p.ID, err = tx.PayoutInsert(ctx, &p, tr)
		return err
	})
	return p
}

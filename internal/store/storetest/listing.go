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

// The suite's part for listing costs and approval (D44).

func testListingCosts(t *testing.T, st store.Store) {
	ctx := context.Background()
	costs := func() map[string]int64 {
		t.Helper()
		got, err := st.ListingCostList(ctx)
		if err != nil {
			t.Fatalf("ListingCostList: %v", err)
		}
		return got
	}
	set := func(coin string, amount int64) error {
		return try(st, func(ctx context.Context, tx store.Tx) error { return tx.ListingCostSet(ctx, coin, amount, t0) })
	}
	if got := costs(); len(got) != 0 {
		t.Errorf("ListingCostList of a fresh store = %v, want empty", got)
	}
	for _, c := range []struct {
		coin   string
		amount int64
		want   map[string]int64
	}{
		{"BTC", 500, map[string]int64{"BTC": 500}},
		{"DOGE", 1000, map[string]int64{"BTC": 500, "DOGE": 1000}},
		{"BTC", 700, map[string]int64{"BTC": 700, "DOGE": 1000}},
		{"DOGE", 0, map[string]int64{"BTC": 700}}, // withdraws the offer
		{"LTC", 0, map[string]int64{"BTC": 700}},  // nothing to withdraw
	} {
		if err := set(c.coin, c.amount); err != nil {
			t.Fatalf("ListingCostSet(%s, %d): %v", c.coin, c.amount, err)
		}
		if diff := cmp.Diff(c.want, costs()); diff != "" {
			t.Errorf("ListingCostList after setting %s to %d (-want +got):\n%s", c.coin, c.amount, diff)
		}
	}
	for _, c := range []struct {
		coin   string
		amount int64
	}{{"NOPE", 5}, {"BTC", -1}} {
		if err := set(c.coin, c.amount); err == nil {
			t.Errorf("ListingCostSet(%s, %d) succeeded; want the schema to refuse it", c.coin, c.amount)
		}
	}
	if diff := cmp.Diff(map[string]int64{"BTC": 700}, costs()); diff != "" {
		t.Errorf("ListingCostList after refused sets (-want +got):\n%s", diff)
	}
}

func testListingRequests(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	h := newFaucet(t, st, owner, "key3")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)

	// request moves the fee and opens the request in one transaction, as
	// the listing service does (D44).
	request := func(f *drip.Faucet, at time.Time) (drip.ListingRequest, error) {
		r := drip.ListingRequest{FaucetID: f.ID, Coin: "BTC", Amount: 700, Status: drip.ListingPending, CreatedAt: at}
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			fee, err := move(ctx, tx, "BTC", f.AccountID, drip.AccountListing, r.Amount, "listing_fee", at)
			if err != nil {
				return err
			}
			r.ID, err = tx.ListingRequestCreate(ctx, &r, fee)
			return err
		})
		return r, err
	}
	decide := func(id int64, status drip.ListingStatus, at time.Time, refund int64) error {
		return try(st, func(ctx context.Context, tx store.Tx) error {
			return tx.ListingRequestDecide(ctx, id, status, at, refund)
		})
	}
	get := func(id int64) *drip.ListingRequest {
		t.Helper()
		got, err := st.ListingRequestGet(ctx, id)
		if err != nil {
			t.Fatalf("ListingRequestGet(%d): %v", id, err)
		}
		return got
	}
	listed := func(want ...*drip.Faucet) {
		t.Helper()
		got, err := st.FaucetListListed(ctx)
		if err != nil {
			t.Fatalf("FaucetListListed: %v", err)
		}
		var wantList []drip.Faucet
		for _, f := range want {
			wantList = append(wantList, *f)
		}
		if diff := cmp.Diff(wantList, got, faucetOpts); diff != "" {
			t.Errorf("FaucetListListed (-want +got):\n%s", diff)
		}
	}

	// The fee must be a real transfer.
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.ListingRequestCreate(ctx, &drip.ListingRequest{FaucetID: f.ID, Coin: "BTC", Amount: 700, CreatedAt: t0}, 999999)
		return err
	})
	if err == nil {
		t.Error("ListingRequestCreate with transfer 999999, which does not exist, succeeded; want a foreign key error")
	}

	r1, err := request(f, t0)
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet (-want +got):\n%s", diff)
	}
	if _, err := request(f, t0.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second request while one is pending: err = %v, want ErrConflict", err)
	}
	listed() // pending is not listed

	approvedAt := t0.Add(time.Hour)
	if err := decide(r1.ID, drip.ListingApproved, approvedAt, 0); err != nil {
		t.Fatalf("approving: %v", err)
	}
	r1.Status, r1.DecidedAt = drip.ListingApproved, &approvedAt
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet after approval (-want +got):\n%s", diff)
	}
	for _, status := range []drip.ListingStatus{drip.ListingApproved, drip.ListingRejected} {
		if err := decide(r1.ID, status, approvedAt.Add(time.Hour), 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deciding (%s) an approved request: err = %v, want ErrNotFound", status, err)
		}
	}
	if diff := cmp.Diff(&r1, get(r1.ID)); diff != "" {
		t.Errorf("ListingRequestGet after refused second decisions (-want +got):\n%s", diff)
	}
	if _, err := request(f, t0.Add(2*time.Hour)); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a request of an approved faucet: err = %v, want ErrConflict", err)
	}
	listed(f)

	// A rejected request (refunded) leaves the faucet free to ask again.
	r2, err := request(g, t0)
	if err != nil {
		t.Fatalf("g's request: %v", err)
	}
	rejectedAt := t0.Add(3 * time.Hour)
	refund := transfer(t, st, "BTC", drip.AccountListing, g.AccountID, r2.Amount, "listing_refund", rejectedAt)
	if err := decide(r2.ID, drip.ListingRejected, rejectedAt, refund); err != nil {
		t.Fatalf("rejecting: %v", err)
	}
	r2.Status, r2.DecidedAt = drip.ListingRejected, &rejectedAt
	if diff := cmp.Diff(&r2, get(r2.ID)); diff != "" {
		t.Errorf("ListingRequestGet after rejection (-want +got):\n%s", diff)
	}
	r3, err := request(g, t0.Add(4*time.Hour))
	if err != nil {
		t.Fatalf("a request after a rejection: %v, want nil", err)
	}
	listed(f)

	for _, c := range []struct {
		status drip.ListingStatus
		want   []drip.ListingRequest
	}{
		{drip.ListingPending, []drip.ListingRequest{r3}},
		{drip.ListingApproved, []drip.ListingRequest{r1}},
		{drip.ListingRejected, []drip.ListingRequest{r2}},
	} {
		got, err := st.ListingRequestListByStatus(ctx, c.status)
		if err != nil {
			t.Fatalf("ListingRequestListByStatus(%s): %v", c.status, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ListingRequestListByStatus(%s) (-want +got):\n%s", c.status, diff)
		}
	}
	for _, c := range []struct {
		faucet *drip.Faucet
		want   []drip.ListingRequest
	}{{f, []drip.ListingRequest{r1}}, {g, []drip.ListingRequest{r3, r2}}, {h, nil}} {
		got, err := st.ListingRequestListByFaucet(ctx, c.faucet.ID)
		if err != nil {
			t.Fatalf("ListingRequestListByFaucet(%d): %v", c.faucet.ID, err)
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("ListingRequestListByFaucet(%d), newest first (-want +got):\n%s", c.faucet.ID, diff)
		}
	}

	if err := decide(r3.ID, drip.ListingApproved, t0.Add(5*time.Hour), 0); err != nil {
		t.Fatalf("approving g's second request: %v", err)
	}
	listed(f, g)

	if err := decide(999999, drip.ListingApproved, t0, 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deciding an unknown request: err = %v, want ErrNotFound", err)
	}
	if got, err := st.ListingRequestGet(ctx, 999999); !errors.Is(err, store.ErrNotFound) || got != nil {
		t.Errorf("ListingRequestGet(unknown) = %+v, %v; want nil, ErrNotFound", got, err)
	}
	got := map[string]int64{
		"f": balance(t, st, f.AccountID, "BTC"), "g": balance(t, st, g.AccountID, "BTC"),
		"listing": balance(t, st, drip.AccountListing, "BTC"),
	}
	// Refused requests rolled their fee back; g's rejected fee came back.
	if diff := cmp.Diff(map[string]int64{"f": 9300, "g": 9300, "listing": 1400}, got); diff != "" {
		t.Errorf("balances after the requests (-want +got):\n%s", diff)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the listing requests: %s; want clean", report)
	}
}

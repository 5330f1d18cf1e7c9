package listing_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// cost is what a listing costs in BTC in these tests.
const cost = 100_000

// env is the application over a fresh store, with listing offered in BTC.
type env struct {
	*apptest.Env
	svc *listing.Service
}

// forEachEngine runs fn as a parallel subtest on every engine (D31).
func forEachEngine(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			a := apptest.New(t, engine.Open(t), apptest.Options{})
			e := &env{Env: a, svc: listing.NewService(a.App.Store, a.App.Coins, a.Clock.Now)}
			if err := e.svc.SetCost(context.Background(), "BTC", cost); err != nil {
				t.Fatalf("SetCost: %v", err)
			}
			fn(t, e)
		})
	}
}

// request makes a listing request that must succeed.
func (e *env) request(t *testing.T, f *drip.Faucet, coin string) *drip.ListingRequest {
	t.Helper()
	r, err := e.svc.Request(context.Background(), f, coin)
	if err != nil {
		t.Fatalf("Request(%s): %v", coin, err)
	}
	return r
}

// balances are the faucet's and system:listing's balances of coin.
func (e *env) balances(t *testing.T, f *drip.Faucet, coin string) [2]int64 {
	t.Helper()
	return [2]int64{e.Balance(t, f.AccountID, coin), e.Balance(t, drip.AccountListing, coin)}
}

// journal lists an account's transfers in coin as "kind amount", newest first.
func (e *env) journal(t *testing.T, account int64, coin string) []string {
	t.Helper()
	txs, _, err := e.App.Store.TransactionList(context.Background(), &store.PageParams{ID: account, Coin: coin, Limit: 50})
	if err != nil {
		t.Fatalf("TransactionList: %v", err)
	}
	out := []string{}
	for _, tx := range txs {
		out = append(out, tx.Kind+" "+drip.FormatCoins(tx.Amount))
	}
	return out
}

// wantCode fails the test unless err is a *drip.Error of code whose
// message mentions each of the given fragments.
func wantCode(t *testing.T, err error, code drip.Code, fragments ...string) {
	t.Helper()
	if got := drip.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
	for _, f := range fragments {
		if !strings.Contains(drip.ErrorMessage(err), f) {
			t.Errorf("message %q does not mention %q", drip.ErrorMessage(err), f)
		}
	}
}

func TestRequestMovesTheFeeToSystemListing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 150_000})
		r := e.request(t, f, "BTC")
		want := &drip.ListingRequest{ID: r.ID, FaucetID: f.ID, Coin: "BTC", Amount: cost, Status: drip.ListingPending, CreatedAt: e.Clock.Now()}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("request (-want +got):\n%s", diff)
		}
		if got, want := e.balances(t, f, "BTC"), [2]int64{50_000, cost}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v", got, want)
		}
		if diff := cmp.Diff([]string{"listing_fee -0.001", "deposit 0.0015"}, e.journal(t, f.AccountID, "BTC")); diff != "" {
			t.Errorf("faucet journal (-want +got):\n%s", diff)
		}
		status, err := e.svc.Status(context.Background(), f.ID)
		if err != nil || status == nil || status.ID != r.ID || status.Status != drip.ListingPending {
			t.Errorf("Status = %+v, %v; want the pending request", status, err)
		}
		pending, err := e.svc.Requests(context.Background(), drip.ListingPending)
		if err != nil || len(pending) != 1 || pending[0].ID != r.ID {
			t.Errorf("pending requests = %+v, %v", pending, err)
		}
		e.Reconcile(t)
	})
}

func TestRejectRefundsTheFeeAndAllowsANewRequest(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": 150_000})
		r := e.request(t, f, "BTC")
		e.Clock.Advance(time.Minute)
		rejected, err := e.svc.Reject(ctx, r.ID)
		if err != nil {
			t.Fatalf("Reject: %v", err)
		}
		if rejected.Status != drip.ListingRejected || rejected.DecidedAt == nil || !rejected.DecidedAt.Equal(e.Clock.Now()) {
			t.Errorf("rejected request = %+v, want status rejected decided now", rejected)
		}
		if got, want := e.balances(t, f, "BTC"), [2]int64{150_000, 0}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v (the fee refunded)", got, want)
		}
		want := []string{"listing_refund 0.001", "listing_fee -0.001", "deposit 0.0015"}
		if diff := cmp.Diff(want, e.journal(t, f.AccountID, "BTC")); diff != "" {
			t.Errorf("faucet journal (-want +got):\n%s", diff)
		}
		e.Reconcile(t)

		again := e.request(t, f, "BTC")
		if again.ID == r.ID || again.Status != drip.ListingPending {
			t.Errorf("request after a rejection = %+v, want a new pending request", again)
		}
		if listed, _ := e.svc.Listed(ctx); len(listed) != 0 {
			t.Errorf("a rejected or pending faucet is listed: %+v", listed)
		}
		e.Reconcile(t)
	})
}

func TestApprovedFaucetIsListedAndKeepsNoFeeBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": cost})
		other, _ := e.Faucet(t, map[string]int64{"BTC": cost})
		r := e.request(t, f, "BTC")
		e.request(t, other, "BTC") // pending: not listed
		if listed, _ := e.svc.Listed(ctx); len(listed) != 0 {
			t.Fatalf("listed before any approval: %+v", listed)
		}
		approved, err := e.svc.Approve(ctx, r.ID)
		if err != nil {
			t.Fatalf("Approve: %v", err)
		}
		if approved.Status != drip.ListingApproved || approved.DecidedAt == nil {
			t.Errorf("approved request = %+v", approved)
		}
		listed, err := e.svc.Listed(ctx)
		if err != nil || len(listed) != 1 || listed[0].ID != f.ID {
			t.Fatalf("Listed = %+v, %v; want faucet %d alone", listed, err, f.ID)
		}
		if got, want := e.balances(t, f, "BTC"), [2]int64{0, 2 * cost}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v", got, want)
		}
		e.Reconcile(t)
	})
}

func TestSecondRequestIsAConflict(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10 * cost})
		r := e.request(t, f, "BTC")
		_, err := e.svc.Request(ctx, f, "BTC")
		wantCode(t, err, drip.CodeConflict, "pending")
		if _, err := e.svc.Approve(ctx, r.ID); err != nil {
			t.Fatalf("Approve: %v", err)
		}
		_, err = e.svc.Request(ctx, f, "BTC")
		wantCode(t, err, drip.CodeConflict, "listed already")
		if got, want := e.balances(t, f, "BTC"), [2]int64{9 * cost, cost}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v (charged once)", got, want)
		}
		e.Reconcile(t)
	})
}

// TestConcurrentRequestsChargeOnce: of many simultaneous requests of one
// faucet, one opens and pays; the others are conflicts and pay nothing.
func TestConcurrentRequestsChargeOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10 * cost})
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = e.svc.Request(context.Background(), f, "BTC") })
		}
		wg.Wait()
		opened := 0
		for _, err := range errs {
			switch {
			case err == nil:
				opened++
			case drip.ErrorCode(err) == drip.CodeConflict:
			default:
				t.Errorf("request: %v, want success or conflict", err)
			}
		}
		if opened != 1 {
			t.Errorf("%d requests opened, want 1", opened)
		}
		if got, want := e.balances(t, f, "BTC"), [2]int64{9 * cost, cost}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v", got, want)
		}
		e.Reconcile(t)
	})
}

func TestInsufficientFundsChangesNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": cost - 1})
		_, err := e.svc.Request(ctx, f, "BTC")
		wantCode(t, err, drip.CodeInsufficientFunds, "0.001 BTC", "0.00099999")
		if got, want := e.balances(t, f, "BTC"), [2]int64{cost - 1, 0}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v", got, want)
		}
		if reqs, err := e.App.Store.ListingRequestListByFaucet(ctx, f.ID); err != nil || len(reqs) != 0 {
			t.Errorf("requests after a refused one: %+v, %v", reqs, err)
		}
		if status, err := e.svc.Status(ctx, f.ID); status != nil || err != nil {
			t.Errorf("Status = %+v, %v; want nil, nil", status, err)
		}
		if diff := cmp.Diff([]string{"deposit 0.00099999"}, e.journal(t, f.AccountID, "BTC")); diff != "" {
			t.Errorf("faucet journal (-want +got):\n%s", diff)
		}
		e.Reconcile(t)
	})
}

func TestCoinsListingIsNotOfferedIn(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": cost, "DOGE": cost})

		_, err := e.svc.Cost(ctx, "DOGE")
		wantCode(t, err, drip.CodeInvalid, "not offered in DOGE")
		_, err = e.svc.Request(ctx, f, "DOGE")
		wantCode(t, err, drip.CodeInvalid, "not offered in DOGE")

		if err := e.svc.SetCost(ctx, "BTC", 0); err != nil {
			t.Fatalf("withdraw: %v", err)
		}
		_, err = e.svc.Request(ctx, f, "BTC")
		wantCode(t, err, drip.CodeInvalid, "not offered in BTC")
		if costs, err := e.svc.Costs(ctx); err != nil || len(costs) != 0 {
			t.Errorf("costs after withdrawing = %v, %v; want none", costs, err)
		}
		if got, want := e.balances(t, f, "BTC"), [2]int64{cost, 0}; got != want {
			t.Errorf("balances faucet, system:listing = %v, want %v", got, want)
		}
	})
}

func TestInactiveOrUnknownCoin(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": cost})
		if err := e.App.Coins.SetActive(ctx, "BTC", false); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.Cost(ctx, "BTC")
		wantCode(t, err, drip.CodeInvalidCurrency)
		_, err = e.svc.Request(ctx, f, "BTC")
		wantCode(t, err, drip.CodeInvalidCurrency)
		_, err = e.svc.Cost(ctx, "btc") // symbols are upper-case (spec 1)
		wantCode(t, err, drip.CodeInvalidCurrency)

		// An inactive coin can still be priced, ahead of enabling it.
		if err := e.svc.SetCost(ctx, "BTC", 2*cost); err != nil {
			t.Errorf("SetCost of an inactive coin: %v", err)
		}
		wantCode(t, e.svc.SetCost(ctx, "NOPE", cost), drip.CodeInvalidCurrency, `"NOPE"`)
		wantCode(t, e.svc.SetCost(ctx, "BTC", -1), drip.CodeInvalidAmount)
		costs, err := e.svc.Costs(ctx)
		if diff := cmp.Diff(map[string]int64{"BTC": 2 * cost}, costs); diff != "" || err != nil {
			t.Errorf("costs (-want +got):\n%s %v", diff, err)
		}
		if err := e.App.Coins.SetActive(ctx, "BTC", true); err != nil {
			t.Fatal(err)
		}
		if got, err := e.svc.Cost(ctx, "BTC"); got != 2*cost || err != nil {
			t.Errorf("Cost after enabling = %d, %v; want %d", got, err, 2*cost)
		}
	})
}

func TestDecidingTwiceOrUnknownRequests(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": 2 * cost})
		g, _ := e.Faucet(t, map[string]int64{"BTC": 2 * cost})
		approved, rejected := e.request(t, f, "BTC"), e.request(t, g, "BTC")
		if _, err := e.svc.Approve(ctx, approved.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Reject(ctx, rejected.ID); err != nil {
			t.Fatal(err)
		}

		_, err := e.svc.Reject(ctx, approved.ID)
		wantCode(t, err, drip.CodeConflict, "approved already")
		_, err = e.svc.Approve(ctx, approved.ID)
		wantCode(t, err, drip.CodeConflict, "approved already")
		_, err = e.svc.Reject(ctx, rejected.ID)
		wantCode(t, err, drip.CodeConflict, "rejected already")
		_, err = e.svc.Approve(ctx, rejected.ID)
		wantCode(t, err, drip.CodeConflict, "rejected already")
		_, err = e.svc.Approve(ctx, 999)
		wantCode(t, err, drip.CodeNotFound, "No listing request 999")
		_, err = e.svc.Reject(ctx, 999)
		wantCode(t, err, drip.CodeNotFound, "No listing request 999")

		// A refused reject refunded nothing: the approved fee stays, the
		// rejected one was refunded once.
		if got, want := e.balances(t, f, "BTC"), [2]int64{cost, cost}; got != want {
			t.Errorf("balances of the approved faucet, system:listing = %v, want %v", got, want)
		}
		if got := e.Balance(t, g.AccountID, "BTC"); got != 2*cost {
			t.Errorf("rejected faucet's balance %d, want %d", got, 2*cost)
		}
		for status, want := range map[drip.ListingStatus]int64{drip.ListingApproved: approved.ID, drip.ListingRejected: rejected.ID} {
			list, err := e.svc.Requests(ctx, status)
			if err != nil || len(list) != 1 || list[0].ID != want {
				t.Errorf("Requests(%s) = %+v, %v; want request %d", status, list, err, want)
			}
		}
		_, err = e.svc.Requests(ctx, "bogus")
		wantCode(t, err, drip.CodeInvalid, `"bogus"`)
		e.Reconcile(t)
	})
}

func TestSuspendedOwnersFaucetLeavesTheList(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		f, _ := e.Faucet(t, map[string]int64{"BTC": cost})
		if _, err := e.svc.Approve(ctx, e.request(t, f, "BTC").ID); err != nil {
			t.Fatal(err)
		}
		owner, err := e.App.Users.ByUsername(ctx, "owner1")
		if err != nil || owner.ID != f.OwnerID {
			t.Fatalf("owner: %+v, %v", owner, err)
		}
		listedIDs := func() []int64 {
			listed, err := e.svc.Listed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids := []int64{}
			for _, l := range listed {
				ids = append(ids, l.ID)
			}
			return ids
		}
		if err := e.App.Users.SetStatus(ctx, owner, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{}, listedIDs()); diff != "" {
			t.Errorf("listed while the owner is suspended (-want +got):\n%s", diff)
		}
		if err := e.App.Users.SetStatus(ctx, owner, drip.UserActive); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{f.ID}, listedIDs()); diff != "" {
			t.Errorf("listed after unsuspending (-want +got):\n%s", diff)
		}
	})
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"pending", "approved", "rejected"} {
		if got, err := listing.ParseStatus(s); err != nil || string(got) != s {
			t.Errorf("ParseStatus(%q) = %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "Pending", "open"} {
		if _, err := listing.ParseStatus(s); drip.ErrorCode(err) != drip.CodeInvalid {
			t.Errorf("ParseStatus(%q): %v, want CodeInvalid", s, err)
		}
	}
}

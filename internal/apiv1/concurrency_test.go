package apiv1_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// The concurrency tests race many v1 sends over HTTP against one faucet
// and hold the outcome to D2-D5 and D41: the faucet pays exactly what it
// holds and what its owner's limits allow, never more, each payout once.

// TestConcurrentSendsPayExactlyWhatTheFaucetHolds: 64 senders race for a
// faucet that holds 40 payouts. Exactly 40 are paid and 24 refused with 402
// (D5: a payout that would overdraw is refused, the rest commit); each paid
// payout saw its own balance, the faucet ends at 0, the recipients got what
// the faucet lost, and the ledger reconciles (D3).
func TestConcurrentSendsPayExactlyWhatTheFaucetHolds(t *testing.T) {
	const senders, affordable, amount, recipients = 64, 40, 1000, 8
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := apptest.New(t, eng.Open(t), apptest.Options{Rate: unlimited})
		f, key := env.Faucet(t, map[string]int64{"BTC": affordable * amount})
		users := make([]*drip.User, recipients)
		for i := range users {
			users[i] = env.User(t, fmt.Sprintf("claimer%d", i))
		}
		forms := make([]url.Values, senders)
		for i := range forms {
			forms[i] = url.Values{
				"api_key": {key}, "to": {users[i%recipients].Username}, "amount": {fmt.Sprint(amount)},
				"currency": {"BTC"}, "ip_address": {fmt.Sprintf("203.0.113.%d", i)},
			}
		}

		replies := sendAtOnce(t, env, forms)

		counts := countStatuses(t, replies)
		if diff := cmp.Diff(map[int]int{200: affordable, 402: senders - affordable}, counts); diff != "" {
			t.Errorf("v1 statuses -> count (-want +got):\n%s", diff)
		}
		checkPaidPayouts(t, env, f, replies)

		// Payouts are applied one after another, so the balances the paid
		// replies report are exactly 39*amount, 38*amount, ..., 0.
		var balances, wantBalances []int64
		paidTo := make([]int64, recipients)
		for i, r := range replies {
			if r.Status == 200 {
				balances = append(balances, r.Balance)
				paidTo[i%recipients] += amount
			}
		}
		for b := int64(0); b < affordable; b++ {
			wantBalances = append(wantBalances, b*amount)
		}
		slices.Sort(balances)
		if diff := cmp.Diff(wantBalances, balances); diff != "" {
			t.Errorf("balances reported by paid sends (-want +got):\n%s", diff)
		}

		if got := env.Balance(t, f.AccountID, "BTC"); got != 0 {
			t.Errorf("faucet balance %d, want 0", got)
		}
		var credited int64
		for i, u := range users {
			got := env.Balance(t, u.AccountID, "BTC")
			if got != paidTo[i] {
				t.Errorf("%s has %d, want %d (the paid sends to them)", u.Username, got, paidTo[i])
			}
			credited += got
		}
		if credited != affordable*amount {
			t.Errorf("recipients were credited %d, the faucet was debited %d", credited, affordable*amount)
		}
		env.Reconcile(t)
	})
}

// TestConcurrentSendsHonourOwnerLimits: concurrent sends against an owner
// send limit (D41) pay exactly what the limit allows and refuse the rest
// with 450 (D26), because the limit is counted inside the payout's
// transaction under the faucet's lock.
func TestConcurrentSendsHonourOwnerLimits(t *testing.T) {
	const senders, amount = 40, 1000
	tests := []struct {
		name     string
		limit    drip.Limit
		spread   bool // send to a different recipient each time
		wantPaid int
	}{
		{"per recipient max_count 5, one recipient", drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 5}, false, 5},
		{"per faucet max_count 7, many recipients", drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 7}, true, 7},
		{"per faucet max_amount 12 payouts, many recipients", drip.Limit{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: 60, MaxAmount: 12 * amount}, true, 12},
	}
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				env := apptest.New(t, eng.Open(t), apptest.Options{Rate: unlimited})
				f, key := env.Faucet(t, map[string]int64{"BTC": senders * amount})
				if _, _, err := env.App.Faucets.SetLimits(ctx, f.ID, []drip.Limit{tt.limit}); err != nil {
					t.Fatalf("set limits: %v", err)
				}
				users := []*drip.User{env.User(t, "alice")}
				if tt.spread {
					for i := 1; i < senders; i++ {
						users = append(users, env.User(t, fmt.Sprintf("claimer%d", i)))
					}
				}
				forms := make([]url.Values, senders)
				for i := range forms {
					forms[i] = url.Values{
						"api_key": {key}, "to": {users[i%len(users)].Username},
						"amount": {fmt.Sprint(amount)}, "currency": {"BTC"},
					}
				}

				replies := sendAtOnce(t, env, forms)

				counts := countStatuses(t, replies)
				if diff := cmp.Diff(map[int]int{200: tt.wantPaid, 450: senders - tt.wantPaid}, counts); diff != "" {
					t.Errorf("v1 statuses -> count (-want +got):\n%s", diff)
				}
				checkPaidPayouts(t, env, f, replies)
				paid := int64(tt.wantPaid) * amount
				if got := env.Balance(t, f.AccountID, "BTC"); got != senders*amount-paid {
					t.Errorf("faucet balance %d, want %d", got, senders*amount-paid)
				}
				var credited int64
				for _, u := range users {
					credited += env.Balance(t, u.AccountID, "BTC")
				}
				if credited != paid {
					t.Errorf("recipients were credited %d, want %d", credited, paid)
				}
				env.Reconcile(t)
			})
		}
	})
}

package apiv1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"

	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestChangesReachWarmCaches checks D63: the key, faucet and recipient of
// a send are read from memory once a send has read them, yet every change
// to them is seen by the very next send. Each case pays once (warming the
// caches with exactly the values the change makes stale), changes one
// thing through the application's own services, and sends again.
func TestChangesReachWarmCaches(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		ctx := context.Background()
		tests := []struct {
			name   string
			change func(t *testing.T, s *scene, to *drip.User)
			want   int // the v1 status of the next send
		}{
			{"recipient suspended", func(t *testing.T, s *scene, to *drip.User) {
				if err := env.App.Users.SetStatus(ctx, to, drip.UserSuspended); err != nil {
					t.Fatal(err)
				}
			}, 456},
			{"owner suspended", func(t *testing.T, s *scene, to *drip.User) { suspendOwner(t, s) }, 401},
			{"caller's IP taken off the whitelist", func(t *testing.T, s *scene, to *drip.User) { setWhitelist(t, s, "203.0.113.9") }, 401},
			{"recipient blacklisted", func(t *testing.T, s *scene, to *drip.User) { setRules(t, s, blacklist(to.Username)) }, 457},
			{"send limit set", func(t *testing.T, s *scene, to *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerRecipient, WindowSeconds: 86400, MaxCount: 2})
			}, 450},
			{"key rotated and confirmed", func(t *testing.T, s *scene, to *drip.User) {
				if _, err := env.App.Faucets.RotateKey(ctx, s.f.ID); err != nil {
					t.Fatal(err)
				}
				if err := env.App.Faucets.ConfirmRotation(ctx, s.f.ID); err != nil {
					t.Fatal(err)
				}
			}, 403},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := newScene(t, env, map[string]int64{"BTC": 1_000_000})
				to := newUser(t, env, "warm")
				s.send(t, 200, "to", to.Username, "amount", "1000", "currency", "BTC")
				s.send(t, 200, "to", to.Username, "amount", "1000", "currency", "BTC") // now from memory
				tc.change(t, s, to)
				s.send(t, tc.want, "to", to.Username, "amount", "1000", "currency", "BTC")
			})
		}
	})
}

// TestSendDecidedInTheLedgerIsConfirmed: a send taking the latest cache
// generation known (gencache.Optimistic) and refused in its payment's
// transaction has its generation confirmed there, so a change committed
// after the refusal cannot make the request be served again and record a
// second refusal (D63).
func TestSendDecidedInTheLedgerIsConfirmed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		s := newScene(t, env, map[string]int64{"BTC": 5000})
		to := newUser(t, env, "decided")
		s.send(t, 200, "to", to.Username, "amount", "1000", "currency", "BTC") // warm, and a generation known

		ctx := gencache.Optimistic(context.Background())
		caller, err := env.App.Payouts.AuthorizeV1(ctx, s.key, netip.MustParseAddr("127.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		if gencache.Unconfirmed(ctx) == (store.CacheGen{}) {
			t.Fatal("the send's pin took no unconfirmed generation: the optimistic path is not under test")
		}
		_, err = env.App.Payouts.Send(ctx, caller, payout.SendRequest{To: to.Username, Currency: "BTC", Amount: "9000"})
		if drip.ErrorCode(err) != drip.CodeInsufficientFunds {
			t.Fatalf("send past the balance: %v, want insufficient_balance", err)
		}
		newUser(t, env, "change") // the generation moves after the refusal
		if err := gencache.Confirm(ctx); err != nil {
			t.Errorf("Confirm after a refusal decided in the ledger: %v, want nil (confirmed there)", err)
		}
	})
}

// TestPayoutsSeeEveryPaidPayout checks D66: /payouts is served from
// memory while its faucet's debits are unchanged, yet every reply holds
// each payout acknowledged before its request, whatever count and coin it
// asks for, and also while sends and reads of the faucet run at once.
func TestPayoutsSeeEveryPaidPayout(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		s := newScene(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
		list := func(pairs ...string) []string {
			t.Helper()
			var tos []string
			for _, r := range decodeRewards(t, s.post(t, "/payouts", pairs...)) {
				tos = append(tos, r.To)
			}
			return tos
		}
		check := func(got []string, want ...string) {
			t.Helper()
			if !slices.Equal(got, want) {
				t.Errorf("/payouts = %q, want %q", got, want)
			}
		}
		a, b, c := newUser(t, env, "lista"), newUser(t, env, "listb"), newUser(t, env, "listc")
		check(list("count", "5"))
		s.send(t, 200, "to", a.Username, "amount", "1000", "currency", "BTC")
		check(list("count", "5"), a.Username)
		check(list("count", "5"), a.Username) // from memory
		s.send(t, 200, "to", b.Username, "amount", "1000", "currency", "DOGE")
		check(list("count", "5"), b.Username, a.Username)
		check(list("count", "1"), b.Username)
		check(list("count", "5", "currency", "BTC"), a.Username)
		check(list("count", "5", "currency", "DOGE"), b.Username)
		s.send(t, 200, "to", c.Username, "amount", "1000", "currency", "BTC")
		check(list("count", "5", "currency", "BTC"), c.Username, a.Username)
		check(list("count", "5", "currency", "DOGE"), b.Username)
		check(list("count", "1"), c.Username)
		check(list("count", "2"), c.Username, b.Username)
		check(list("count", "100"), c.Username, b.Username, a.Username)

		// Sends and reads at once: each read must hold every payout
		// acknowledged before it started (fewer than 100 in all, so a
		// reply of count=100 holds them all).
		const senders, each, readers = 8, 8, 4
		var users [senders][each]*drip.User
		for i := range senders {
			for j := range each {
				users[i][j] = newUser(t, env, "listed")
			}
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: senders + readers}}
		var mu sync.Mutex
		acked := []string{a.Username, b.Username, c.Username}
		errs := make(chan error, senders+readers)
		var sending, reading sync.WaitGroup
		for i := range senders {
			sending.Go(func() {
				for _, u := range users[i] {
					r := postForm(client, env.Server.URL+apiv1.Prefix+"/send", keyForm(s.key, "to", u.Username, "amount", "1000", "currency", "BTC"))
					if r.Err != nil || r.Status != 200 {
						errs <- fmt.Errorf("send to %s: %d %v %s", u.Username, r.Status, r.Err, r.Raw)
						return
					}
					mu.Lock()
					acked = append(acked, u.Username)
					mu.Unlock()
				}
			})
		}
		done := make(chan struct{})
		reads := make([]int, readers)
		for i := range readers {
			reading.Go(func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					mu.Lock()
					before := slices.Clone(acked)
					mu.Unlock()
					r := postForm(client, env.Server.URL+apiv1.Prefix+"/payouts", keyForm(s.key, "count", "100"))
					var reply struct{ Rewards []struct{ To string } }
					if err := json.Unmarshal([]byte(r.Raw), &reply); r.Err != nil || r.Status != 200 || err != nil {
						errs <- fmt.Errorf("/payouts: %d %v %v %s", r.Status, r.Err, err, r.Raw)
						return
					}
					got := map[string]bool{}
					for _, w := range reply.Rewards {
						got[w.To] = true
					}
					for _, to := range before {
						if !got[to] {
							errs <- fmt.Errorf("/payouts after %d acknowledged payouts lacks the one to %s (%d rows)", len(before), to, len(reply.Rewards))
							return
						}
					}
					reads[i]++
				}
			})
		}
		sending.Wait()
		close(done)
		reading.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		t.Logf("reads while sending: %v", reads)
		if got := list("count", "100"); len(got) != 3+senders*each {
			t.Errorf("/payouts count=100 after the sends: %d rows, want %d", len(got), 3+senders*each)
		}
	})
}

package apiv1_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/payout"
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
		if gencache.Unconfirmed(ctx) == 0 {
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

package payout_test

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestCheckOrder: a send that fails several checks at once is refused by
// the first of them in the order of D21, whatever interface calls the
// service: caller IP's rate (D29) -> key -> IP whitelist -> owner
// suspension -> request rate ->
// currency -> amount -> recipient -> owner's rules -> send limit ->
// balance. Case k makes checks k and every later one fail together, so
// each case proves check k runs before all those after it.
func TestCheckOrder(t *testing.T) {
	t.Parallel()
	checks := []struct {
		name string
		code drip.Code
		v1   int    // the v1 status of the refusal (spec 7.1)
		text string // a word of the refusal's message, telling apart refusals of one code
	}{
		{"caller IP's rate", drip.CodeRateLimited, 459, "IP address"},
		{"key", drip.CodeUnauthenticated, 403, ""},
		{"IP whitelist", drip.CodeForbidden, 401, "whitelisted"},
		{"owner suspended", drip.CodeForbidden, 401, "suspended"},
		{"request rate", drip.CodeRateLimited, 459, ""},
		{"currency", drip.CodeInvalidCurrency, 410, ""},
		{"amount", drip.CodeInvalidAmount, 405, ""},
		{"recipient", drip.CodeRecipientUnknown, 456, ""},
		{"owner's rules", drip.CodeRecipientRefused, 457, ""},
		{"send limit", drip.CodeSendLimit, 450, ""},
		{"balance", drip.CodeInsufficientFunds, 402, ""},
	}
	const amount = 10_000
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{
				Rate: ratelimit.Config{PerMinute: 1, Burst: 3}, CallerRate: ratelimit.Config{PerMinute: 1, Burst: 6}})
			alice := env.User(t, "alice")
			svc := env.App.Payouts
			for k, want := range checks {
				t.Run(want.name, func(t *testing.T) {
					ctx := context.Background()
					caller := netip.AddrFrom4([4]byte{198, 51, 100, byte(k + 1)}) // a bucket of its own
					fails := func(check string) bool {                            // check k and those after it fail
						for i := range checks {
							if checks[i].name == check {
								return i >= k
							}
						}
						panic(check)
					}
					// One paid send leaves half an amount: the balance
					// check fails in every case.
					f, apiKey := env.Faucet(t, map[string]int64{"BTC": amount * 3 / 2})
					c, err := svc.AuthorizeV1(ctx, apiKey, caller)
					if err != nil {
						t.Fatalf("authorize: %v", err)
					}
					if _, err := svc.Send(ctx, c, payout.SendRequest{To: alice.Username, Currency: "BTC", Amount: strconv.Itoa(amount)}); err != nil {
						t.Fatalf("first send: %v", err)
					}
					if fails("send limit") { // one payout a day, and there was one
						limit := []drip.Limit{{Per: drip.PerFaucet, WindowSeconds: 86400, MaxCount: 1}}
						if _, _, err := env.App.Faucets.SetLimits(ctx, f.ID, limit); err != nil {
							t.Fatal(err)
						}
					}
					if fails("owner's rules") {
						if _, _, err := env.App.Faucets.SetRules(ctx, f.ID, faucet.RulesChange{Blacklist: &[]string{alice.Username}}); err != nil {
							t.Fatal(err)
						}
					}
					req := payout.SendRequest{To: alice.Username, Currency: "BTC", Amount: strconv.Itoa(amount)}
					if fails("recipient") {
						req.To = "nobody"
					}
					if fails("amount") {
						req.Amount = "1.5"
					}
					if fails("currency") {
						req.Currency = "XYZ"
					}
					if fails("request rate") { // the first send took one token of three
						for range 2 {
							if _, err := svc.AuthorizeV1(ctx, apiKey, caller); err != nil {
								t.Fatalf("authorize: %v", err)
							}
						}
					}
					if fails("caller IP's rate") { // the IP's bucket of 6 emptied
						for i := 0; ; i++ {
							_, err := svc.AuthorizeV1(ctx, apiKey, caller)
							if strings.Contains(drip.ErrorMessage(err), "IP address") {
								break
							}
							if i == 10 {
								t.Fatalf("the caller's IP is never limited: %v", err)
							}
						}
					}
					if fails("owner suspended") {
						owner, err := env.App.Store.UserGetByID(ctx, f.OwnerID)
						if err != nil {
							t.Fatal(err)
						}
						if err := env.App.Users.SetStatus(ctx, owner, drip.UserSuspended); err != nil {
							t.Fatal(err)
						}
					}
					if fails("IP whitelist") {
						if _, _, err := env.App.Faucets.SetIPWhitelist(ctx, f.ID, []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}); err != nil {
							t.Fatal(err)
						}
					}
					if fails("key") {
						apiKey = strings.Repeat("0", len(apiKey))
					}

					c, err = svc.AuthorizeV1(ctx, apiKey, caller)
					if err == nil {
						_, err = svc.Send(ctx, c, req)
					}
					if got := drip.ErrorCode(err); got != want.code || !strings.Contains(drip.ErrorMessage(err), want.text) {
						t.Fatalf("refused with %s (%q), want %s (%q) first: %v", got, drip.ErrorMessage(err), want.code, want.text, err)
					}
					if got, _ := drip.V1Status(err); got != want.v1 {
						t.Errorf("v1 status %d, want %d", got, want.v1)
					}
				})
			}
			env.Reconcile(t)
		})
	}
}

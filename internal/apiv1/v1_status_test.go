package apiv1_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestConformanceStatus provokes every status of spec 7.1 from /send with
// a real request, each refusal leaving all balances as they were.
func TestConformanceStatus(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		ctx := context.Background()
		// recipient is a verified user with nothing against them.
		recipient := func(t *testing.T, s *scene) *drip.User { return newUser(t, s.env, "rcp") }
		cases := []statusCase{
			// 200
			{"200 paid to a verified user", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 the largest valid amount the balance covers", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000000", "BTC"), u
			}, 200},

			// 401 (spec 5 v1.3)
			{"401 caller IP outside the faucet's whitelist", func(t *testing.T, s *scene) (request, *drip.User) {
				setWhitelist(t, s, "203.0.113.0/24, 2001:db8::1")
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 401},
			{"200 caller IP inside the faucet's whitelist", func(t *testing.T, s *scene) (request, *drip.User) {
				setWhitelist(t, s, "203.0.113.0/24, 127.0.0.1")
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 caller IP inside a whitelisted CIDR", func(t *testing.T, s *scene) (request, *drip.User) {
				setWhitelist(t, s, "127.0.0.0/8")
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"401 owner suspended", func(t *testing.T, s *scene) (request, *drip.User) {
				suspendOwner(t, s)
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 401},

			// 402
			{"402 amount one above the balance", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000001", "BTC"), u
			}, 402},
			{"402 largest int64 amount", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "9223372036854775807", "BTC"), u
			}, 402},
			{"402 coin the faucet never funded", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1", "LTC"), u
			}, 402},

			// 403 (spec 5 v1.2)
			{"403 missing api_key", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return without(sendTo(u.Username, "1000", "BTC"), "api_key"), u
			}, 403},
			{"403 empty api_key", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC", "api_key", ""), u
			}, 403},
			{"403 wrong api_key", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC", "api_key", faucet.NewKey()), u
			}, 403},
			{"403 api_key in another case", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC", "api_key", strings.ToUpper(s.key)), u
			}, 403},

			// 404 (spec 4.1 rule 1)
			{"404 unknown path", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Path = "/withdraw"
				return req, u
			}, 404},
			{"404 the v1 prefix alone", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Path = "/" // "/api/v1/"
				return req, u
			}, 404},
			{"404 GET /send", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodGet
				return req, u
			}, 404},
			{"404 PUT /send", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodPut
				return req, u
			}, 404},
			{"404 DELETE /send", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodDelete
				return req, u
			}, 404},
			{"404 PATCH /send", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				req := sendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodPatch
				return req, u
			}, 404},
			{"404 GET /getbalance with a valid key", func(t *testing.T, s *scene) (request, *drip.User) {
				return request{Method: http.MethodGet, Path: "/getbalance?api_key=" + s.key + "&currency=BTC", Form: url.Values{"currency": {"BTC"}}}, nil
			}, 404},

			// 410
			{"410 unknown currency", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "XYZ"), u
			}, 410},
			{"200 lower-case symbol (D28)", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "btc"), u
			}, 200},
			{"410 unknown symbol in lower case", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "xyz"), u
			}, 410},
			{"410 empty currency", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", ""), u
			}, 410},
			{"410 missing currency", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return without(sendTo(u.Username, "1000", "BTC"), "currency"), u
			}, 410},
			{"410 currency name instead of symbol", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "Bitcoin"), u
			}, 410},

			// 450 (D26, D41)
			{"450 faucet count limit reached", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "BTC"), u
			}, 450},
			{"450 faucet amount limit reached", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 150})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "100", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "51", "BTC"), u
			}, 450},
			{"200 faucet amount limit met exactly", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 150})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "100", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "50", "BTC"), u
			}, 200},
			{"450 recipient count limit reached", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 1})
				u := recipient(t, s)
				s.send(t, 200, "to", u.Username, "amount", "10", "currency", "BTC")
				return sendTo(u.Email, "10", "BTC"), u
			}, 450},
			{"200 recipient limit does not count other recipients", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "BTC"), u
			}, 200},
			{"450 coin limit reached", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "BTC"), u
			}, 450},
			{"200 coin limit does not count other coins", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "DOGE"), u
			}, 200},

			// 456 (D11)
			{"456 unknown email", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo("nobody@example.com", "1000", "BTC"), nil
			}, 456},
			{"456 unknown username", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo("nobody_at_all", "1000", "BTC"), nil
			}, 456},
			{"456 unknown payout_user_hash", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo(strings.Repeat("ab", 20), "1000", "BTC"), nil
			}, 456},
			{"456 address nobody linked", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo("bc1qnobodylinkedthisaddress0000", "1000", "BTC"), nil
			}, 456},
			{"456 empty destination", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo("", "1000", "BTC"), nil
			}, 456},
			{"456 missing destination", func(t *testing.T, s *scene) (request, *drip.User) {
				return without(sendTo("x", "1000", "BTC"), "to"), nil
			}, 456},
			{"456 suspended recipient", func(t *testing.T, s *scene) (request, *drip.User) {
				u := suspendedUser(t, s.env, "susp")
				return sendTo(u.Username, "1000", "BTC"), u
			}, 456},
			{"456 suspended recipient by email", func(t *testing.T, s *scene) (request, *drip.User) {
				u := suspendedUser(t, s.env, "susp")
				return sendTo(u.Email, "1000", "BTC"), u
			}, 456},
			{"456 unverified recipient", func(t *testing.T, s *scene) (request, *drip.User) {
				u := unverifiedUser(t, s.env, "unver")
				return sendTo(u.Username, "1000", "BTC"), u
			}, 456},
			{"456 unverified recipient by payout_user_hash", func(t *testing.T, s *scene) (request, *drip.User) {
				u := unverifiedUser(t, s.env, "unver")
				return sendTo(u.PayoutUserHash, "1000", "BTC"), u
			}, 456},

			// 457 (D42)
			{"457 blacklisted username", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist(u.Username))
				return sendTo(u.Email, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted email", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist(u.Email))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted email in another case", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist(strings.ToUpper(u.Email)))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted payout_user_hash", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist(u.PayoutUserHash))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted linked address", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				addr := "bc1qblack" + u.Username
				linkAddress(t, s.env, u, "BTC", addr)
				setRules(t, s, blacklist(addr))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted address linked for another coin", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				addr := "Dblack" + u.Username
				linkAddress(t, s.env, u, "DOGE", addr)
				setRules(t, s, blacklist(addr))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted claimer ip_address", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist("203.0.113.7"))
				return sendTo(u.Username, "1000", "BTC", "ip_address", "203.0.113.7"), u
			}, 457},
			{"457 claimer ip_address in a blacklisted CIDR", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist("198.51.100.0/24"))
				return sendTo(u.Username, "1000", "BTC", "ip_address", "198.51.100.200"), u
			}, 457},
			{"457 claimer IPv6 ip_address in a blacklisted CIDR", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist("2001:db8::/32"))
				return sendTo(u.Username, "1000", "BTC", "ip_address", "2001:db8::42"), u
			}, 457},
			{"200 claimer ip_address outside the blacklisted CIDR", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, blacklist("198.51.100.0/24", "203.0.113.7"))
				return sendTo(u.Username, "1000", "BTC", "ip_address", "198.51.101.1"), u
			}, 200},
			{"200 blacklist naming someone else", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				other := recipient(t, s)
				setRules(t, s, blacklist(other.Username, other.Email, other.PayoutUserHash))
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"457 trust rank above a new user's", func(t *testing.T, s *scene) (request, *drip.User) {
				// A new verified user without addresses ranks 40 (antifraud.TrustRank).
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(41)})
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 trust rank a new user meets", func(t *testing.T, s *scene) (request, *drip.User) {
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(40)})
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 trust rank met with a linked address", func(t *testing.T, s *scene) (request, *drip.User) {
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(60)})
				u := recipient(t, s)
				linkAddress(t, s.env, u, "LTC", "Ltrust"+u.Username)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 whitelist bypasses the trust rank", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(100), Whitelist: &[]string{u.Username}})
				return sendTo(u.Email, "1000", "BTC"), u
			}, 200},
			{"200 whitelisted claimer IP bypasses the trust rank", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(100), Whitelist: &[]string{"192.0.2.0/24"}})
				return sendTo(u.Email, "1000", "BTC", "ip_address", "192.0.2.5"), u
			}, 200},
			{"457 whitelist does not bypass the blacklist", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, faucet.RulesChange{Whitelist: &[]string{u.Username}, Blacklist: &[]string{u.Email}})
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 anti-fraud off disables the trust rank", func(t *testing.T, s *scene) (request, *drip.User) {
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(false), TrustRank: ptr(100), NegativeRank: ptr(0)})
				u := recipient(t, s)
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"457 anti-fraud off keeps the blacklist", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(false), Blacklist: &[]string{u.Username}})
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 negative rank above the faucet's tolerance", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				refusedElsewhere(t, s.env, u)
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), NegativeRank: ptr(24)})
				return sendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 negative rank within the faucet's tolerance", func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				refusedElsewhere(t, s.env, u) // one other faucet: negative rank 25
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), NegativeRank: ptr(25)})
				return sendTo(u.Username, "1000", "BTC"), u
			}, 200},

			// 459 from the owner's per-IP limit (D26); the request rate is
			// TestConformanceRequestRate.
			{"459 claimer ip_address over the owner's per-IP limit", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC", "ip_address", "203.0.113.50")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "BTC", "ip_address", "203.0.113.50"), u
			}, 459},
			{"200 another claimer ip_address under the per-IP limit", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC", "ip_address", "203.0.113.50")
				u := recipient(t, s)
				return sendTo(u.Username, "10", "BTC", "ip_address", "203.0.113.51"), u
			}, 200},
		}
		for _, amount := range []string{"1.5", "-1", "0", "1e3", "99999999999999999999", "9223372036854775808", "", "+5", "0x10", "ten"} {
			cases = append(cases, statusCase{"405 amount " + `"` + amount + `"`, func(t *testing.T, s *scene) (request, *drip.User) {
				u := recipient(t, s)
				return sendTo(u.Username, amount, "BTC"), u
			}, 405})
		}
		cases = append(cases, statusCase{"405 missing amount", func(t *testing.T, s *scene) (request, *drip.User) {
			u := recipient(t, s)
			return without(sendTo(u.Username, "1", "BTC"), "amount"), u
		}, 405})
		// Every builtin coin's minimum payout is 1 unit and no interface
		// sets another, so "below the minimum" is the amount 0 above.

		// The disabled coin is one no other case uses: coins are per store.
		if err := env.App.Coins.SetActive(ctx, "XRP", false); err != nil {
			t.Fatalf("disable XRP: %v", err)
		}
		cases = append(cases, statusCase{"410 disabled coin", func(t *testing.T, s *scene) (request, *drip.User) {
			u := recipient(t, s)
			return sendTo(u.Username, "1", "XRP"), u
		}, 410})
		runStatusCases(t, env, cases)
	})
}

// TestConformanceOtherEndpointsStatus checks the statuses the read
// endpoints share with /send: every one needs the key (403), honours the
// whitelist and the owner's suspension (401), and validates its currency
// (410) and address (456).
func TestConformanceOtherEndpointsStatus(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		read := func(path string, pairs ...string) func(t *testing.T, s *scene) (request, *drip.User) {
			return func(t *testing.T, s *scene) (request, *drip.User) {
				return request{Path: path, Form: keyForm(s.key, pairs...)}, nil
			}
		}
		var cases []statusCase
		all := []struct {
			path  string
			pairs []string
		}{
			{"/checkaddress", []string{"address", "nobody", "currency", "BTC"}},
			{"/getbalance", []string{"currency", "BTC"}},
			{"/balance", []string{"currency", "BTC"}},
			{"/payouts", nil},
			{"/currencies", nil},
		}
		for _, e := range all {
			cases = append(cases,
				statusCase{"403 missing api_key " + e.path, func(t *testing.T, s *scene) (request, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					return without(req, "api_key"), nil
				}, 403},
				statusCase{"403 wrong api_key " + e.path, func(t *testing.T, s *scene) (request, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					req.Form.Set("api_key", faucet.NewKey())
					return req, nil
				}, 403},
				statusCase{"401 caller IP not whitelisted " + e.path, func(t *testing.T, s *scene) (request, *drip.User) {
					setWhitelist(t, s, "203.0.113.0/24")
					return read(e.path, e.pairs...)(t, s)
				}, 401},
				statusCase{"401 owner suspended " + e.path, func(t *testing.T, s *scene) (request, *drip.User) {
					suspendOwner(t, s)
					return read(e.path, e.pairs...)(t, s)
				}, 401},
				statusCase{"404 GET " + e.path, func(t *testing.T, s *scene) (request, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					req.Method = http.MethodGet
					return req, nil
				}, 404},
			)
		}
		cases = append(cases,
			statusCase{"456 /checkaddress unknown address", read("/checkaddress", "address", "nobody_here", "currency", "BTC"), 456},
			statusCase{"456 /checkaddress suspended user", func(t *testing.T, s *scene) (request, *drip.User) {
				return read("/checkaddress", "address", suspendedUser(t, s.env, "csus").Username, "currency", "BTC")(t, s)
			}, 456},
			statusCase{"456 /checkaddress unverified user", func(t *testing.T, s *scene) (request, *drip.User) {
				return read("/checkaddress", "address", unverifiedUser(t, s.env, "cunv").Email, "currency", "BTC")(t, s)
			}, 456},
			statusCase{"410 /checkaddress bad currency", func(t *testing.T, s *scene) (request, *drip.User) {
				return read("/checkaddress", "address", newUser(t, s.env, "cbc").Username, "currency", "btx")(t, s)
			}, 410},
			statusCase{"200 /checkaddress lower-case currency (D28)", func(t *testing.T, s *scene) (request, *drip.User) {
				return read("/checkaddress", "address", newUser(t, s.env, "clc").Username, "currency", "btc")(t, s)
			}, 200},
			statusCase{"200 /checkaddress missing currency: the default coin (D28)", func(t *testing.T, s *scene) (request, *drip.User) {
				return read("/checkaddress", "address", newUser(t, s.env, "cmc").Username)(t, s)
			}, 200},
			statusCase{"410 /getbalance unknown currency", read("/getbalance", "currency", "XYZ"), 410},
			statusCase{"200 /getbalance missing currency: the default coin (D28)", read("/getbalance"), 200},
			statusCase{"200 /balance lower-case currency (D28)", read("/balance", "currency", "doge"), 200},
			statusCase{"410 /payouts unknown currency filter", read("/payouts", "currency", "XYZ"), 410},
		)
		runStatusCases(t, env, cases)
	})
}

// TestConformanceRequestRate checks 459 for the request rate of a key
// (spec 8, D26, D40): the bucket is the faucet's, counts every operation,
// and refills with time.
func TestConformanceRequestRate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 3}})
		s := newScene(t, env, map[string]int64{"BTC": 1000})
		to := newUser(t, env, "rate")

		if r := s.post(t, "/currencies"); r.Status() != 200 {
			t.Fatalf("1st request: %s", r.Raw)
		}
		if r := s.post(t, "/getbalance", "currency", "BTC"); r.Status() != 200 {
			t.Fatalf("2nd request: %s", r.Raw)
		}
		r := s.send(t, 200, "to", to.Username, "amount", "10", "currency", "BTC")
		if got := string(r.Body["rate_limit_remaining"]); got != "0" {
			t.Errorf("rate_limit_remaining %s after the 3rd of 3, want 0 (D24)", got)
		}
		before := s.balances(t, s.f.AccountID)
		checkError(t, s.post(t, "/send", "to", to.Username, "amount", "10", "currency", "BTC"), 459)
		checkError(t, s.post(t, "/currencies"), 459)
		if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
			t.Errorf("rate-limited send moved money (-before +after):\n%s", diff)
		}

		// Another faucet has a bucket of its own.
		other := newScene(t, env, nil)
		if r := other.post(t, "/currencies"); r.Status() != 200 {
			t.Errorf("another faucet is rate limited: %s", r.Raw)
		}

		// 60 a minute is one a second: a second later one request passes.
		env.Clock.Advance(time.Second)
		r = s.send(t, 200, "to", to.Username, "amount", "10", "currency", "BTC")
		if got := string(r.Body["rate_limit_remaining"]); got != "0" {
			t.Errorf("rate_limit_remaining %s, want 0", got)
		}
		checkError(t, s.post(t, "/currencies"), 459)
		if b := env.Balance(t, to.AccountID, "BTC"); b != 20 {
			t.Errorf("recipient balance %d, want 20", b)
		}
	})
}

// TestConformanceRequestRateDefault checks the default bucket of D40 and
// spec 8: a burst of 120 requests is tolerated, the 121st at the same
// instant is refused with 459.
func TestConformanceRequestRateDefault(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{}) // nothing moves this env's clock
		s := newScene(t, env, nil)
		for i := 1; i <= 120; i++ {
			if r := s.post(t, "/currencies"); r.Status() != 200 {
				t.Fatalf("request %d of a burst of 120: %s", i, r.Raw)
			}
		}
		checkError(t, s.post(t, "/currencies"), 459)
	})
}

// TestConformanceSendLimitWindow checks that an owner send limit (D41)
// counts a sliding window of the injected clock: refused within it, paid
// again once the earlier payouts have left it.
func TestConformanceSendLimitWindow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		tests := []struct {
			name   string
			limit  drip.Limit
			extra  []string
			status int
		}{
			{"per faucet", drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 2}, nil, 450},
			{"per recipient", drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 2}, nil, 450},
			{"per faucet amount", drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 20}, nil, 450},
			{"per claimer IP", drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 2}, []string{"ip_address", "203.0.113.9"}, 459},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				env := checkedEnv(t, eng.Open(t), apptest.Options{}) // its own env: this test moves the clock
				s := newScene(t, env, map[string]int64{"BTC": 1000})
				to := newUser(t, env, "win")
				setLimits(t, s, tt.limit)
				pairs := append([]string{"to", to.Username, "amount", "10", "currency", "BTC"}, tt.extra...)

				s.send(t, 200, pairs...)
				env.Clock.Advance(10 * time.Minute)
				s.send(t, 200, pairs...)
				checkError(t, s.post(t, "/send", pairs...), tt.status)

				// 3599 s after the first payout both are still in the window.
				env.Clock.Advance(49*time.Minute + 59*time.Second)
				checkError(t, s.post(t, "/send", pairs...), tt.status)
				// Past the window of the first payout: one more fits.
				env.Clock.Advance(2 * time.Second)
				s.send(t, 200, pairs...)
				checkError(t, s.post(t, "/send", pairs...), tt.status)
				// Past the window of the second too.
				env.Clock.Advance(10 * time.Minute)
				s.send(t, 200, pairs...)
				if b := env.Balance(t, to.AccountID, "BTC"); b != 40 {
					t.Errorf("recipient balance %d, want 40 (four payouts)", b)
				}
			})
		}
	})
}

// TestConformanceCheckOrder checks D21: when a request has several faults,
// the first in the order 404 -> 403 -> 401 -> 459 -> 410 -> 405 -> 456 ->
// 457 -> 450 -> 402 decides the status.
func TestConformanceCheckOrder(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const burst = 3
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: burst}})
		wrongKey := func(req request) request { req.Form.Set("api_key", faucet.NewKey()); return req }
		cases := []statusCase{
			{"GET beats a wrong key", func(t *testing.T, s *scene) (request, *drip.User) {
				req := wrongKey(sendTo("nobody", "x", "xyz"))
				req.Method = http.MethodGet
				return req, nil
			}, 404},
			{"unknown path beats a missing key", func(t *testing.T, s *scene) (request, *drip.User) {
				req := without(sendTo("nobody", "x", "xyz"), "api_key")
				req.Path = "/sendd"
				return req, nil
			}, 404},
			{"wrong key beats a bad currency", func(t *testing.T, s *scene) (request, *drip.User) {
				u := newUser(t, s.env, "ord")
				return wrongKey(sendTo(u.Username, "10", "btc")), u
			}, 403},
			{"missing key beats every later fault", func(t *testing.T, s *scene) (request, *drip.User) {
				return without(sendTo("nobody", "-1", "XYZ"), "api_key"), nil
			}, 403},
			{"wrong key beats the whitelist and the rate", func(t *testing.T, s *scene) (request, *drip.User) {
				exhaustBucket(t, s, burst)
				setWhitelist(t, s, "203.0.113.0/24")
				return wrongKey(sendTo("nobody", "10", "BTC")), nil
			}, 403},
			{"IP whitelist beats a bad currency", func(t *testing.T, s *scene) (request, *drip.User) {
				setWhitelist(t, s, "203.0.113.0/24")
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "10", "XYZ"), u
			}, 401},
			{"owner suspension beats a bad currency", func(t *testing.T, s *scene) (request, *drip.User) {
				suspendOwner(t, s)
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "10", "XYZ"), u
			}, 401},
			{"IP whitelist beats the request rate", func(t *testing.T, s *scene) (request, *drip.User) {
				exhaustBucket(t, s, burst)
				setWhitelist(t, s, "203.0.113.0/24")
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "10", "BTC"), u
			}, 401},
			{"request rate beats a bad currency", func(t *testing.T, s *scene) (request, *drip.User) {
				exhaustBucket(t, s, burst)
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "10", "XYZ"), u
			}, 459},
			{"request rate beats every later fault", func(t *testing.T, s *scene) (request, *drip.User) {
				exhaustBucket(t, s, burst)
				return sendTo("nobody", "0", "btc"), nil
			}, 459},
			{"bad currency beats a bad amount", func(t *testing.T, s *scene) (request, *drip.User) {
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "1.5", "XYZ"), u
			}, 410},
			{"missing currency beats a missing amount and recipient", func(t *testing.T, s *scene) (request, *drip.User) {
				return request{Form: url.Values{}}, nil
			}, 410},
			{"bad amount beats an unknown recipient", func(t *testing.T, s *scene) (request, *drip.User) {
				return sendTo("nobody_known", "0", "BTC"), nil
			}, 405},
			{"bad amount beats the blacklist", func(t *testing.T, s *scene) (request, *drip.User) {
				u := newUser(t, s.env, "ord")
				setRules(t, s, blacklist(u.Username))
				return sendTo(u.Username, "-1", "BTC"), u
			}, 405},
			{"unknown recipient beats the blacklist", func(t *testing.T, s *scene) (request, *drip.User) {
				setRules(t, s, blacklist("ghost_user"))
				return sendTo("ghost_user", "10", "BTC"), nil
			}, 456},
			{"suspended recipient beats the blacklist", func(t *testing.T, s *scene) (request, *drip.User) {
				u := suspendedUser(t, s.env, "ord")
				setRules(t, s, blacklist(u.Username))
				return sendTo(u.Username, "10", "BTC"), u
			}, 456},
			{"unverified recipient beats the trust rank", func(t *testing.T, s *scene) (request, *drip.User) {
				u := unverifiedUser(t, s.env, "ord")
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(100)})
				return sendTo(u.Username, "10", "BTC"), u
			}, 456},
			{"blacklist beats the owner send limit", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", newUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				u := newUser(t, s.env, "ord")
				setRules(t, s, blacklist(u.Username))
				return sendTo(u.Username, "10", "BTC"), u
			}, 457},
			{"trust rank beats the owner send limit and the balance", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", newUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				setRules(t, s, faucet.RulesChange{AntiFraud: ptr(true), TrustRank: ptr(100)})
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "99999999", "BTC"), u
			}, 457},
			{"owner send limit beats insufficient balance", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", newUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "99999999", "BTC"), u
			}, 450},
			{"owner per-IP limit beats insufficient balance", func(t *testing.T, s *scene) (request, *drip.User) {
				setLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", newUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC", "ip_address", "192.0.2.1")
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "99999999", "BTC", "ip_address", "192.0.2.1"), u
			}, 459},
			{"insufficient balance alone", func(t *testing.T, s *scene) (request, *drip.User) {
				u := newUser(t, s.env, "ord")
				return sendTo(u.Username, "99999999", "BTC"), u
			}, 402},
		}
		runStatusCases(t, env, cases)
	})
}

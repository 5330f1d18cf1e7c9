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
	"github.com/dripfaucet/drip/internal/user"
)

// confReq is the request a case makes.
type confReq struct {
	Method string // "" is POST
	Path   string // "" is /send
	// Form is the body, form-encoded. The faucet's api_key is added unless
	// Form names api_key; a nil value (Form["api_key"] = nil) leaves the
	// member out of the body altogether.
	Form url.Values
}

// do makes req as the scene's faucet.
func (s *confScene) do(t testing.TB, req confReq) *apptest.Reply {
	t.Helper()
	method, path := req.Method, req.Path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/send"
	}
	form := url.Values{}
	for k, v := range req.Form {
		form[k] = v
	}
	if _, ok := form["api_key"]; !ok {
		form.Set("api_key", s.key)
	}
	return s.env.Do(t, method, path, "application/x-www-form-urlencoded", form.Encode())
}

// confStatusCase is one request provoking one v1 status.
type confStatusCase struct {
	name string
	// prepare sets up the scene (faucet settings, users, earlier sends) and
	// returns the request under test and the recipient whose wallet must
	// not change (nil when there is none).
	prepare func(t *testing.T, s *confScene) (confReq, *drip.User)
	want    int
}

// confRunStatusCases runs each case on a faucet of its own, funded with
// 1,000,000 BTC and DOGE units, in env. A refused request must leave every
// balance of the faucet and of the recipient as it was.
func confRunStatusCases(t *testing.T, env *apptest.Env, cases []confStatusCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := confNewScene(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
			req, recipient := tc.prepare(t, s)
			faucetBefore := s.balances(t, s.f.AccountID)
			var recipientBefore []drip.Balance
			if recipient != nil {
				recipientBefore = s.balances(t, recipient.AccountID)
			}
			coin := drip.Symbol(req.Form.Get("currency")) // any case (D28)
			var recipientCoinBefore int64
			if recipient != nil && tc.want == 200 {
				recipientCoinBefore = s.env.Balance(t, recipient.AccountID, coin)
			}
			r := s.do(t, req)
			confCheckError(t, r, tc.want)
			if tc.want == 200 {
				// A paid send pays the recipient the amount (D2).
				if recipient != nil {
					want := recipientCoinBefore + confAtoi(t, req.Form.Get("amount"))
					if got := s.env.Balance(t, recipient.AccountID, coin); got != want {
						t.Errorf("recipient %s balance %d, want %d", coin, got, want)
					}
				}
				return
			}
			if diff := cmp.Diff(faucetBefore, s.balances(t, s.f.AccountID)); diff != "" {
				t.Errorf("refused request changed the faucet's balances (-before +after):\n%s", diff)
			}
			if recipient != nil {
				if diff := cmp.Diff(recipientBefore, s.balances(t, recipient.AccountID)); diff != "" {
					t.Errorf("refused request changed the recipient's balances (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// confSendTo is a /send of amount units of coin to "to".
func confSendTo(to, amount, coin string, more ...string) confReq {
	form := url.Values{"to": {to}, "amount": {amount}, "currency": {coin}}
	for i := 0; i+1 < len(more); i += 2 {
		form.Set(more[i], more[i+1])
	}
	return confReq{Form: form}
}

// confWithout is req with the members named left out of the body.
func confWithout(req confReq, names ...string) confReq {
	for _, n := range names {
		if n == "api_key" {
			req.Form[n] = nil
		} else {
			delete(req.Form, n)
		}
	}
	return req
}

func confSetWhitelist(t testing.TB, s *confScene, list string) {
	t.Helper()
	ips, err := faucet.ParseIPList(list)
	if err != nil {
		t.Fatalf("parse %q: %v", list, err)
	}
	if _, _, err := s.env.App.Faucets.SetIPWhitelist(context.Background(), s.f.ID, ips); err != nil {
		t.Fatalf("set IP whitelist: %v", err)
	}
}

func confSuspendOwner(t testing.TB, s *confScene) {
	t.Helper()
	ctx := context.Background()
	owner, err := s.env.App.Store.UserGetByID(ctx, s.f.OwnerID)
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	if err := s.env.App.Users.SetStatus(ctx, owner, drip.UserSuspended); err != nil {
		t.Fatalf("suspend owner: %v", err)
	}
}

func confSetLimits(t testing.TB, s *confScene, limits ...drip.Limit) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := s.env.App.Faucets.SetLimits(ctx, s.f.ID, limits); err != nil {
		t.Fatalf("set limits: %v", err)
	}
}

func confSetRules(t testing.TB, s *confScene, c faucet.RulesChange) {
	t.Helper()
	if _, _, err := s.env.App.Faucets.SetRules(context.Background(), s.f.ID, c); err != nil {
		t.Fatalf("set rules: %v", err)
	}
}

func confBlacklist(entries ...string) faucet.RulesChange {
	return faucet.RulesChange{Blacklist: &entries}
}

func confLink(t testing.TB, env *apptest.Env, u *drip.User, coin, address string) {
	t.Helper()
	if err := env.App.Users.LinkAddress(context.Background(), u, coin, address); err != nil {
		t.Fatalf("link %s address: %v", coin, err)
	}
}

func confUnverifiedUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	name := prefix + confSeqName()
	u, err := env.App.Users.Create(context.Background(), user.CreateParams{Username: name, Email: name + "@example.com", Verified: false})
	if err != nil {
		t.Fatalf("create unverified user: %v", err)
	}
	return u
}

func confSuspendedUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	u := confUser(t, env, prefix)
	if err := env.App.Users.SetStatus(context.Background(), u, drip.UserSuspended); err != nil {
		t.Fatalf("suspend user: %v", err)
	}
	return u
}

// confExhaust spends the faucet's whole request bucket of size burst.
func confExhaust(t testing.TB, s *confScene, burst int) {
	t.Helper()
	for range burst {
		if r := s.post(t, "/currencies"); r.Status() != 200 {
			t.Fatalf("request within the burst: %s", r.Raw)
		}
	}
}

// TestConformanceStatus provokes every status of spec 7.1 from /send with
// a real request, each refusal leaving all balances as they were.
func TestConformanceStatus(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		ctx := context.Background()
		// recipient is a verified user with nothing against them.
		recipient := func(t *testing.T, s *confScene) *drip.User { return confUser(t, s.env, "rcp") }
		cases := []confStatusCase{
			// 200
			{"200 paid to a verified user", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 the largest valid amount the balance covers", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000000", "BTC"), u
			}, 200},

			// 401 (spec 5 v1.3)
			{"401 caller IP outside the faucet's whitelist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetWhitelist(t, s, "203.0.113.0/24, 2001:db8::1")
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 401},
			{"200 caller IP inside the faucet's whitelist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetWhitelist(t, s, "203.0.113.0/24, 127.0.0.1")
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 caller IP inside a whitelisted CIDR", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetWhitelist(t, s, "127.0.0.0/8")
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"401 owner suspended", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSuspendOwner(t, s)
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 401},

			// 402
			{"402 amount one above the balance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000001", "BTC"), u
			}, 402},
			{"402 largest int64 amount", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "9223372036854775807", "BTC"), u
			}, 402},
			{"402 coin the faucet never funded", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1", "LTC"), u
			}, 402},

			// 403 (spec 5 v1.2)
			{"403 missing api_key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confWithout(confSendTo(u.Username, "1000", "BTC"), "api_key"), u
			}, 403},
			{"403 empty api_key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC", "api_key", ""), u
			}, 403},
			{"403 wrong api_key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC", "api_key", faucet.NewKey()), u
			}, 403},
			{"403 api_key in another case", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC", "api_key", strings.ToUpper(s.key)), u
			}, 403},

			// 404 (spec 4.1 rule 1)
			{"404 unknown path", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Path = "/withdraw"
				return req, u
			}, 404},
			{"404 the v1 prefix alone", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Path = "/" // "/api/v1/"
				return req, u
			}, 404},
			{"404 GET /send", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodGet
				return req, u
			}, 404},
			{"404 PUT /send", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodPut
				return req, u
			}, 404},
			{"404 DELETE /send", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodDelete
				return req, u
			}, 404},
			{"404 PATCH /send", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				req := confSendTo(u.Username, "1000", "BTC")
				req.Method = http.MethodPatch
				return req, u
			}, 404},
			{"404 GET /getbalance with a valid key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confReq{Method: http.MethodGet, Path: "/getbalance?api_key=" + s.key + "&currency=BTC", Form: url.Values{"currency": {"BTC"}}}, nil
			}, 404},

			// 410
			{"410 unknown currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "XYZ"), u
			}, 410},
			{"200 lower-case symbol (D28)", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "btc"), u
			}, 200},
			{"410 unknown symbol in lower case", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "xyz"), u
			}, 410},
			{"410 empty currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", ""), u
			}, 410},
			{"410 missing currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confWithout(confSendTo(u.Username, "1000", "BTC"), "currency"), u
			}, 410},
			{"410 currency name instead of symbol", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "Bitcoin"), u
			}, 410},

			// 450 (D26, D41)
			{"450 faucet count limit reached", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "BTC"), u
			}, 450},
			{"450 faucet amount limit reached", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 150})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "100", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "51", "BTC"), u
			}, 450},
			{"200 faucet amount limit met exactly", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 150})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "100", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "50", "BTC"), u
			}, 200},
			{"450 recipient count limit reached", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 1})
				u := recipient(t, s)
				s.send(t, 200, "to", u.Username, "amount", "10", "currency", "BTC")
				return confSendTo(u.Email, "10", "BTC"), u
			}, 450},
			{"200 recipient limit does not count other recipients", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerRecipient, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "BTC"), u
			}, 200},
			{"450 coin limit reached", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "BTC"), u
			}, 450},
			{"200 coin limit does not count other coins", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Coin: "BTC", Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "DOGE"), u
			}, 200},

			// 456 (D11)
			{"456 unknown email", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo("nobody@example.com", "1000", "BTC"), nil
			}, 456},
			{"456 unknown username", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo("nobody_at_all", "1000", "BTC"), nil
			}, 456},
			{"456 unknown payout_user_hash", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo(strings.Repeat("ab", 20), "1000", "BTC"), nil
			}, 456},
			{"456 address nobody linked", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo("bc1qnobodylinkedthisaddress0000", "1000", "BTC"), nil
			}, 456},
			{"456 empty destination", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo("", "1000", "BTC"), nil
			}, 456},
			{"456 missing destination", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confWithout(confSendTo("x", "1000", "BTC"), "to"), nil
			}, 456},
			{"456 suspended recipient", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confSuspendedUser(t, s.env, "susp")
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 456},
			{"456 suspended recipient by email", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confSuspendedUser(t, s.env, "susp")
				return confSendTo(u.Email, "1000", "BTC"), u
			}, 456},
			{"456 unverified recipient", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUnverifiedUser(t, s.env, "unver")
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 456},
			{"456 unverified recipient by payout_user_hash", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUnverifiedUser(t, s.env, "unver")
				return confSendTo(u.PayoutUserHash, "1000", "BTC"), u
			}, 456},

			// 457 (D42)
			{"457 blacklisted username", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist(u.Username))
				return confSendTo(u.Email, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted email", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist(u.Email))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted email in another case", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist(strings.ToUpper(u.Email)))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted payout_user_hash", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist(u.PayoutUserHash))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted linked address", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				addr := "bc1qblack" + u.Username
				confLink(t, s.env, u, "BTC", addr)
				confSetRules(t, s, confBlacklist(addr))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted address linked for another coin", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				addr := "Dblack" + u.Username
				confLink(t, s.env, u, "DOGE", addr)
				confSetRules(t, s, confBlacklist(addr))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 blacklisted claimer ip_address", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist("203.0.113.7"))
				return confSendTo(u.Username, "1000", "BTC", "ip_address", "203.0.113.7"), u
			}, 457},
			{"457 claimer ip_address in a blacklisted CIDR", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist("198.51.100.0/24"))
				return confSendTo(u.Username, "1000", "BTC", "ip_address", "198.51.100.200"), u
			}, 457},
			{"457 claimer IPv6 ip_address in a blacklisted CIDR", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist("2001:db8::/32"))
				return confSendTo(u.Username, "1000", "BTC", "ip_address", "2001:db8::42"), u
			}, 457},
			{"200 claimer ip_address outside the blacklisted CIDR", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, confBlacklist("198.51.100.0/24", "203.0.113.7"))
				return confSendTo(u.Username, "1000", "BTC", "ip_address", "198.51.101.1"), u
			}, 200},
			{"200 blacklist naming someone else", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				other := recipient(t, s)
				confSetRules(t, s, confBlacklist(other.Username, other.Email, other.PayoutUserHash))
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"457 trust rank above a new user's", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				// A new verified user without addresses ranks 40 (antifraud.TrustRank).
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(41)})
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 trust rank a new user meets", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(40)})
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 trust rank met with a linked address", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(60)})
				u := recipient(t, s)
				confLink(t, s.env, u, "LTC", "Ltrust"+u.Username)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"200 whitelist bypasses the trust rank", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(100), Whitelist: &[]string{u.Username}})
				return confSendTo(u.Email, "1000", "BTC"), u
			}, 200},
			{"200 whitelisted claimer IP bypasses the trust rank", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(100), Whitelist: &[]string{"192.0.2.0/24"}})
				return confSendTo(u.Email, "1000", "BTC", "ip_address", "192.0.2.5"), u
			}, 200},
			{"457 whitelist does not bypass the blacklist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, faucet.RulesChange{Whitelist: &[]string{u.Username}, Blacklist: &[]string{u.Email}})
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 anti-fraud off disables the trust rank", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(false), TrustRank: confPtr(100), NegativeRank: confPtr(0)})
				u := recipient(t, s)
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},
			{"457 anti-fraud off keeps the blacklist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(false), Blacklist: &[]string{u.Username}})
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"457 negative rank above the faucet's tolerance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confRefusedElsewhere(t, s.env, u)
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), NegativeRank: confPtr(24)})
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 457},
			{"200 negative rank within the faucet's tolerance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				confRefusedElsewhere(t, s.env, u) // one other faucet: negative rank 25
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), NegativeRank: confPtr(25)})
				return confSendTo(u.Username, "1000", "BTC"), u
			}, 200},

			// 459 from the owner's per-IP limit (D26); the request rate is
			// TestConformanceRequestRate.
			{"459 claimer ip_address over the owner's per-IP limit", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC", "ip_address", "203.0.113.50")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "BTC", "ip_address", "203.0.113.50"), u
			}, 459},
			{"200 another claimer ip_address under the per-IP limit", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", recipient(t, s).Username, "amount", "10", "currency", "BTC", "ip_address", "203.0.113.50")
				u := recipient(t, s)
				return confSendTo(u.Username, "10", "BTC", "ip_address", "203.0.113.51"), u
			}, 200},
		}
		for _, amount := range []string{"1.5", "-1", "0", "1e3", "99999999999999999999", "9223372036854775808", "", "+5", "0x10", "ten"} {
			cases = append(cases, confStatusCase{"405 amount " + `"` + amount + `"`, func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := recipient(t, s)
				return confSendTo(u.Username, amount, "BTC"), u
			}, 405})
		}
		cases = append(cases, confStatusCase{"405 missing amount", func(t *testing.T, s *confScene) (confReq, *drip.User) {
			u := recipient(t, s)
			return confWithout(confSendTo(u.Username, "1", "BTC"), "amount"), u
		}, 405})
		// Every builtin coin's minimum payout is 1 unit and no interface
		// sets another, so "below the minimum" is the amount 0 above.

		// The disabled coin is one no other case uses: coins are per store.
		if err := env.App.Coins.SetActive(ctx, "XRP", false); err != nil {
			t.Fatalf("disable XRP: %v", err)
		}
		cases = append(cases, confStatusCase{"410 disabled coin", func(t *testing.T, s *confScene) (confReq, *drip.User) {
			u := recipient(t, s)
			return confSendTo(u.Username, "1", "XRP"), u
		}, 410})
		confRunStatusCases(t, env, cases)
	})
}

// confRefusedElsewhere has another faucet's blacklist refuse u once, which
// raises u's negative rank by 25 (D42, antifraud.NegativeRank).
func confRefusedElsewhere(t testing.TB, env *apptest.Env, u *drip.User) {
	t.Helper()
	f, key := env.Faucet(t, map[string]int64{"BTC": 100})
	other := &confScene{env: env, f: f, key: key}
	confSetRules(t, other, confBlacklist(u.Username))
	other.send(t, 457, "to", u.Username, "amount", "1", "currency", "BTC")
}

// TestConformanceOtherEndpointsStatus checks the statuses the read
// endpoints share with /send: every one needs the key (403), honours the
// whitelist and the owner's suspension (401), and validates its currency
// (410) and address (456).
func TestConformanceOtherEndpointsStatus(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		read := func(path string, pairs ...string) func(t *testing.T, s *confScene) (confReq, *drip.User) {
			return func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confReq{Path: path, Form: confForm(s.key, pairs...)}, nil
			}
		}
		var cases []confStatusCase
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
				confStatusCase{"403 missing api_key " + e.path, func(t *testing.T, s *confScene) (confReq, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					return confWithout(req, "api_key"), nil
				}, 403},
				confStatusCase{"403 wrong api_key " + e.path, func(t *testing.T, s *confScene) (confReq, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					req.Form.Set("api_key", faucet.NewKey())
					return req, nil
				}, 403},
				confStatusCase{"401 caller IP not whitelisted " + e.path, func(t *testing.T, s *confScene) (confReq, *drip.User) {
					confSetWhitelist(t, s, "203.0.113.0/24")
					return read(e.path, e.pairs...)(t, s)
				}, 401},
				confStatusCase{"401 owner suspended " + e.path, func(t *testing.T, s *confScene) (confReq, *drip.User) {
					confSuspendOwner(t, s)
					return read(e.path, e.pairs...)(t, s)
				}, 401},
				confStatusCase{"404 GET " + e.path, func(t *testing.T, s *confScene) (confReq, *drip.User) {
					req, _ := read(e.path, e.pairs...)(t, s)
					req.Method = http.MethodGet
					return req, nil
				}, 404},
			)
		}
		cases = append(cases,
			confStatusCase{"456 /checkaddress unknown address", read("/checkaddress", "address", "nobody_here", "currency", "BTC"), 456},
			confStatusCase{"456 /checkaddress suspended user", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return read("/checkaddress", "address", confSuspendedUser(t, s.env, "csus").Username, "currency", "BTC")(t, s)
			}, 456},
			confStatusCase{"456 /checkaddress unverified user", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return read("/checkaddress", "address", confUnverifiedUser(t, s.env, "cunv").Email, "currency", "BTC")(t, s)
			}, 456},
			confStatusCase{"410 /checkaddress bad currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return read("/checkaddress", "address", confUser(t, s.env, "cbc").Username, "currency", "btx")(t, s)
			}, 410},
			confStatusCase{"200 /checkaddress lower-case currency (D28)", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return read("/checkaddress", "address", confUser(t, s.env, "clc").Username, "currency", "btc")(t, s)
			}, 200},
			confStatusCase{"200 /checkaddress missing currency: the default coin (D28)", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return read("/checkaddress", "address", confUser(t, s.env, "cmc").Username)(t, s)
			}, 200},
			confStatusCase{"410 /getbalance unknown currency", read("/getbalance", "currency", "XYZ"), 410},
			confStatusCase{"200 /getbalance missing currency: the default coin (D28)", read("/getbalance"), 200},
			confStatusCase{"200 /balance lower-case currency (D28)", read("/balance", "currency", "doge"), 200},
			confStatusCase{"410 /payouts unknown currency filter", read("/payouts", "currency", "XYZ"), 410},
		)
		confRunStatusCases(t, env, cases)
	})
}

// TestConformanceRequestRate checks 459 for the request rate of a key
// (spec 8, D26, D40): the bucket is the faucet's, counts every operation,
// and refills with time.
func TestConformanceRequestRate(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 3}})
		s := confNewScene(t, env, map[string]int64{"BTC": 1000})
		to := confUser(t, env, "rate")

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
		confCheckError(t, s.post(t, "/send", "to", to.Username, "amount", "10", "currency", "BTC"), 459)
		confCheckError(t, s.post(t, "/currencies"), 459)
		if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
			t.Errorf("rate-limited send moved money (-before +after):\n%s", diff)
		}

		// Another faucet has a bucket of its own.
		other := confNewScene(t, env, nil)
		if r := other.post(t, "/currencies"); r.Status() != 200 {
			t.Errorf("another faucet is rate limited: %s", r.Raw)
		}

		// 60 a minute is one a second: a second later one request passes.
		env.Clock.Advance(time.Second)
		r = s.send(t, 200, "to", to.Username, "amount", "10", "currency", "BTC")
		if got := string(r.Body["rate_limit_remaining"]); got != "0" {
			t.Errorf("rate_limit_remaining %s, want 0", got)
		}
		confCheckError(t, s.post(t, "/currencies"), 459)
		if b := env.Balance(t, to.AccountID, "BTC"); b != 20 {
			t.Errorf("recipient balance %d, want 20", b)
		}
	})
}

// TestConformanceRequestRateDefault checks the default bucket of D40 and
// spec 8: a burst of 120 requests is tolerated, the 121st at the same
// instant is refused with 459.
func TestConformanceRequestRateDefault(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{}) // nothing moves this env's clock
		s := confNewScene(t, env, nil)
		for i := 1; i <= 120; i++ {
			if r := s.post(t, "/currencies"); r.Status() != 200 {
				t.Fatalf("request %d of a burst of 120: %s", i, r.Raw)
			}
		}
		confCheckError(t, s.post(t, "/currencies"), 459)
	})
}

// TestConformanceSendLimitWindow checks that an owner send limit (D41)
// counts a sliding window of the injected clock: refused within it, paid
// again once the earlier payouts have left it.
func TestConformanceSendLimitWindow(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
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
				env := confEnv(t, eng, apptest.Options{}) // its own env: this test moves the clock
				s := confNewScene(t, env, map[string]int64{"BTC": 1000})
				to := confUser(t, env, "win")
				confSetLimits(t, s, tt.limit)
				pairs := append([]string{"to", to.Username, "amount", "10", "currency", "BTC"}, tt.extra...)

				s.send(t, 200, pairs...)
				env.Clock.Advance(10 * time.Minute)
				s.send(t, 200, pairs...)
				confCheckError(t, s.post(t, "/send", pairs...), tt.status)

				// 3599 s after the first payout both are still in the window.
				env.Clock.Advance(49*time.Minute + 59*time.Second)
				confCheckError(t, s.post(t, "/send", pairs...), tt.status)
				// Past the window of the first payout: one more fits.
				env.Clock.Advance(2 * time.Second)
				s.send(t, 200, pairs...)
				confCheckError(t, s.post(t, "/send", pairs...), tt.status)
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
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		const burst = 3
		env := confEnv(t, eng, apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: burst}})
		wrongKey := func(req confReq) confReq { req.Form.Set("api_key", faucet.NewKey()); return req }
		cases := []confStatusCase{
			{"GET beats a wrong key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				req := wrongKey(confSendTo("nobody", "x", "xyz"))
				req.Method = http.MethodGet
				return req, nil
			}, 404},
			{"unknown path beats a missing key", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				req := confWithout(confSendTo("nobody", "x", "xyz"), "api_key")
				req.Path = "/sendd"
				return req, nil
			}, 404},
			{"wrong key beats a bad currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUser(t, s.env, "ord")
				return wrongKey(confSendTo(u.Username, "10", "btc")), u
			}, 403},
			{"missing key beats every later fault", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confWithout(confSendTo("nobody", "-1", "XYZ"), "api_key"), nil
			}, 403},
			{"wrong key beats the whitelist and the rate", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confExhaust(t, s, burst)
				confSetWhitelist(t, s, "203.0.113.0/24")
				return wrongKey(confSendTo("nobody", "10", "BTC")), nil
			}, 403},
			{"IP whitelist beats a bad currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetWhitelist(t, s, "203.0.113.0/24")
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "10", "XYZ"), u
			}, 401},
			{"owner suspension beats a bad currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSuspendOwner(t, s)
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "10", "XYZ"), u
			}, 401},
			{"IP whitelist beats the request rate", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confExhaust(t, s, burst)
				confSetWhitelist(t, s, "203.0.113.0/24")
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "10", "BTC"), u
			}, 401},
			{"request rate beats a bad currency", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confExhaust(t, s, burst)
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "10", "XYZ"), u
			}, 459},
			{"request rate beats every later fault", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confExhaust(t, s, burst)
				return confSendTo("nobody", "0", "btc"), nil
			}, 459},
			{"bad currency beats a bad amount", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "1.5", "XYZ"), u
			}, 410},
			{"missing currency beats a missing amount and recipient", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confReq{Form: url.Values{}}, nil
			}, 410},
			{"bad amount beats an unknown recipient", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				return confSendTo("nobody_known", "0", "BTC"), nil
			}, 405},
			{"bad amount beats the blacklist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUser(t, s.env, "ord")
				confSetRules(t, s, confBlacklist(u.Username))
				return confSendTo(u.Username, "-1", "BTC"), u
			}, 405},
			{"unknown recipient beats the blacklist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetRules(t, s, confBlacklist("ghost_user"))
				return confSendTo("ghost_user", "10", "BTC"), nil
			}, 456},
			{"suspended recipient beats the blacklist", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confSuspendedUser(t, s.env, "ord")
				confSetRules(t, s, confBlacklist(u.Username))
				return confSendTo(u.Username, "10", "BTC"), u
			}, 456},
			{"unverified recipient beats the trust rank", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUnverifiedUser(t, s.env, "ord")
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(100)})
				return confSendTo(u.Username, "10", "BTC"), u
			}, 456},
			{"blacklist beats the owner send limit", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", confUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				u := confUser(t, s.env, "ord")
				confSetRules(t, s, confBlacklist(u.Username))
				return confSendTo(u.Username, "10", "BTC"), u
			}, 457},
			{"trust rank beats the owner send limit and the balance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", confUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				confSetRules(t, s, faucet.RulesChange{AntiFraud: confPtr(true), TrustRank: confPtr(100)})
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "99999999", "BTC"), u
			}, 457},
			{"owner send limit beats insufficient balance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", confUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC")
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "99999999", "BTC"), u
			}, 450},
			{"owner per-IP limit beats insufficient balance", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				confSetLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 3600, MaxCount: 1})
				s.send(t, 200, "to", confUser(t, s.env, "ord").Username, "amount", "10", "currency", "BTC", "ip_address", "192.0.2.1")
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "99999999", "BTC", "ip_address", "192.0.2.1"), u
			}, 459},
			{"insufficient balance alone", func(t *testing.T, s *confScene) (confReq, *drip.User) {
				u := confUser(t, s.env, "ord")
				return confSendTo(u.Username, "99999999", "BTC"), u
			}, 402},
		}
		confRunStatusCases(t, env, cases)
	})
}

package key_test

import (
	"context"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

var secretShape = regexp.MustCompile(`^drip_[a-z2-7]{8}_[a-z2-7]{32}$`)

func code(err error) drip.Code { return drip.ErrorCode(err) }

// TestKeys: D14 on every engine — minting, authenticating, expiry, IP
// whitelist, and a revocation that holds at once for every service over
// the same database (every node).
func TestKeys(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			env := apptest.New(t, eng.Open(t), apptest.Options{})
			f, _ := env.Faucet(t, nil)
			keys := key.NewService(env.App.Store, env.Clock.Now)
			otherNode := key.NewService(env.App.Store, env.Clock.Now)
			here := netip.MustParseAddr("203.0.113.7")

			k, secret, err := keys.Mint(ctx, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead, drip.ScopeSend},
				ExpiresIn: time.Hour, DailyUSDCapMicros: 25_000_000})
			if err != nil {
				t.Fatal(err)
			}
			if !secretShape.MatchString(secret) || !strings.HasPrefix(secret, k.Prefix+"_") {
				t.Errorf("secret %q (prefix %q) is not drip_<8>_<32> under its prefix", secret, k.Prefix)
			}
			got, err := otherNode.Authenticate(ctx, secret, here)
			if err != nil || got.ID != k.ID || !got.Has(drip.ScopeSend) || got.Has(drip.ScopeManage) || got.DailyUSDCapMicros != 25_000_000 {
				t.Fatalf("Authenticate = %+v, %v", got, err)
			}
			list, err := keys.List(ctx, f.ID)
			if err != nil || len(list) != 1 || list[0].Prefix != k.Prefix {
				t.Fatalf("List = %+v, %v", list, err)
			}

			for name, s := range map[string]string{"empty": "", "unknown": k.Prefix + "_" + strings.Repeat("a", 32), "huge": strings.Repeat("x", 10000)} {
				if _, err := keys.Authenticate(ctx, s, here); code(err) != drip.CodeUnauthenticated {
					t.Errorf("%s key: %v, want unauthenticated", name, err)
				}
			}

			// Expiry: usable until the instant it expires.
			env.Clock.Advance(time.Hour - time.Second)
			if _, err := keys.Authenticate(ctx, secret, here); err != nil {
				t.Errorf("a second before expiry: %v", err)
			}
			env.Clock.Advance(time.Second)
			if _, err := keys.Authenticate(ctx, secret, here); code(err) != drip.CodeUnauthenticated || !strings.Contains(err.Error(), "expired") {
				t.Errorf("at expiry: %v, want unauthenticated (expired)", err)
			}

			// IP whitelist and revocation on a key that never expires.
			ips := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}
			k2, secret2, err := keys.Mint(ctx, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeRead}, IPWhitelist: ips})
			if err != nil {
				t.Fatal(err)
			}
			if k2.ExpiresAt != nil {
				t.Errorf("a key minted without expiry expires at %v", k2.ExpiresAt)
			}
			if _, err := keys.Authenticate(ctx, secret2, here); code(err) != drip.CodeForbidden {
				t.Errorf("caller outside the key's whitelist: %v, want forbidden", err)
			}
			if _, err := keys.Authenticate(ctx, secret2, netip.MustParseAddr("198.51.100.9")); err != nil {
				t.Errorf("caller inside the key's whitelist: %v", err)
			}
			revoked, err := keys.Revoke(ctx, k2.ID)
			if err != nil || revoked.RevokedAt == nil {
				t.Fatalf("Revoke = %+v, %v", revoked, err)
			}
			if _, err := otherNode.Authenticate(ctx, secret2, netip.MustParseAddr("198.51.100.9")); code(err) != drip.CodeUnauthenticated || !strings.Contains(err.Error(), "revoked") {
				t.Errorf("revoked key on another node: %v, want unauthenticated (revoked)", err)
			}
			if _, err := keys.Revoke(ctx, k2.ID); code(err) != drip.CodeNotFound {
				t.Errorf("revoking twice: %v, want not found", err)
			}
		})
	}
}

func TestMintRefusesBadParams(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{})
	f, _ := env.Faucet(t, nil)
	keys := key.NewService(env.App.Store, env.Clock.Now)
	read := []drip.Scope{drip.ScopeRead}
	cases := map[string]key.MintParams{
		"no scope":                  {FaucetID: f.ID},
		"negative expiry":           {FaucetID: f.ID, Scopes: read, ExpiresIn: -time.Second},
		"expiry beyond 10 years":    {FaucetID: f.ID, Scopes: read, ExpiresIn: 11 * 365 * 24 * time.Hour},
		"cap on a key without send": {FaucetID: f.ID, Scopes: read, DailyUSDCapMicros: 1},
		"unknown faucet":            {FaucetID: f.ID + 100, Scopes: read},
	}
	for name, p := range cases {
		if _, secret, err := keys.Mint(ctx, p); err == nil || secret != "" {
			t.Errorf("%s: minted (%q), want an error", name, secret)
		}
	}
	if list, _ := keys.List(ctx, f.ID); len(list) != 0 {
		t.Errorf("refused mints stored %d keys", len(list))
	}
}

func TestParseScopes(t *testing.T) {
	t.Parallel()
	got, err := drip.ParseScopes(" send, READ,send ")
	if err != nil || len(got) != 2 || got[0] != drip.ScopeRead || got[1] != drip.ScopeSend {
		t.Errorf("ParseScopes = %v, %v; want [read send]", got, err)
	}
	for _, bad := range []string{"", ",", "delete", "read,root"} {
		if got, err := drip.ParseScopes(bad); err == nil {
			t.Errorf("ParseScopes(%q) = %v; want an error", bad, got)
		}
	}
}

func TestUSD(t *testing.T) {
	t.Parallel()
	valid := map[string]int64{"25": 25_000_000, "25.00": 25_000_000, "0.5": 500_000, "0.000001": 1, "1234.567891": 1_234_567_891}
	for in, want := range valid {
		got, err := key.ParseUSD(in)
		if err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0.00", "-1", "+1", "1e3", "1.0000001", "abc", ".5", "99999999999999999999", "1,5"} {
		if got, err := key.ParseUSD(in); err == nil {
			t.Errorf("ParseUSD(%q) = %d; want an error", in, got)
		}
	}
	for micros, want := range map[int64]string{25_000_000: "25", 25_500_000: "25.5", 1: "0.000001"} {
		if got := key.FormatUSD(micros); got != want {
			t.Errorf("FormatUSD(%d) = %q; want %q", micros, got, want)
		}
	}
}

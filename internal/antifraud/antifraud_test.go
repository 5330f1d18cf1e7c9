package antifraud

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

const day = 24 * time.Hour

func TestTrustRankFormula(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    Profile
		want int
	}{
		{"new unverified user", Profile{}, 0},
		{"verified today", Profile{EmailVerified: true}, 40},
		{"verified, 10 days", Profile{EmailVerified: true, AccountAge: 10*day + time.Hour}, 50},
		{"age counts whole days only", Profile{AccountAge: day - time.Second}, 0},
		{"age caps at 40", Profile{AccountAge: 400 * day}, 40},
		{"linked address", Profile{LinkedAddresses: 3}, 20},
		{"everything", Profile{EmailVerified: true, AccountAge: 41 * day, LinkedAddresses: 1}, 100},
	}
	for _, c := range cases {
		if got := TrustRank(c.p); got != c.want {
			t.Errorf("%s: TrustRank = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestNegativeRankFormula(t *testing.T) {
	t.Parallel()
	for refused, want := range map[int64]int{0: 0, 1: 25, 3: 75, 4: 100, 9: 100} {
		if got := NegativeRank(Profile{RefusedBy: refused}); got != want {
			t.Errorf("NegativeRank(refused by %d) = %d, want %d", refused, got, want)
		}
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	id := Identity{Names: []string{"mallory", "mallory@example.com"}, IP: netip.MustParseAddr("203.0.113.9")}
	weak := Profile{EmailVerified: true}                                        // trust 40
	shunned := Profile{EmailVerified: true, AccountAge: 60 * day, RefusedBy: 2} // trust 80, negative 50
	cases := []struct {
		name        string
		rules       drip.Rules
		profile     Profile
		refused     bool
		blacklisted bool
	}{
		{"defaults pass everyone", drip.DefaultRules, weak, false, false},
		{"blacklisted by name, any case", drip.Rules{Blacklist: []string{"MALLORY"}}, weak, true, true},
		{"blacklisted by CIDR", drip.Rules{Blacklist: []string{"203.0.113.0/24"}}, weak, true, true},
		{"blacklist wins over whitelist", drip.Rules{Blacklist: []string{"mallory"}, Whitelist: []string{"mallory"}}, weak, true, true},
		{"blacklist applies with anti-fraud off", drip.Rules{AntiFraud: false, Blacklist: []string{"203.0.113.9"}}, weak, true, true},
		{"trust rank too low", drip.Rules{AntiFraud: true, TrustRank: 41, NegativeRank: 100}, weak, true, false},
		{"trust rank just enough", drip.Rules{AntiFraud: true, TrustRank: 40, NegativeRank: 100}, weak, false, false},
		{"negative rank too high", drip.Rules{AntiFraud: true, NegativeRank: 49}, shunned, true, false},
		{"negative rank tolerated", drip.Rules{AntiFraud: true, NegativeRank: 50}, shunned, false, false},
		{"whitelist bypasses ranks", drip.Rules{AntiFraud: true, TrustRank: 100, Whitelist: []string{"mallory@example.com"}}, weak, false, false},
		{"anti-fraud off skips ranks", drip.Rules{AntiFraud: false, TrustRank: 100}, weak, false, false},
		{"unrelated entries do not match", drip.Rules{Blacklist: []string{"mall", "203.0.113.10", "198.51.100.0/24", "garbage/99"}}, weak, false, false},
	}
	for _, c := range cases {
		refusal, blacklisted, err := Verdict(c.rules, id, func() (Profile, error) { return c.profile, nil })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (refusal != nil) != c.refused || blacklisted != c.blacklisted {
			t.Errorf("%s: refusal %v blacklisted %v; want refused %v blacklisted %v", c.name, refusal, blacklisted, c.refused, c.blacklisted)
		}
		if refusal != nil && refusal.Code != drip.CodeRecipientRefused {
			t.Errorf("%s: code %s, want %s", c.name, refusal.Code, drip.CodeRecipientRefused)
		}
	}
	// The profile is loaded only when ranks are checked, and its error surfaces.
	boom := errors.New("boom")
	if _, _, err := Verdict(drip.Rules{AntiFraud: true, TrustRank: 10}, id, func() (Profile, error) { return Profile{}, boom }); !errors.Is(err, boom) {
		t.Errorf("profile error: got %v, want boom", err)
	}
	if _, _, err := Verdict(drip.Rules{AntiFraud: false}, id, func() (Profile, error) { return Profile{}, boom }); err != nil {
		t.Errorf("anti-fraud off loaded the profile: %v", err)
	}
}

package drip

import (
	"net/netip"
	"strings"
	"time"
)

// Scope is what a v2 key may do (spec 5, D14).
type Scope string

const (
	ScopeRead   Scope = "read"   // balances, payouts, statistics, settings
	ScopeSend   Scope = "send"   // payouts: moves real funds
	ScopeManage Scope = "manage" // faucet settings, limits, IP whitelist, anti-fraud
	ScopeAdmin  Scope = "admin"  // create a faucet, request listing approval
)

// Scopes are every scope, in display order.
var Scopes = []Scope{ScopeRead, ScopeSend, ScopeManage, ScopeAdmin}

// ParseScopes reads a comma-separated scope list ("read,send"): known
// scopes only, at least one, duplicates folded, in display order.
func ParseScopes(s string) ([]Scope, error) {
	seen := map[Scope]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ToLower(f))
		if f == "" {
			continue
		}
		known := false
		for _, sc := range Scopes {
			known = known || Scope(f) == sc
		}
		if !known {
			return nil, Errorf(CodeInvalid, "Unknown scope %q: use read, send, manage or admin.", f)
		}
		seen[Scope(f)] = true
	}
	var out []Scope
	for _, sc := range Scopes {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, Errorf(CodeInvalid, "A key needs at least one scope: read, send, manage or admin.")
	}
	return out, nil
}

// Key is a v2 API key of a faucet (D14). Its secret is shown once at minting
// and stored only as a hash; Prefix identifies it in lists and logs.
type Key struct {
	ID          int64
	FaucetID    int64
	Prefix      string // "drip_" and 8 characters, visible
	Scopes      []Scope
	ExpiresAt   *time.Time     // nil: never
	IPWhitelist []netip.Prefix // empty: any caller IP
	// DailyUSDCapMicros caps the USD value of a send key's paid sends per
	// UTC day, in millionths of a dollar (D36); 0: no cap.
	DailyUSDCapMicros int64
	RevokedAt         *time.Time
	CreatedAt         time.Time
	// LastUsedAt is when the key last authenticated a request, to the
	// minute (key.TouchEvery); nil: never.
	LastUsedAt *time.Time
}

// Has reports whether the key carries scope s.
func (k *Key) Has(s Scope) bool {
	for _, sc := range k.Scopes {
		if sc == s {
			return true
		}
	}
	return false
}

// AllowsIP reports whether a caller at ip may use the key.
func (k *Key) AllowsIP(ip netip.Addr) bool { return WhitelistAllows(k.IPWhitelist, ip) }

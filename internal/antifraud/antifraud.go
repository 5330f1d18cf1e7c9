// Package antifraud decides whether a faucet owner's rules (D42) let a
// recipient be paid. It is pure: callers gather the facts, this judges them.
package antifraud

import (
	"net/netip"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// Profile is the part of a recipient's record the ranks are computed from.
type Profile struct {
	EmailVerified   bool
	AccountAge      time.Duration
	LinkedAddresses int
	// RefusedBy is the number of other faucets whose blacklist refused the
	// recipient in the last RefusalWindow.
	RefusedBy int64
}

// RefusalWindow is how far back refusals by other faucets count.
const RefusalWindow = 30 * 24 * time.Hour

// TrustRank is how much a recipient is trusted, 0-100:
//
//	40 if the email address is verified,
//	+ 1 per whole day of account age, at most 40,
//	+ 20 if the user has linked at least one wallet address.
//
// A verified user with a linked address reaches 100 after 40 days.
func TrustRank(p Profile) int {
	rank := 0
	if p.EmailVerified {
		rank += 40
	}
	rank += int(min(40, p.AccountAge/(24*time.Hour)))
	if p.LinkedAddresses > 0 {
		rank += 20
	}
	return rank
}

// NegativeRank is how much other owners distrust a recipient, 0-100: 25 for
// each other faucet whose blacklist refused them within RefusalWindow.
func NegativeRank(p Profile) int {
	return int(min(100, 25*p.RefusedBy))
}

// Identity is what the whitelist and blacklist are matched against: the
// recipient's names (username, email, payout_user_hash, linked addresses,
// the destination as given) and the claimer's IP when the caller sent one.
type Identity struct {
	Names []string
	IP    netip.Addr // invalid when not given
}

// Listed reports whether any entry of list names the identity. Entries are
// matched case-insensitively against names, and as IPs or CIDRs against IP.
func Listed(list []string, id Identity) bool {
	for _, entry := range list {
		for _, name := range id.Names {
			if name != "" && strings.EqualFold(entry, name) {
				return true
			}
		}
		if id.IP.IsValid() && matchesIP(entry, id.IP) {
			return true
		}
	}
	return false
}

func matchesIP(entry string, ip netip.Addr) bool {
	if strings.Contains(entry, "/") {
		p, err := netip.ParsePrefix(entry)
		return err == nil && p.Contains(ip.Unmap())
	}
	a, err := netip.ParseAddr(entry)
	return err == nil && a.Unmap() == ip.Unmap()
}

// Verdict applies the rules: the blacklist always refuses; a whitelisted
// recipient skips the rank checks; with anti-fraud off nothing else is
// checked; otherwise the trust rank must reach TrustRank and the negative
// rank must not exceed NegativeRank. profile is called only when ranks are
// checked, so callers load it lazily. blacklisted tells the caller to record
// the refusal for other faucets' negative rank.
func Verdict(rules drip.Rules, id Identity, profile func() (Profile, error)) (refusal *drip.Error, blacklisted bool, err error) {
	if Listed(rules.Blacklist, id) {
		return drip.Errorf(drip.CodeRecipientRefused, "Recipient refused: blacklisted by this faucet."), true, nil
	}
	if !rules.AntiFraud || Listed(rules.Whitelist, id) {
		return nil, false, nil
	}
	p, err := profile()
	if err != nil {
		return nil, false, err
	}
	if TrustRank(p) < rules.TrustRank {
		return drip.Errorf(drip.CodeRecipientRefused, "Recipient refused: failed this faucet's anti-fraud checks."), false, nil
	}
	if NegativeRank(p) > rules.NegativeRank {
		return drip.Errorf(drip.CodeRecipientRefused, "Recipient refused: failed this faucet's anti-fraud checks."), false, nil
	}
	return nil, false, nil
}

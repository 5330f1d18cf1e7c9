package operation

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// Warnings (spec 4.3): a manage operation that weakens one of the
// faucet's protections says so in its record's warning field, so that an
// assistant tells the owner (the tool server also writes it as a text line
// first) and a v2 client can show it. Calls that keep or strengthen them
// carry none. "before" is the faucet as the call's transaction found it, not as
// the call's authorization read it: a change made in between (through v2,
// say) would otherwise hide what this call undid.

// rulesWarning says how a change of the anti-fraud rules weakened them:
// rank checks turned off, trust_rank lowered, negative_rank raised,
// blacklist entries removed, whitelist entries added. "" when none of that.
func rulesWarning(before, after drip.Rules) string {
	var w []string
	if before.AntiFraud && !after.AntiFraud {
		w = append(w, "anti-fraud rank checks were turned off: recipients of any rank are paid unless blacklisted")
	}
	if after.TrustRank < before.TrustRank {
		w = append(w, fmt.Sprintf("trust_rank was lowered from %d to %d: recipients with less trust are paid", before.TrustRank, after.TrustRank))
	}
	if after.NegativeRank > before.NegativeRank {
		w = append(w, fmt.Sprintf("negative_rank was raised from %d to %d: recipients other faucets refused are paid", before.NegativeRank, after.NegativeRank))
	}
	if removed := missing(before.Blacklist, after.Blacklist); len(removed) > 0 {
		w = append(w, fmt.Sprintf("removed from the blacklist, so they can be paid again: %s", strings.Join(removed, ", ")))
	}
	if added := missing(after.Whitelist, before.Whitelist); len(added) > 0 {
		w = append(w, fmt.Sprintf("added to the whitelist, so they skip the rank checks: %s", strings.Join(added, ", ")))
	}
	return sentence(w)
}

// ipWhitelistWarning says whether a new IP whitelist opened a restricted
// one to every address: emptied it, or added 0.0.0.0/0 or ::/0, which
// admit every IPv4 or IPv6 address. An empty whitelist admitted every
// address already.
func ipWhitelistWarning(before, after []netip.Prefix) string {
	if len(before) == 0 {
		return ""
	}
	if len(after) == 0 {
		return sentence([]string{"the IP whitelist was emptied: the faucet's keys now work from any IP address"})
	}
	var w []string
	for _, p := range after {
		if p.Bits() != 0 || slices.Contains(before, p) {
			continue
		}
		family := "IPv6"
		if p.Addr().Is4() {
			family = "IPv4"
		}
		w = append(w, fmt.Sprintf("the IP whitelist now holds %s: the faucet's keys work from any %s address", p, family))
	}
	return sentence(w)
}

// limitsWarning says whether a new list of send limits has fewer limits
// than the old one.
func limitsWarning(before, after []drip.Limit) string {
	if len(after) >= len(before) {
		return ""
	}
	if len(after) == 0 {
		return sentence([]string{fmt.Sprintf("every send limit was removed (there were %d): none of the owner's limits caps payouts any more", len(before))})
	}
	return sentence([]string{fmt.Sprintf("send limits were removed, from %d to %d: fewer of the owner's limits cap payouts", len(before), len(after))})
}

// missing are the entries of list that other lacks. Lists are matched
// case-insensitively, as the anti-fraud checks match them (D42).
func missing(list, other []string) []string {
	var out []string
	for _, e := range list {
		found := false
		for _, o := range other {
			found = found || strings.EqualFold(e, o)
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

func sentence(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return "This call weakened the faucet's protection: " + strings.Join(parts, "; ") + "."
}

package safehttp

import "net/netip"

// refusal says why an address is not public, as a phrase for messages
// ("a private address"); the empty refusal means the address is public.
type refusal string

const (
	public        refusal = ""
	loopback      refusal = "a loopback address"
	private       refusal = "a private address"
	linkLocal     refusal = "a link-local address"
	metadata      refusal = "the cloud metadata address"
	unspecified   refusal = "an unspecified address"
	multicast     refusal = "a multicast address"
	broadcast     refusal = "a broadcast address"
	sharedNAT     refusal = "a carrier-grade NAT address"
	documentation refusal = "a documentation address"
	benchmarking  refusal = "a benchmarking address"
	reserved      refusal = "a reserved address"
)

// allowed reports whether r admits a connection: a public address, or a
// loopback one in development (Options.AllowInsecure).
func (r refusal) allowed(allowInsecure bool) bool {
	return r == public || (allowInsecure && r == loopback)
}

type special struct {
	prefix netip.Prefix
	why    refusal
}

// specialV4 are the IPv4 ranges of the IANA special-purpose registry that
// are not reachable on the public internet (RFC 6890 and its updates),
// first match wins. The table is never written to.
var specialV4 = []special{
	{netip.MustParsePrefix("0.0.0.0/32"), unspecified},
	{netip.MustParsePrefix("0.0.0.0/8"), reserved}, // "this network"
	{netip.MustParsePrefix("10.0.0.0/8"), private},
	{netip.MustParsePrefix("100.64.0.0/10"), sharedNAT},
	{netip.MustParsePrefix("127.0.0.0/8"), loopback},
	{netip.MustParsePrefix("169.254.169.254/32"), metadata},
	{netip.MustParsePrefix("169.254.0.0/16"), linkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), private},
	{netip.MustParsePrefix("192.0.0.0/24"), reserved}, // IETF protocol assignments
	{netip.MustParsePrefix("192.0.2.0/24"), documentation},
	{netip.MustParsePrefix("192.88.99.0/24"), reserved}, // former 6to4 relay anycast
	{netip.MustParsePrefix("192.168.0.0/16"), private},
	{netip.MustParsePrefix("198.18.0.0/15"), benchmarking},
	{netip.MustParsePrefix("198.51.100.0/24"), documentation},
	{netip.MustParsePrefix("203.0.113.0/24"), documentation},
	{netip.MustParsePrefix("224.0.0.0/4"), multicast},
	{netip.MustParsePrefix("255.255.255.255/32"), broadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), reserved},
}

// IPv6 forms that carry an IPv4 address in their low 32 bits (or, for
// 6to4, in bits 16-47): they are judged by the address they carry.
var (
	v4Compatible = netip.MustParsePrefix("::/96")             // deprecated, RFC 4291
	nat64        = netip.MustParsePrefix("64:ff9b::/96")      // RFC 6052
	sixToFour    = netip.MustParsePrefix("2002::/16")         // RFC 3056
	globalV6     = netip.MustParsePrefix("2000::/3")          // all global unicast
	metadataV6   = netip.MustParsePrefix("fd00:ec2::254/128") // AWS's IPv6 metadata
)

// specialV6 are the IPv6 ranges not reachable on the public internet,
// besides everything outside 2000::/3, which classify refuses as reserved.
var specialV6 = []special{
	{netip.MustParsePrefix("64:ff9b:1::/48"), private}, // local-use NAT64, RFC 8215
	{netip.MustParsePrefix("100::/64"), reserved},      // discard-only
	{metadataV6, metadata},
	{netip.MustParsePrefix("fc00::/7"), private},
	{netip.MustParsePrefix("fec0::/10"), private}, // former site-local
	{netip.MustParsePrefix("fe80::/10"), linkLocal},
	{netip.MustParsePrefix("ff00::/8"), multicast},
	// 2001::/23 holds Teredo (2001::/32), benchmarking (2001:2::/48) and
	// ORCHID; none of it is a place a webhook receiver lives.
	{netip.MustParsePrefix("2001:2::/48"), benchmarking},
	{netip.MustParsePrefix("2001::/23"), reserved},
	{netip.MustParsePrefix("2001:db8::/32"), documentation},
	{netip.MustParsePrefix("3fff::/20"), documentation},
	{netip.MustParsePrefix("5f00::/16"), reserved}, // SRv6 SIDs, RFC 9602
}

// classify says why addr is not a public address, or public. A zone is
// ignored: only link-local addresses carry one.
func classify(addr netip.Addr) refusal {
	addr = addr.WithZone("")
	switch {
	case !addr.IsValid():
		return reserved
	case addr.Is4():
		return match(addr, specialV4)
	case addr.Is4In6():
		return classify(addr.Unmap())
	case addr.IsUnspecified():
		return unspecified
	case addr.IsLoopback():
		return loopback
	case v4Compatible.Contains(addr):
		// Deprecated and unroutable: refused even when what it carries
		// is public, but named after what it carries when that is not.
		if why := classify(low32(addr)); why != public {
			return why
		}
		return reserved
	case nat64.Contains(addr):
		return classify(low32(addr))
	case sixToFour.Contains(addr):
		b := addr.As16()
		return classify(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	if why := match(addr, specialV6); why != public {
		return why
	}
	if !globalV6.Contains(addr) {
		return reserved
	}
	return public
}

func match(addr netip.Addr, table []special) refusal {
	for _, s := range table {
		if s.prefix.Contains(addr) {
			return s.why
		}
	}
	return public
}

// low32 is the IPv4 address in the low 32 bits of an IPv6 address.
func low32(addr netip.Addr) netip.Addr {
	b := addr.As16()
	return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
}

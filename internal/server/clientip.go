package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns a function telling the address a request came from, for
// IP whitelists. It is the connection's remote address, unless that address
// is one of the trusted proxies (a load balancer in front of several
// nodes): then it is the right-most X-Forwarded-For entry that is not itself
// a trusted proxy. Entries left of that could be forged by the client.
func ClientIP(trusted []netip.Prefix) func(*http.Request) netip.Addr {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) netip.Addr {
		remote := RemoteIP(r)
		if len(trusted) == 0 || !isTrusted(remote) {
			return remote
		}
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				return remote // a malformed chain is not to be believed
			}
			if a = a.Unmap(); !isTrusted(a) {
				return a
			}
		}
		return remote
	}
}

// RemoteIP is the address of the connection a request came on.
func RemoteIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

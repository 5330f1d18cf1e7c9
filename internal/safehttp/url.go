package safehttp

import (
	"context"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// MaxURLLen is the longest URL CheckURL accepts, in bytes.
const MaxURLLen = 2048

// CheckURL reports whether raw may be saved as a delivery URL: an absolute
// https URL (http too with opts.AllowInsecure or opts.AllowHTTP) with a host, a port in
// 1-65535 when one is given, no user information, no fragment, at most
// MaxURLLen bytes; and its host either a public IP address or a name every
// address of which, through opts.Resolver, is public. A refusal is a
// *drip.Error (CodeInvalid) whose message names what is wrong, for the
// person who typed the URL.
//
// Passing CheckURL says nothing about later: names change what they
// resolve to, so NewClient's clients check the address again when they
// connect.
func CheckURL(ctx context.Context, raw string, opts Options) error {
	opts = opts.withDefaults()
	u, err := checkShape(raw, opts)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if addr, err := netip.ParseAddr(host); err == nil {
		if why := classify(addr); !why.allowed(opts.AllowInsecure) {
			return invalid("%s points to %s (%s).", opts.Name, why, addr)
		}
		return nil
	}
	addrs, err := opts.Resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return invalid("%s host %s could not be resolved.", opts.Name, host)
	}
	for _, addr := range addrs {
		// The standard resolver gives IPv4 answers in their IPv6-mapped
		// form; they are named as people write them.
		addr = addr.Unmap()
		if why := classify(addr); !why.allowed(opts.AllowInsecure) {
			return invalid("%s resolves to %s (%s).", opts.Name, why, addr)
		}
	}
	return nil
}

// checkShape checks everything about raw that needs no lookup; clients
// check it again on every request, so a URL saved under other rules, or
// never checked, is not sent.
func checkShape(raw string, opts Options) (*url.URL, error) {
	if raw == "" {
		return nil, invalid("%s is required.", opts.Name)
	}
	if len(raw) > MaxURLLen {
		return nil, invalid("%s is longer than %d characters.", opts.Name, MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, invalid("%s is not a valid URL.", opts.Name)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && (opts.AllowInsecure || opts.AllowHTTP):
	default:
		if opts.AllowHTTP {
			return nil, invalid("%s must be an http or https URL.", opts.Name)
		}
		return nil, invalid("%s must use https.", opts.Name)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, invalid("%s must be absolute, like https://example.com/hook.", opts.Name)
	}
	if u.User != nil {
		return nil, invalid("%s must not contain a user name or password.", opts.Name)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, invalid("%s must not contain a fragment (#).", opts.Name)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, invalid("%s has port %s; a port is 1 to 65535.", opts.Name, p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return nil, invalid("%s has an empty port.", opts.Name)
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return u, nil
	}
	if !validName(host) {
		return nil, invalid("%s host %q is not a valid host name (international names are written in their xn-- form).", opts.Name, host)
	}
	return u, nil
}

// validName reports whether host is a DNS name of letters, digits and
// hyphens whose last label is not all digits. The last rule refuses the
// numeric forms some resolvers read as IPv4 addresses ("2130706433",
// "127.1", "0x7f.1"), so that what is checked is what is connected to.
func validName(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != "" && !isHexNumber(last)
}

// isHexNumber reports whether label is a 0x-prefixed number ("0x7f").
func isHexNumber(label string) bool {
	if len(label) < 3 || (label[:2] != "0x" && label[:2] != "0X") {
		return false
	}
	return strings.Trim(label[2:], "0123456789abcdefABCDEF") == ""
}

func invalid(format string, args ...any) error {
	return drip.Errorf(drip.CodeInvalid, format, args...)
}

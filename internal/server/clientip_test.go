package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"no proxies trusted: the connection", nil, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"untrusted peer's header is ignored", proxies, "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted proxy: the client it saw", proxies, "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"forged left entries are skipped", proxies, "10.1.2.3:4000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", proxies, "10.1.2.3:4000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several header lines", proxies, "10.1.2.3:4000", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},
		{"malformed chain: the connection", proxies, "10.1.2.3:4000", []string{"198.51.100.1, bogus"}, "10.1.2.3"},
		{"no header: the connection", proxies, "10.1.2.3:4000", nil, "10.1.2.3"},
		{"IPv4-mapped IPv6 is unmapped", nil, "[::ffff:203.0.113.5]:4000", nil, "203.0.113.5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.RemoteAddr = c.remote
			for _, v := range c.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientIP(c.trusted)(r); got.String() != c.want {
				t.Errorf("ClientIP = %s, want %s", got, c.want)
			}
		})
	}
}

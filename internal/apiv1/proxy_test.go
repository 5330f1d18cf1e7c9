package apiv1_test

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestIPWhitelistBehindTrustedProxy: with the test client (127.0.0.1) as a
// trusted load balancer, the faucet's IP whitelist judges the address the
// balancer reports in X-Forwarded-For, not the balancer's own (D31).
func TestIPWhitelistBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{
		Handler: app.HandlerOptions{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
	})
	f, key := env.Faucet(t, map[string]int64{"BTC": 100})
	ips, err := faucet.ParseIPList("198.51.100.0/24")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := env.App.Faucets.SetIPWhitelist(context.Background(), f.ID, ips); err != nil {
		t.Fatal(err)
	}
	body := url.Values{"api_key": {key}, "currency": {"BTC"}}.Encode()
	cases := []struct {
		name string
		xff  string
		want int
	}{
		{"whitelisted client behind the proxy", "198.51.100.7", 200},
		{"other client behind the proxy", "203.0.113.7", 401},
		{"forged whitelisted entry left of the real client", "198.51.100.7, 203.0.113.7", 401},
		{"no forwarded address: the proxy itself", "", 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := strings.NewReader(body)
			r := env.DoWithHeader(t, "/getbalance", req, map[string]string{
				"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": c.xff,
			})
			if r.Status() != c.want {
				t.Errorf("status %d, want %d: %s", r.Status(), c.want, r.Raw)
			}
		})
	}
}

package safehttp_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/safehttp"
)

// forbidden is every kind of address a delivery must not reach, with the
// phrase messages use for it.
var forbidden = []struct {
	addr string
	why  string
}{
	{"0.0.0.0", "an unspecified address"},
	{"0.1.2.3", "a reserved address"},
	{"10.0.0.5", "a private address"},
	{"10.255.255.255", "a private address"},
	{"100.64.0.1", "a carrier-grade NAT address"},
	{"100.127.255.254", "a carrier-grade NAT address"},
	{"127.0.0.1", "a loopback address"},
	{"127.255.255.254", "a loopback address"},
	{"169.254.169.254", "the cloud metadata address"},
	{"169.254.1.1", "a link-local address"},
	{"172.16.0.1", "a private address"},
	{"172.31.255.255", "a private address"},
	{"192.0.0.8", "a reserved address"},
	{"192.0.2.1", "a documentation address"},
	{"192.88.99.1", "a reserved address"},
	{"192.168.1.1", "a private address"},
	{"198.18.0.1", "a benchmarking address"},
	{"198.19.255.1", "a benchmarking address"},
	{"198.51.100.7", "a documentation address"},
	{"203.0.113.9", "a documentation address"},
	{"224.0.0.1", "a multicast address"},
	{"239.255.255.250", "a multicast address"},
	{"240.0.0.1", "a reserved address"},
	{"255.255.255.255", "a broadcast address"},
	{"::", "an unspecified address"},
	{"::1", "a loopback address"},
	// IPv4-mapped IPv6.
	{"::ffff:0.0.0.0", "an unspecified address"},
	{"::ffff:127.0.0.1", "a loopback address"},
	{"::ffff:10.0.0.5", "a private address"},
	{"::ffff:172.16.0.1", "a private address"},
	{"::ffff:192.168.1.1", "a private address"},
	{"::ffff:169.254.169.254", "the cloud metadata address"},
	{"::ffff:100.64.0.1", "a carrier-grade NAT address"},
	{"::ffff:255.255.255.255", "a broadcast address"},
	// IPv4-compatible IPv6 (deprecated): what it carries, else reserved.
	{"::127.0.0.1", "a loopback address"},
	{"::10.0.0.5", "a private address"},
	{"::169.254.169.254", "the cloud metadata address"},
	{"::8.8.8.8", "a reserved address"},
	// NAT64 and 6to4 are judged by the IPv4 address they carry.
	{"64:ff9b::10.0.0.5", "a private address"},
	{"64:ff9b::7f00:1", "a loopback address"},
	{"64:ff9b::a9fe:a9fe", "the cloud metadata address"},
	{"64:ff9b:1::1", "a private address"},
	{"2002:a00:5::1", "a private address"},
	{"2002:7f00:1::1", "a loopback address"},
	{"2002:a9fe:a9fe::1", "the cloud metadata address"},
	// Teredo and the rest of 2001::/23.
	{"2001::1", "a reserved address"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "a reserved address"},
	{"2001:2::1", "a benchmarking address"},
	{"100::1", "a reserved address"},
	{"fc00::1", "a private address"},
	{"fd12:3456::1", "a private address"},
	{"fd00:ec2::254", "the cloud metadata address"},
	{"fec0::1", "a private address"},
	{"fe80::1", "a link-local address"},
	{"fe80::1%eth0", "a link-local address"},
	{"ff02::1", "a multicast address"},
	{"2001:db8::1", "a documentation address"},
	{"3fff::1", "a documentation address"},
	{"5f00::1", "a reserved address"},
	{"4000::1", "a reserved address"}, // outside global unicast 2000::/3
}

// publicAddrs are reachable on the internet, several just outside a
// forbidden range.
var publicAddrs = []string{
	"8.8.8.8", "1.1.1.1", "93.184.215.14",
	"9.255.255.255", "11.0.0.0",
	"100.63.255.255", "100.128.0.0",
	"126.255.255.255", "128.0.0.0",
	"169.253.255.255", "169.255.0.0",
	"172.15.255.255", "172.32.0.0",
	"192.0.1.1", "192.0.3.0", "192.167.255.255", "192.169.0.0",
	"198.17.255.255", "198.20.0.0", "223.255.255.255",
	"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	"2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1",
	"2001:200::1", // just above 2001::/23
}

// literal is addr as a URL's host.
func literal(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + strings.Replace(addr, "%", "%25", 1) + "]"
	}
	return addr
}

func TestCheckURLRefusesAddressesThatAreNotPublic(t *testing.T) {
	t.Parallel()
	for _, tc := range forbidden {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			addr := netip.MustParseAddr(tc.addr)
			res := newResolver(map[string][]string{"victim.example.com": {"93.184.215.14", tc.addr}})
			opts := safehttp.Options{Resolver: res, Name: "Webhook URL"}

			err := safehttp.CheckURL(t.Context(), "https://"+literal(tc.addr)+"/hook", opts)
			want := "Webhook URL points to " + tc.why + " (" + addr.String() + ")."
			if got := appError(t, err).Message; got != want {
				t.Errorf("literal: message %q, want %q", got, want)
			}

			err = safehttp.CheckURL(t.Context(), "https://victim.example.com/hook", opts)
			want = "Webhook URL resolves to " + tc.why + " (" + addr.Unmap().String() + ")."
			if got := appError(t, err).Message; got != want {
				t.Errorf("resolved: message %q, want %q", got, want)
			}
		})
	}
}

func TestCheckURLAdmitsPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, a := range publicAddrs {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			res := newResolver(map[string][]string{"hooks.example.com": {"8.8.4.4", a}})
			opts := safehttp.Options{Resolver: res}
			if err := safehttp.CheckURL(t.Context(), "https://"+literal(a)+":8443/hook", opts); err != nil {
				t.Errorf("literal: %v", err)
			}
			if err := safehttp.CheckURL(t.Context(), "https://hooks.example.com/hook", opts); err != nil {
				t.Errorf("resolved: %v", err)
			}
		})
	}
}

func TestCheckURLShape(t *testing.T) {
	t.Parallel()
	long := "https://hooks.example.com/" + strings.Repeat("a", safehttp.MaxURLLen-len("https://hooks.example.com/"))
	tests := []struct {
		name string
		raw  string
		want string // the message; empty when the URL is admitted
	}{
		{"https with a path", "https://hooks.example.com/drip", ""},
		{"a port and a query", "https://hooks.example.com:8443/drip?faucet=1", ""},
		{"upper-case scheme", "HTTPS://Hooks.Example.COM/drip", ""},
		{"a trailing dot", "https://hooks.example.com./drip", ""},
		{"an xn-- name", "https://xn--bcher-kva.example/drip", ""},
		{"exactly the longest", long, ""},
		{"http", "http://hooks.example.com/drip", "URL must use https."},
		{"ftp", "ftp://hooks.example.com/drip", "URL must use https."},
		{"no scheme", "hooks.example.com/drip", "URL must use https."},
		{"empty", "", "URL is required."},
		{"one byte too long", long + "a", "URL is longer than 2048 characters."},
		{"opaque", "https:hooks.example.com", "URL must be absolute, like https://example.com/hook."},
		{"no host", "https:///drip", "URL must be absolute, like https://example.com/hook."},
		{"user and password", "https://user:pw@hooks.example.com/", "URL must not contain a user name or password."},
		{"user", "https://user@hooks.example.com/", "URL must not contain a user name or password."},
		{"fragment", "https://hooks.example.com/drip#x", "URL must not contain a fragment (#)."},
		{"empty fragment", "https://hooks.example.com/drip#", "URL must not contain a fragment (#)."},
		{"port 0", "https://hooks.example.com:0/", "URL has port 0; a port is 1 to 65535."},
		{"port 65536", "https://hooks.example.com:65536/", "URL has port 65536; a port is 1 to 65535."},
		{"empty port", "https://hooks.example.com:/", "URL has an empty port."},
		{"leading space", " https://hooks.example.com/", "URL is not a valid URL."},
		{"newline", "https://hooks.example.com/\n", "URL is not a valid URL."},
		{"unclosed bracket", "https://[::1/", "URL is not a valid URL."},
		{"decimal IPv4", "https://2130706433/", `URL host "2130706433" is not a valid host name (international names are written in their xn-- form).`},
		{"short IPv4", "https://127.1/", `URL host "127.1" is not a valid host name (international names are written in their xn-- form).`},
		{"hex IPv4", "https://0x7f000001/", `URL host "0x7f000001" is not a valid host name (international names are written in their xn-- form).`},
		{"hex and dots", "https://0x7f.0.0.1/", `URL host "0x7f.0.0.1" is not a valid host name (international names are written in their xn-- form).`},
		{"underscore", "https://hooks_1.example.com/", `URL host "hooks_1.example.com" is not a valid host name (international names are written in their xn-- form).`},
		{"unicode", "https://bücher.example/", `URL host "bücher.example" is not a valid host name (international names are written in their xn-- form).`},
		{"unknown name", "https://nowhere.example.com/", "URL host nowhere.example.com could not be resolved."},
		{"no answer", "https://empty.example.com/", "URL host empty.example.com could not be resolved."},
		{"localhost", "https://localhost/", "URL resolves to a loopback address (127.0.0.1)."},
	}
	res := newResolver(map[string][]string{
		"hooks.example.com":     {"93.184.215.14"},
		"hooks.example.com.":    {"93.184.215.14"},
		"xn--bcher-kva.example": {"2606:4700:4700::1111"},
		"localhost":             {"127.0.0.1", "::1"},
	})
	res.answers["empty.example.com"] = [][]netip.Addr{nil}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := safehttp.CheckURL(t.Context(), tc.raw, safehttp.Options{Resolver: res})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := appError(t, err).Message; got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCheckURLAsksTheResolverForTheHostAlone(t *testing.T) {
	t.Parallel()
	res := newResolver(map[string][]string{"hooks.example.com": {"93.184.215.14"}})
	if err := safehttp.CheckURL(t.Context(), "https://hooks.example.com:8443/a?b=c", safehttp.Options{Resolver: res}); err != nil {
		t.Fatal(err)
	}
	if err := safehttp.CheckURL(t.Context(), "https://[2606:4700:4700::1111]/", safehttp.Options{Resolver: res}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ip hooks.example.com"}, res.lookups()); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}
}

func TestCheckURLDevelopmentAdmitsHTTPAndLoopbackOnly(t *testing.T) {
	t.Parallel()
	res := newResolver(map[string][]string{
		"localhost":         {"127.0.0.1", "::1"},
		"intra.example.com": {"127.0.0.1", "10.1.2.3"},
	})
	dev := safehttp.Options{Resolver: res, AllowInsecure: true}
	prod := safehttp.Options{Resolver: res}
	tests := []struct {
		raw       string
		dev, prod string // messages; empty when admitted
	}{
		{"http://127.0.0.1:8080/hook", "", "URL must use https."},
		{"https://127.0.0.1:8443/hook", "", "URL points to a loopback address (127.0.0.1)."},
		{"http://[::1]:8080/hook", "", "URL must use https."},
		{"https://[::ffff:127.0.0.1]/hook", "", "URL points to a loopback address (::ffff:127.0.0.1)."},
		{"https://localhost/hook", "", "URL resolves to a loopback address (127.0.0.1)."},
		{"http://10.0.0.5/hook", "URL points to a private address (10.0.0.5).", "URL must use https."},
		{"https://169.254.169.254/latest", "URL points to the cloud metadata address (169.254.169.254).", "URL points to the cloud metadata address (169.254.169.254)."},
		{"https://0.0.0.0/hook", "URL points to an unspecified address (0.0.0.0).", "URL points to an unspecified address (0.0.0.0)."},
		{"https://intra.example.com/hook", "URL resolves to a private address (10.1.2.3).", "URL resolves to a loopback address (127.0.0.1)."},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []struct {
				name string
				opts safehttp.Options
				want string
			}{{"development", dev, tc.dev}, {"production", prod, tc.prod}} {
				err := safehttp.CheckURL(t.Context(), tc.raw, mode.opts)
				if mode.want == "" {
					if err != nil {
						t.Errorf("%s: refused: %v", mode.name, err)
					}
					continue
				}
				if got := appError(t, err).Message; got != mode.want {
					t.Errorf("%s: message %q, want %q", mode.name, got, mode.want)
				}
			}
		})
	}
}

// AllowHTTP (merchant callbacks) admits http on public addresses and
// nothing else: every address rule of D53 stays.
func TestCheckURLAllowHTTPKeepsTheAddressRules(t *testing.T) {
	t.Parallel()
	res := newResolver(map[string][]string{
		"shop.example.com":  {"93.184.216.34"},
		"intra.example.com": {"10.1.2.3"},
	})
	opts := safehttp.Options{Resolver: res, AllowHTTP: true}
	for raw, want := range map[string]string{
		"http://shop.example.com/ipn":     "",
		"https://shop.example.com/ipn":    "",
		"http://93.184.216.34:8080/ipn":   "",
		"http://127.0.0.1/ipn":            "URL points to a loopback address (127.0.0.1).",
		"http://intra.example.com/ipn":    "URL resolves to a private address (10.1.2.3).",
		"http://169.254.169.254/latest":   "URL points to the cloud metadata address (169.254.169.254).",
		"javascript:alert(1)":             "URL must be an http or https URL.",
		"ftp://shop.example.com/ipn":      "URL must be an http or https URL.",
		"http://user:pw@shop.example.com": "URL must not contain a user name or password.",
	} {
		err := safehttp.CheckURL(t.Context(), raw, opts)
		if want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", raw, err)
			}
			continue
		}
		if got := appError(t, err).Message; got != want {
			t.Errorf("%s: message %q, want %q", raw, got, want)
		}
	}
}

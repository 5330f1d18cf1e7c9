package operation

import (
	"context"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The manage-scope operations (spec 4.2): the faucet's settings, send
// limits, IP whitelist, low-balance alert and anti-fraud rules. The changes
// that weaken a protection carry a warning (warning.go).

// UpdateFaucetParams are the faucet's settings (spec 2.7, D38): the first
// five are required, the lists are left as they are when absent.
type UpdateFaucetParams struct {
	Name               *string   `json:"faucet_name" jsonschema:"faucet name, 1 to 64 characters"`
	Domain             *string   `json:"faucet_domain" jsonschema:"the faucet site's host name (faucet.example.com)"`
	URL                *string   `json:"faucet_url" jsonschema:"the faucet site's http or https URL, on faucet_domain"`
	Description        *string   `json:"faucet_description" jsonschema:"public description, at most 1000 characters; may be empty"`
	TimerMinutes       *int      `json:"timer_minutes" jsonschema:"minutes a visitor waits between claims, 1 to 1440"`
	CurrenciesSelected *[]string `json:"currencies_selected,omitempty" jsonschema:"coins the faucet pays in (active coin symbols, see get_currencies); absent: unchanged"`
	CategoriesSelected *[]string `json:"categories_selected,omitempty" jsonschema:"categories of the faucet list; absent: unchanged"`
}

func (p UpdateFaucetParams) validate() error {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"faucet_name", p.Name == nil}, {"faucet_domain", p.Domain == nil}, {"faucet_url", p.URL == nil},
		{"faucet_description", p.Description == nil}, {"timer_minutes", p.TimerMinutes == nil},
	} {
		if f.missing {
			return drip.Errorf(drip.CodeInvalid, "Missing %s: faucet_name, faucet_domain, faucet_url, faucet_description and timer_minutes are required.", f.name)
		}
	}
	return checkSite(*p.Name, *p.Domain, *p.URL)
}

func (UpdateFaucetParams) refine(s *jsonschema.Schema) {
	p := s.Properties
	siteSchema(p)
	p["faucet_description"].MaxLength = new(1000)
	textSchema(p["faucet_description"])
	p["timer_minutes"].Minimum, p["timer_minutes"].Maximum = new(1.0), new(1440.0)
	coinSchema(p["currencies_selected"].Items)
	p["categories_selected"].Items.Enum = enum(drip.Categories)
}

// updateFaucet sets the faucet's settings and answers its record.
func (r *runner) updateFaucet(ctx context.Context, c *payout.Caller, p UpdateFaucetParams) (reply.Faucet, string, error) {
	f, err := r.Faucets.UpdateSettings(ctx, c.Faucet.ID, faucet.SettingsChange{
		Name: *p.Name, Domain: *p.Domain, URL: *p.URL, Description: *p.Description, TimerMinutes: *p.TimerMinutes,
		Currencies: p.CurrenciesSelected, Categories: p.CategoriesSelected,
	})
	if err != nil {
		return reply.Faucet{}, "", err
	}
	rec, err := r.readFaucet(ctx, f)
	return rec, "Faucet settings updated.", err
}

// SetRateLimitsParams are the owner's new send limits (D41).
type SetRateLimitsParams struct {
	RateLimits *[]faucet.LimitInput `json:"ratelimits" jsonschema:"the new send limits, replacing the old; each needs max_count or max_amount; empty removes every limit"`
}

func (p SetRateLimitsParams) validate() error {
	if p.RateLimits == nil {
		return drip.Errorf(drip.CodeInvalid, "Missing ratelimits: a list, empty to remove every limit.")
	}
	return nil
}

func (SetRateLimitsParams) refine(s *jsonschema.Schema) {
	list := s.Properties["ratelimits"]
	list.MaxItems = new(maxLimits)
	item := list.Items
	p := item.Properties
	optionalCoinSchema(p["currency"]) // "": every coin, as absent
	p["per"].Enum = enum([]string{string(drip.PerFaucet), string(drip.PerRecipient), string(drip.PerIP)})
	p["window_seconds"].Minimum, p["window_seconds"].Maximum = new(1.0), new(float64(maxWindowSecs))
	// 0 (or absent) is "no maximum" for one of the two, so long as the
	// other is positive (faucet.validateLimit).
	p["max_count"].Minimum, p["max_amount"].Minimum = new(0.0), new(0.0)
	positive := func(name string) *jsonschema.Schema {
		return &jsonschema.Schema{Required: []string{name},
			Properties: map[string]*jsonschema.Schema{name: {Type: "integer", Minimum: new(1.0)}}}
	}
	item.AnyOf = []*jsonschema.Schema{positive("max_count"), positive("max_amount")}
}

// RateLimitsChanged are the limits after a change, and its warning.
type RateLimitsChanged struct {
	rateLimits
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

// Warned is what the change weakened, or "".
func (c RateLimitsChanged) Warned() string { return c.Warning }

// Record is the record without the warning, as v2 answers it: the
// specification gives the warning to the tool server (spec 4.3).
func (c RateLimitsChanged) Record() any { return c.rateLimits }

// rateLimits is reply.RateLimits under a name other than its field
// RateLimits, which embedding it as such would hide from JSON.
type rateLimits = reply.RateLimits

// setRateLimits replaces the owner's send limits.
func (r *runner) setRateLimits(ctx context.Context, c *payout.Caller, p SetRateLimitsParams) (RateLimitsChanged, string, error) {
	before, f, err := r.Faucets.SetLimits(ctx, c.Faucet.ID, faucet.Limits(*p.RateLimits))
	if err != nil {
		return RateLimitsChanged{}, "", err
	}
	return RateLimitsChanged{rateLimits: reply.NewRateLimits(r.Rate, c.RateRemaining, f.Limits), Warning: limitsWarning(before.Limits, f.Limits)},
		"Rate limits updated.", nil
}

// ipWhitelist reads the faucet's IP whitelist.
func (r *runner) ipWhitelist(_ context.Context, c *payout.Caller, _ NoParams) (reply.IPWhitelist, string, error) {
	return reply.NewIPWhitelist(c.Faucet), ok, nil
}

// SetIPWhitelistParams are the faucet's new IP whitelist.
type SetIPWhitelistParams struct {
	IPWhitelist *[]string `json:"ip_whitelist" jsonschema:"the new whitelist: IP addresses (203.0.113.7) or CIDRs (203.0.113.0/24); empty admits any IP"`
}

func (p SetIPWhitelistParams) validate() error {
	if p.IPWhitelist == nil {
		return drip.Errorf(drip.CodeInvalid, "Missing ip_whitelist: a list of addresses or CIDRs, empty to admit any IP.")
	}
	for _, e := range *p.IPWhitelist {
		if !ipRE.MatchString(e) {
			return drip.Errorf(drip.CodeInvalid, "Invalid IP address or CIDR %q: an IPv4 or IPv6 address or CIDR, without a zone or leading zeros.", e)
		}
	}
	return nil
}

func (SetIPWhitelistParams) refine(s *jsonschema.Schema) {
	list := s.Properties["ip_whitelist"]
	list.MaxItems = new(maxIPEntries)
	list.Items.MinLength, list.Items.MaxLength = new(1), new(49) // the longest IPv6 CIDR
	list.Items.Pattern = ipPattern
}

// IPWhitelistChanged is the IP whitelist after a change, and its warning.
type IPWhitelistChanged struct {
	reply.IPWhitelist
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

// Warned is what the change weakened, or "".
func (c IPWhitelistChanged) Warned() string { return c.Warning }

// Record is the record without the warning, as v2 answers it: the
// specification gives the warning to the tool server (spec 4.3).
func (c IPWhitelistChanged) Record() any { return c.IPWhitelist }

// setIPWhitelist replaces the faucet's IP whitelist: addresses or CIDRs;
// an empty list admits any IP.
func (r *runner) setIPWhitelist(ctx context.Context, c *payout.Caller, p SetIPWhitelistParams) (IPWhitelistChanged, string, error) {
	ips, err := faucet.ParseIPs(*p.IPWhitelist)
	if err != nil {
		return IPWhitelistChanged{}, "", err
	}
	before, f, err := r.Faucets.SetIPWhitelist(ctx, c.Faucet.ID, ips)
	if err != nil {
		return IPWhitelistChanged{}, "", err
	}
	return IPWhitelistChanged{IPWhitelist: reply.NewIPWhitelist(f), Warning: ipWhitelistWarning(before.IPWhitelist, f.IPWhitelist)},
		"IP whitelist updated.", nil
}

// ToggleLowBalanceParams turn the low-balance alert on or off and set
// thresholds.
type ToggleLowBalanceParams struct {
	Enabled    *bool             `json:"enabled,omitempty" jsonschema:"true turns the alert on, false off; absent flips it"`
	Thresholds map[string]*int64 `json:"thresholds,omitempty" jsonschema:"coin symbol -> threshold in smallest units; 0 removes a coin's threshold"`
}

func (p ToggleLowBalanceParams) validate() error {
	for coin, t := range p.Thresholds {
		if t == nil { // a JSON null, which the schema refuses
			return drip.Errorf(drip.CodeInvalid, "Invalid threshold for %s: a whole number of smallest units, 0 to remove it.", coin)
		}
	}
	return nil
}

// thresholds are the thresholds validate checked.
func (p ToggleLowBalanceParams) thresholds() map[string]int64 {
	if p.Thresholds == nil {
		return nil
	}
	out := make(map[string]int64, len(p.Thresholds))
	for coin, t := range p.Thresholds {
		out[coin] = *t
	}
	return out
}

func (ToggleLowBalanceParams) refine(s *jsonschema.Schema) {
	t := s.Properties["thresholds"]
	t.AdditionalProperties.Minimum = new(0.0)
	t.PropertyNames = &jsonschema.Schema{}
	coinSchema(t.PropertyNames)
}

// toggleLowBalance flips the low-balance alert, or sets it as enabled
// says; thresholds (0 removes one) may come with it.
func (r *runner) toggleLowBalance(ctx context.Context, c *payout.Caller, p ToggleLowBalanceParams) (reply.LowBalanceNotification, string, error) {
	f, err := r.Faucets.SetLowBalance(ctx, c.Faucet.ID, faucet.LowBalanceChange{Enabled: p.Enabled, Thresholds: p.thresholds()})
	if err != nil {
		return reply.LowBalanceNotification{}, "", err
	}
	rec, err := r.lowBalanceRecord(ctx, f)
	msg := "Low-balance notification disabled."
	if f.LowBalance.Enabled {
		msg = "Low-balance notification enabled."
	}
	return rec, msg, err
}

// antiFraudRules reads the anti-fraud rules.
func (r *runner) antiFraudRules(_ context.Context, c *payout.Caller, _ NoParams) (reply.Rules, string, error) {
	return reply.NewRules(c.Faucet.Rules), ok, nil
}

// RulesChanged are the anti-fraud rules after a change, and its warning.
type RulesChanged struct {
	reply.Rules
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

// Warned is what the change weakened, or "".
func (c RulesChanged) Warned() string { return c.Warning }

// Record is the record without the warning, as v2 answers it: the
// specification gives the warning to the tool server (spec 4.3).
func (c RulesChanged) Record() any { return c.Rules }

func newRulesChanged(before, after drip.Rules) RulesChanged {
	return RulesChanged{Rules: reply.NewRules(after), Warning: rulesWarning(before, after)}
}

// ToggleAntiFraudParams turn the rank checks on or off.
type ToggleAntiFraudParams struct {
	Enabled *bool `json:"enabled,omitempty" jsonschema:"true turns the rank checks on, false off; absent flips them"`
}

// toggleAntiFraud flips the rank checks, or sets them as enabled says. The
// blacklist applies either way (D42).
func (r *runner) toggleAntiFraud(ctx context.Context, c *payout.Caller, p ToggleAntiFraudParams) (RulesChanged, string, error) {
	before, f, err := r.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{AntiFraud: p.Enabled, ToggleAntiFraud: true})
	if err != nil {
		return RulesChanged{}, "", err
	}
	msg := "Anti-fraud rank checks disabled; the blacklist still applies."
	if f.Rules.AntiFraud {
		msg = "Anti-fraud rank checks enabled."
	}
	return newRulesChanged(before.Rules, f.Rules), msg, nil
}

// UpdateRulesParams set the ranks and lists (D42): trust_rank is required,
// the others are left as they are when absent.
type UpdateRulesParams struct {
	TrustRank    *int      `json:"trust_rank" jsonschema:"minimum rank (0-100) a recipient needs to be paid"`
	NegativeRank *int      `json:"negative_rank,omitempty" jsonschema:"highest negative rank (0-100) tolerated; absent: unchanged"`
	Whitelist    *[]string `json:"whitelist,omitempty" jsonschema:"the new whitelist, replacing the old: usernames, emails, addresses, payout_user_hashes, IPs or CIDRs; absent: unchanged"`
	Blacklist    *[]string `json:"blacklist,omitempty" jsonschema:"the new blacklist, replacing the old (same forms); absent: unchanged"`
}

func (p UpdateRulesParams) validate() error {
	if p.TrustRank == nil {
		return drip.Errorf(drip.CodeInvalid, "Missing trust_rank: a whole number from 0 to 100.")
	}
	for _, list := range []*[]string{p.Whitelist, p.Blacklist} {
		if list == nil {
			continue
		}
		for _, e := range *list {
			if !NonBlank(e) || utf8.RuneCountInString(e) > maxListEntry {
				return drip.Errorf(drip.CodeInvalid, "Invalid list entry %q.", e)
			}
		}
	}
	return nil
}

func (UpdateRulesParams) refine(s *jsonschema.Schema) {
	for _, rank := range []string{"trust_rank", "negative_rank"} {
		s.Properties[rank].Minimum, s.Properties[rank].Maximum = new(0.0), new(100.0)
	}
	for _, list := range []string{"whitelist", "blacklist"} {
		s.Properties[list].MaxItems = new(maxRuleList)
		nonBlankSchema(s.Properties[list].Items, maxListEntry) // trimmed, an entry must keep a character
	}
}

// updateAntiFraudRules sets the ranks and lists.
func (r *runner) updateAntiFraudRules(ctx context.Context, c *payout.Caller, p UpdateRulesParams) (RulesChanged, string, error) {
	before, f, err := r.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{
		TrustRank: p.TrustRank, NegativeRank: p.NegativeRank, Whitelist: p.Whitelist, Blacklist: p.Blacklist,
	})
	if err != nil {
		return RulesChanged{}, "", err
	}
	return newRulesChanged(before.Rules, f.Rules), "Anti-fraud rules updated.", nil
}

package mcpserver

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The manage tools (spec 4.3): what a manage key may call besides the read
// tools. Each answers as the v2 manage path of the same name does (spec
// 4.2); the calls that weaken a protection also carry a warning
// (warning.go), and every call is recorded in the audit log.

// manageTools are the manage tools, in the order of spec 4.3.
func (h *Handler) manageTools() []tool {
	return []tool{
		newTool(h, spec[noArgs, reply.IPWhitelist]{
			name: "get_ip_whitelist", title: "IP whitelist", manage: true,
			description: "Read the faucet's IP whitelist: the addresses and CIDRs its keys (this one included) may be used " +
				"from. An empty list admits any IP.",
			annotations: manageAnnotations("IP whitelist", true, false, true),
			run: func(_ context.Context, c *payout.Caller, _ noArgs) (reply.IPWhitelist, string, error) {
				return reply.NewIPWhitelist(c.Faucet), "OK", nil
			},
		}),
		newTool(h, spec[setIPWhitelistArgs, ipWhitelistResult]{
			name: "set_ip_whitelist", title: "Replace the IP whitelist", manage: true,
			description: "Replace the faucet's IP whitelist with the given addresses and CIDRs (at most 100); its keys, this " +
				"one included, are then refused from any other IP, so keep the address this assistant calls from. " +
				"An empty list admits any IP and removes the protection, and 0.0.0.0/0 or ::/0 admit any IPv4 or IPv6 address: the " +
				"result then carries a warning. " +
				"Read the current list with get_ip_whitelist first and send the whole new list.",
			annotations: manageAnnotations("Replace the IP whitelist", false, true, true),
			refine:      func(in *jsonschema.Schema) { in.Properties["ip_whitelist"].MaxItems = new(100) },
			run:         h.setIPWhitelist,
		}),
		newTool(h, spec[noArgs, reply.Rules]{
			name: "get_anti_fraud", title: "Anti-fraud rules", manage: true,
			description: "Read the anti-fraud rules: whether rank checks are on, the minimum trust_rank and maximum " +
				"negative_rank a recipient may have, and the whitelist (skips rank checks) and blacklist (never paid).",
			annotations: manageAnnotations("Anti-fraud rules", true, false, true),
			run: func(_ context.Context, c *payout.Caller, _ noArgs) (reply.Rules, string, error) {
				return reply.NewRules(c.Faucet.Rules), "OK", nil
			},
		}),
		newTool(h, spec[toggleAntiFraudArgs, rulesResult]{
			name: "toggle_anti_fraud", title: "Turn anti-fraud checks on or off", manage: true,
			description: "Turn the anti-fraud rank checks on (enabled: true) or off (enabled: false); without enabled, flip " +
				"them. The blacklist applies either way. Turning them off lets recipients of any rank be paid: the result " +
				"then carries a warning. Prefer giving enabled, so that a repeated call changes nothing.",
			annotations: manageAnnotations("Turn anti-fraud checks on or off", false, true, false),
			run:         h.toggleAntiFraud,
		}),
		newTool(h, spec[updateRulesArgs, rulesResult]{
			name: "update_anti_fraud_rules", title: "Update anti-fraud rules", manage: true,
			description: "Set the anti-fraud ranks and lists. trust_rank (0-100, the minimum a recipient needs) is required; " +
				"negative_rank, whitelist and blacklist are left as they are when absent, and a list given replaces the " +
				"old one whole (read it with get_anti_fraud first). Lowering trust_rank, raising negative_rank, adding " +
				"whitelist entries or removing blacklist entries weakens the checks: the result then carries a warning.",
			annotations: manageAnnotations("Update anti-fraud rules", false, true, true),
			refine: func(in *jsonschema.Schema) {
				for _, rank := range []string{"trust_rank", "negative_rank"} {
					in.Properties[rank].Minimum, in.Properties[rank].Maximum = new(0.0), new(100.0)
				}
				for _, list := range []string{"whitelist", "blacklist"} {
					in.Properties[list].MaxItems = new(1000)
					in.Properties[list].Items.MinLength, in.Properties[list].Items.MaxLength = new(1), new(320)
				}
			},
			run: h.updateAntiFraudRules,
		}),
		newTool(h, spec[updateFaucetArgs, reply.Faucet]{
			name: "update_faucet_settings", title: "Update faucet settings", manage: true,
			description: "Set the faucet's public settings. faucet_name, faucet_domain, faucet_url (http or https, on that " +
				"domain), faucet_description (may be empty) and timer_minutes are required, so read them with get_faucet " +
				"and send back those you keep; currencies_selected and categories_selected replace the lists when given " +
				"and are left as they are when absent. Returns the updated faucet.",
			annotations: manageAnnotations("Update faucet settings", false, true, true),
			refine: func(in *jsonschema.Schema) {
				p := in.Properties
				p["faucet_name"].MinLength, p["faucet_name"].MaxLength = new(1), new(64)
				p["faucet_description"].MaxLength = new(1000)
				p["timer_minutes"].Minimum, p["timer_minutes"].Maximum = new(1.0), new(1440.0)
				p["categories_selected"].Items.Enum = anyList(drip.Categories)
			},
			run: h.updateFaucetSettings,
		}),
		newTool(h, spec[setRateLimitsArgs, rateLimitsResult]{
			name: "set_ratelimits", title: "Replace the send limits", manage: true,
			description: "Replace the owner's send limits (at most 50) with the given list; an empty list removes every limit. " +
				"Each limit counts payouts (max_count) and/or smallest units paid (max_amount) per faucet, per recipient " +
				"or per claimer IP within window_seconds, in one coin or (currency absent) all coins. Read the current " +
				"limits with get_ratelimits first and send the whole new list. A list with fewer limits than before removes " +
				"protection: the result then carries a warning.",
			annotations: manageAnnotations("Replace the send limits", false, true, true),
			refine: func(in *jsonschema.Schema) {
				in.Properties["ratelimits"].MaxItems = new(50)
				p := in.Properties["ratelimits"].Items.Properties
				p["per"].Enum = anyList([]string{string(drip.PerFaucet), string(drip.PerRecipient), string(drip.PerIP)})
				p["window_seconds"].Minimum, p["window_seconds"].Maximum = new(1.0), new(float64(366*24*3600))
				p["max_count"].Minimum, p["max_amount"].Minimum = new(1.0), new(1.0)
			},
			run: h.setRateLimits,
		}),
		newTool(h, spec[toggleLowBalanceArgs, reply.LowBalanceNotification]{
			name: "toggle_low_balance_notification", title: "Turn the low-balance alert on or off", manage: true,
			description: "Turn the low-balance email alert on (enabled: true) or off (enabled: false); without enabled, flip " +
				"it. thresholds (coin symbol -> smallest units) set those coins' thresholds, 0 removing one; other coins " +
				"keep theirs. The owner is emailed once each time a payout takes a coin's balance below its threshold.",
			annotations: manageAnnotations("Turn the low-balance alert on or off", false, true, false),
			refine:      func(in *jsonschema.Schema) { in.Properties["thresholds"].AdditionalProperties.Minimum = new(0.0) },
			run:         h.toggleLowBalance,
		}),
	}
}

func anyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// ipWhitelistResult is the IP whitelist after a change, and its warning.
type ipWhitelistResult struct {
	reply.IPWhitelist
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

func (d ipWhitelistResult) warningText() string { return d.Warning }

type setIPWhitelistArgs struct {
	IPWhitelist []string `json:"ip_whitelist" jsonschema:"the new whitelist: IP addresses (203.0.113.7) or CIDRs (203.0.113.0/24); empty admits any IP"`
}

func (h *Handler) setIPWhitelist(ctx context.Context, c *payout.Caller, in setIPWhitelistArgs) (ipWhitelistResult, string, error) {
	ips, err := faucet.ParseIPs(in.IPWhitelist)
	if err != nil {
		return ipWhitelistResult{}, "", err
	}
	before, f, err := h.Faucets.SetIPWhitelist(ctx, c.Faucet.ID, ips)
	if err != nil {
		return ipWhitelistResult{}, "", err
	}
	return ipWhitelistResult{IPWhitelist: reply.NewIPWhitelist(f), Warning: ipWhitelistWarning(before.IPWhitelist, f.IPWhitelist)},
		"IP whitelist updated.", nil
}

// rulesResult is the anti-fraud rules after a change, and its warning.
type rulesResult struct {
	reply.Rules
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

func (r rulesResult) warningText() string { return r.Warning }

func newRulesResult(before, after drip.Rules) rulesResult {
	return rulesResult{Rules: reply.NewRules(after), Warning: rulesWarning(before, after)}
}

type toggleAntiFraudArgs struct {
	Enabled *bool `json:"enabled,omitempty" jsonschema:"true turns the rank checks on, false off; absent flips them"`
}

func (h *Handler) toggleAntiFraud(ctx context.Context, c *payout.Caller, in toggleAntiFraudArgs) (rulesResult, string, error) {
	before, f, err := h.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{AntiFraud: in.Enabled, ToggleAntiFraud: true})
	if err != nil {
		return rulesResult{}, "", err
	}
	msg := "Anti-fraud rank checks disabled; the blacklist still applies."
	if f.Rules.AntiFraud {
		msg = "Anti-fraud rank checks enabled."
	}
	return newRulesResult(before.Rules, f.Rules), msg, nil
}

type updateRulesArgs struct {
	TrustRank    int       `json:"trust_rank" jsonschema:"minimum rank (0-100) a recipient needs to be paid"`
	NegativeRank *int      `json:"negative_rank,omitempty" jsonschema:"highest negative rank (0-100) tolerated; absent: unchanged"`
	Whitelist    *[]string `json:"whitelist,omitempty" jsonschema:"the new whitelist, replacing the old: usernames, emails, addresses, payout_user_hashes, IPs or CIDRs; absent: unchanged"`
	Blacklist    *[]string `json:"blacklist,omitempty" jsonschema:"the new blacklist, replacing the old (same forms); absent: unchanged"`
}

func (h *Handler) updateAntiFraudRules(ctx context.Context, c *payout.Caller, in updateRulesArgs) (rulesResult, string, error) {
	before, f, err := h.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{
		TrustRank: &in.TrustRank, NegativeRank: in.NegativeRank, Whitelist: in.Whitelist, Blacklist: in.Blacklist,
	})
	if err != nil {
		return rulesResult{}, "", err
	}
	return newRulesResult(before.Rules, f.Rules), "Anti-fraud rules updated.", nil
}

type updateFaucetArgs struct {
	Name               string    `json:"faucet_name" jsonschema:"faucet name, 1 to 64 characters"`
	Domain             string    `json:"faucet_domain" jsonschema:"the faucet site's host name (faucet.example.com)"`
	URL                string    `json:"faucet_url" jsonschema:"the faucet site's http or https URL, on faucet_domain"`
	Description        string    `json:"faucet_description" jsonschema:"public description, at most 1000 characters; may be empty"`
	TimerMinutes       int       `json:"timer_minutes" jsonschema:"minutes a visitor waits between claims, 1 to 1440"`
	CurrenciesSelected *[]string `json:"currencies_selected,omitempty" jsonschema:"coins the faucet pays in (active coin symbols, see get_currencies); absent: unchanged"`
	CategoriesSelected *[]string `json:"categories_selected,omitempty" jsonschema:"categories of the faucet list; absent: unchanged"`
}

func (h *Handler) updateFaucetSettings(ctx context.Context, c *payout.Caller, in updateFaucetArgs) (reply.Faucet, string, error) {
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return reply.Faucet{}, "", err
	}
	f, err := h.Faucets.UpdateSettings(ctx, c.Faucet.ID, faucet.SettingsChange{
		Name: in.Name, Domain: in.Domain, URL: in.URL, Description: in.Description, TimerMinutes: in.TimerMinutes,
		Currencies: in.CurrenciesSelected, Categories: in.CategoriesSelected,
	}, active)
	if err != nil {
		return reply.Faucet{}, "", err
	}
	rec, err := reply.ReadFaucet(ctx, h.Faucets, h.Listing, f)
	return rec, "Faucet settings updated.", err
}

// rateLimitsResult is the limits after a change, and its warning.
type rateLimitsResult struct {
	rateLimits
	Warning string `json:"warning,omitempty" jsonschema:"present when the call weakened a protection: what it weakened"`
}

// rateLimits is reply.RateLimits under a name other than its field
// RateLimits, which embedding it as such would hide from JSON.
type rateLimits = reply.RateLimits

func (r rateLimitsResult) warningText() string { return r.Warning }

type setRateLimitsArgs struct {
	RateLimits []faucet.LimitInput `json:"ratelimits" jsonschema:"the new send limits, replacing the old; each needs max_count or max_amount; empty removes every limit"`
}

func (h *Handler) setRateLimits(ctx context.Context, c *payout.Caller, in setRateLimitsArgs) (rateLimitsResult, string, error) {
	all, err := h.Coins.List(ctx)
	if err != nil {
		return rateLimitsResult{}, "", err
	}
	before, f, err := h.Faucets.SetLimits(ctx, c.Faucet.ID, faucet.Limits(in.RateLimits), all)
	if err != nil {
		return rateLimitsResult{}, "", err
	}
	return rateLimitsResult{rateLimits: reply.NewRateLimits(h.Rate, c.RateRemaining, f.Limits), Warning: limitsWarning(before.Limits, f.Limits)},
		"Rate limits updated.", nil
}

type toggleLowBalanceArgs struct {
	Enabled    *bool            `json:"enabled,omitempty" jsonschema:"true turns the alert on, false off; absent flips it"`
	Thresholds map[string]int64 `json:"thresholds,omitempty" jsonschema:"coin symbol -> threshold in smallest units; 0 removes a coin's threshold"`
}

func (h *Handler) toggleLowBalance(ctx context.Context, c *payout.Caller, in toggleLowBalanceArgs) (reply.LowBalanceNotification, string, error) {
	all, err := h.Coins.List(ctx)
	if err != nil {
		return reply.LowBalanceNotification{}, "", err
	}
	f, err := h.Faucets.SetLowBalance(ctx, c.Faucet.ID, faucet.LowBalanceChange{Enabled: in.Enabled, Thresholds: in.Thresholds}, all)
	if err != nil {
		return reply.LowBalanceNotification{}, "", err
	}
	data, err := h.lowBalanceData(ctx, f)
	msg := "Low-balance notification disabled."
	if f.LowBalance.Enabled {
		msg = "Low-balance notification enabled."
	}
	return data, msg, err
}

package apiv2

import (
	"context"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The manage-scope operations (spec 4.2): the faucet's settings, send
// limits, IP whitelist, low-balance alert and anti-fraud rules.

type updateFaucetParams struct {
	Name               *string   `json:"faucet_name"`
	Domain             *string   `json:"faucet_domain"`
	URL                *string   `json:"faucet_url"`
	Description        *string   `json:"faucet_description"`
	TimerMinutes       *int      `json:"timer_minutes"`
	CurrenciesSelected *[]string `json:"currencies_selected"`
	CategoriesSelected *[]string `json:"categories_selected"`
}

// updateFaucet sets the faucet's settings (spec 2.7, D38); the first five
// fields are required, the lists optional.
func (h *Handler) updateFaucet(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p updateFaucetParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"faucet_name", p.Name == nil}, {"faucet_domain", p.Domain == nil}, {"faucet_url", p.URL == nil},
		{"faucet_description", p.Description == nil}, {"timer_minutes", p.TimerMinutes == nil},
	} {
		if f.missing {
			return nil, "", drip.Errorf(drip.CodeInvalid, "Missing %s: faucet_name, faucet_domain, faucet_url, faucet_description and timer_minutes are required.", f.name)
		}
	}
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return nil, "", err
	}
	f, err := h.Faucets.UpdateSettings(ctx, c.Faucet.ID, faucet.SettingsChange{
		Name: *p.Name, Domain: *p.Domain, URL: *p.URL, Description: *p.Description, TimerMinutes: *p.TimerMinutes,
		Currencies: p.CurrenciesSelected, Categories: p.CategoriesSelected,
	}, active)
	if err != nil {
		return nil, "", err
	}
	rec, err := reply.ReadFaucet(ctx, h.Faucets, h.Listing, f)
	return rec, "Faucet settings updated.", err
}

type setRateLimitsParams struct {
	RateLimits *[]faucet.LimitInput `json:"ratelimits"`
}

// setRateLimits replaces the owner's send limits (D41).
func (h *Handler) setRateLimits(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p setRateLimitsParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.RateLimits == nil {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing ratelimits: a list, empty to remove every limit.")
	}
	all, err := h.Coins.List(ctx)
	if err != nil {
		return nil, "", err
	}
	_, f, err := h.Faucets.SetLimits(ctx, c.Faucet.ID, faucet.Limits(*p.RateLimits), all)
	if err != nil {
		return nil, "", err
	}
	return reply.NewRateLimits(h.Rate, c.RateRemaining, f.Limits), "Rate limits updated.", nil
}

func (h *Handler) ipWhitelist(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return reply.NewIPWhitelist(c.Faucet), "OK", nil
}

type setIPWhitelistParams struct {
	IPWhitelist *[]string `json:"ip_whitelist"`
}

// setIPWhitelist replaces the faucet's IP whitelist: addresses or CIDRs;
// an empty list admits any IP.
func (h *Handler) setIPWhitelist(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p setIPWhitelistParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.IPWhitelist == nil {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing ip_whitelist: a list of addresses or CIDRs, empty to admit any IP.")
	}
	ips, err := faucet.ParseIPs(*p.IPWhitelist)
	if err != nil {
		return nil, "", err
	}
	_, f, err := h.Faucets.SetIPWhitelist(ctx, c.Faucet.ID, ips)
	if err != nil {
		return nil, "", err
	}
	return reply.NewIPWhitelist(f), "IP whitelist updated.", nil
}

type toggleLowBalanceParams struct {
	Enabled    *bool            `json:"enabled"`
	Thresholds map[string]int64 `json:"thresholds"`
}

// toggleLowBalance flips the low-balance alert, or sets it as enabled
// says; thresholds (coin -> smallest units, 0 removes) may come with it.
func (h *Handler) toggleLowBalance(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p toggleLowBalanceParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	all, err := h.Coins.List(ctx)
	if err != nil {
		return nil, "", err
	}
	f, err := h.Faucets.SetLowBalance(ctx, c.Faucet.ID, faucet.LowBalanceChange{Enabled: p.Enabled, Thresholds: p.Thresholds}, all)
	if err != nil {
		return nil, "", err
	}
	data, _, err := h.lowBalanceData(ctx, f)
	msg := "Low-balance notification disabled."
	if f.LowBalance.Enabled {
		msg = "Low-balance notification enabled."
	}
	return data, msg, err
}

func (h *Handler) antiFraudRules(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return reply.NewRules(c.Faucet.Rules), "OK", nil
}

type toggleAntiFraudParams struct {
	Enabled *bool `json:"enabled"`
}

// toggleAntiFraud flips the rank checks, or sets them as enabled says. The
// blacklist applies either way (D42).
func (h *Handler) toggleAntiFraud(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p toggleAntiFraudParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	_, f, err := h.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{AntiFraud: p.Enabled, ToggleAntiFraud: true})
	if err != nil {
		return nil, "", err
	}
	msg := "Anti-fraud rank checks disabled; the blacklist still applies."
	if f.Rules.AntiFraud {
		msg = "Anti-fraud rank checks enabled."
	}
	return reply.NewRules(f.Rules), msg, nil
}

type updateRulesParams struct {
	TrustRank    *int      `json:"trust_rank"`
	NegativeRank *int      `json:"negative_rank"`
	Whitelist    *[]string `json:"whitelist"`
	Blacklist    *[]string `json:"blacklist"`
}

// updateAntiFraudRules sets the ranks and lists (D42); trust_rank is
// required, the others are left as they are when absent.
func (h *Handler) updateAntiFraudRules(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p updateRulesParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.TrustRank == nil {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing trust_rank: a whole number from 0 to 100.")
	}
	_, f, err := h.Faucets.SetRules(ctx, c.Faucet.ID, faucet.RulesChange{
		TrustRank: p.TrustRank, NegativeRank: p.NegativeRank, Whitelist: p.Whitelist, Blacklist: p.Blacklist,
	})
	if err != nil {
		return nil, "", err
	}
	return reply.NewRules(f.Rules), "Anti-fraud rules updated.", nil
}

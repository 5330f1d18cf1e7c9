package client

import "context"

// The manage-scope paths of v2 (spec 4.2, D38-D43). The two reads are
// retried as the client's RetryPolicy says; the changes are made once
// (a toggle made twice is undone), and an error of a change may come from
// a change that was made: read the setting again before repeating it.

// change is Client.call into a new T, once, nil on error.
func change[T any](ctx context.Context, c *Client, path string, in any) (*T, error) {
	var out T
	if _, err := c.call(ctx, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FaucetSettings are the faucet's settings (spec 2.7). The first five are
// required; a nil list is left as it is, an empty one clears it.
type FaucetSettings struct {
	Name               string   `json:"faucet_name"`
	Domain             string   `json:"faucet_domain"` // faucet.example.com
	URL                string   `json:"faucet_url"`    // an http(s) URL on Domain
	Description        string   `json:"faucet_description"`
	TimerMinutes       int      `json:"timer_minutes"` // 1 to 1440
	CurrenciesSelected []string `json:"currencies_selected,omitzero"`
	CategoriesSelected []string `json:"categories_selected,omitzero"`
}

// UpdateFaucet sets the faucet's settings and answers its record.
func (c *Client) UpdateFaucet(ctx context.Context, s FaucetSettings) (*Faucet, error) {
	return change[Faucet](ctx, c, "/faucet/update", s)
}

// LimitInput is one of the owner's send limits as set (D41): at least one
// of MaxCount and MaxAmount is positive.
type LimitInput struct {
	Currency      string `json:"currency,omitempty"` // "": every coin
	Per           string `json:"per"`                // faucet, recipient or ip
	WindowSeconds int64  `json:"window_seconds"`
	MaxCount      int64  `json:"max_count,omitempty"`  // 0: not limited by count
	MaxAmount     int64  `json:"max_amount,omitempty"` // 0: not limited by amount
}

// SetRateLimits replaces the owner's send limits; none removes them all.
func (c *Client) SetRateLimits(ctx context.Context, limits []LimitInput) (*RateLimits, error) {
	if limits == nil {
		limits = []LimitInput{}
	}
	return change[RateLimits](ctx, c, "/ratelimits/set", struct {
		RateLimits []LimitInput `json:"ratelimits"`
	}{limits})
}

// IPWhitelist is the faucet's IP whitelist: addresses and CIDRs its keys
// may be used from; empty admits any IP.
type IPWhitelist struct {
	IPWhitelist []string `json:"ip_whitelist"`
}

// IPWhitelist reads the faucet's IP whitelist.
func (c *Client) IPWhitelist(ctx context.Context) (*IPWhitelist, error) {
	return read[IPWhitelist](ctx, c, "/ip-whitelist", nil)
}

// SetIPWhitelist replaces the faucet's IP whitelist; none admits any IP.
func (c *Client) SetIPWhitelist(ctx context.Context, entries []string) (*IPWhitelist, error) {
	if entries == nil {
		entries = []string{}
	}
	return change[IPWhitelist](ctx, c, "/ip-whitelist/set", IPWhitelist{entries})
}

// LowBalanceToggle turns the low-balance alert on or off and sets its
// thresholds.
type LowBalanceToggle struct {
	Enabled    *bool            `json:"enabled,omitempty"`    // nil flips the alert
	Thresholds map[string]int64 `json:"thresholds,omitempty"` // coin -> smallest units; 0 removes a coin's
}

// ToggleLowBalanceNotification changes the low-balance alert.
func (c *Client) ToggleLowBalanceNotification(ctx context.Context, t LowBalanceToggle) (*LowBalanceNotification, error) {
	return change[LowBalanceNotification](ctx, c, "/low-balance-notification/toggle", t)
}

// AntiFraudRules reads the anti-fraud rules.
func (c *Client) AntiFraudRules(ctx context.Context) (*AntiFraudRules, error) {
	return read[AntiFraudRules](ctx, c, "/anti-fraud/rules", nil)
}

// ToggleAntiFraud turns the rank checks on or off (nil flips them); the
// blacklist applies either way.
func (c *Client) ToggleAntiFraud(ctx context.Context, enabled *bool) (*AntiFraudRules, error) {
	return change[AntiFraudRules](ctx, c, "/anti-fraud/toggle", struct {
		Enabled *bool `json:"enabled,omitempty"`
	}{enabled})
}

// AntiFraudUpdate sets the ranks and lists (D42): TrustRank always, the
// others when not nil (a list replaces the old one; empty clears it).
type AntiFraudUpdate struct {
	TrustRank    int      `json:"trust_rank"` // 0 to 100
	NegativeRank *int     `json:"negative_rank,omitempty"`
	Whitelist    []string `json:"whitelist,omitzero"`
	Blacklist    []string `json:"blacklist,omitzero"`
}

// UpdateAntiFraudRules sets the anti-fraud ranks and lists.
func (c *Client) UpdateAntiFraudRules(ctx context.Context, u AntiFraudUpdate) (*AntiFraudRules, error) {
	return change[AntiFraudRules](ctx, c, "/anti-fraud/rules/update", u)
}

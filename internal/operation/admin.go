package operation

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The admin-scope operations (spec 4.2): create a faucet and request its
// listing (D44). No operation deletes a faucet.

// CreateFaucetParams are a new faucet's site.
type CreateFaucetParams struct {
	Name   string `json:"faucet_name" jsonschema:"faucet name, 1 to 64 characters"`
	Domain string `json:"faucet_domain" jsonschema:"the faucet site's host name (faucet.example.com)"`
	URL    string `json:"faucet_url" jsonschema:"the faucet site's http or https URL, on faucet_domain"`
}

func (p CreateFaucetParams) validate() error { return checkSite(p.Name, p.Domain, p.URL) }

func (CreateFaucetParams) refine(s *jsonschema.Schema) { siteSchema(s.Properties) }

// siteSchema constrains a faucet's name, domain and URL (D38).
func siteSchema(p map[string]*jsonschema.Schema) {
	nonBlankSchema(p["faucet_name"], 64)
	p["faucet_domain"].Format, p["faucet_domain"].MaxLength, p["faucet_domain"].Pattern = "hostname", new(253), hostnamePattern
	p["faucet_domain"].Examples = []any{"faucet.example.com"}
	p["faucet_url"].Format, p["faucet_url"].Pattern = "uri", urlPattern
	p["faucet_url"].Examples = []any{"https://faucet.example.com/claim"}
}

// checkSite is siteSchema in Go, with the faucet service's messages; the
// service then checks that the URL is on the domain (D38).
func checkSite(name, domain, rawURL string) error {
	if !NonBlank(name) || utf8.RuneCountInString(name) > 64 {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet name: 1-64 characters.")
	}
	if len(domain) > 253 || !hostnameRE.MatchString(domain) {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet domain: a hostname such as faucet.example.com.")
	}
	if !urlRE.MatchString(rawURL) {
		return drip.Errorf(drip.CodeInvalid, "Invalid faucet URL: an http(s) URL on the faucet's domain.")
	}
	return nil
}

// CreatedFaucet is a new faucet's record and its v1 key.
type CreatedFaucet struct {
	Faucet reply.Faucet `json:"faucet" jsonschema:"the new faucet"`
	// APIKey is the new faucet's v1 key, shown this once (D13).
	APIKey string `json:"api_key" jsonschema:"the new faucet's v1 api_key, shown this once"`
}

// createFaucet makes a faucet owned by the key's faucet's owner.
func (r *runner) createFaucet(ctx context.Context, c *payout.Caller, p CreateFaucetParams) (CreatedFaucet, string, error) {
	f, key, err := r.Faucets.Create(ctx, faucet.CreateParams{OwnerID: c.Faucet.OwnerID, Name: p.Name, Domain: p.Domain, URL: p.URL})
	if err != nil {
		return CreatedFaucet{}, "", err
	}
	rec, err := r.readFaucet(ctx, f)
	return CreatedFaucet{Faucet: rec, APIKey: key}, "Faucet created. Its v1 api_key is shown this once.", err
}

// CoinParams name the coin a listing is paid in.
type CoinParams struct {
	Coin string `json:"coin" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
}

func (p CoinParams) validate() error {
	if p.Coin == "" {
		return drip.Errorf(drip.CodeInvalid, "Missing coin.").WithV1Status(410) // v1: no currency
	}
	return nil
}

func (CoinParams) refine(s *jsonschema.Schema) { coinSchema(s.Properties["coin"]) }

// ApprovalCost is what listing the faucet costs in a coin.
type ApprovalCost struct {
	Currency    string         `json:"currency" jsonschema:"coin symbol"`
	Cost        int64          `json:"cost" jsonschema:"the listing cost, in smallest units"`
	CostBitcoin json.Number    `json:"cost_bitcoin" jsonschema:"the same in whole coins"`
	Balance     int64          `json:"balance" jsonschema:"the faucet's balance of the coin, which pays the cost"`
	Listing     *reply.Listing `json:"listing" jsonschema:"the latest listing request, or null"`
}

// approvalCost is what listing the faucet costs in a coin (D44).
func (r *runner) approvalCost(ctx context.Context, c *payout.Caller, p CoinParams) (ApprovalCost, string, error) {
	p.Coin = drip.Symbol(p.Coin)
	cost, err := r.Listing.Cost(ctx, p.Coin)
	if err != nil {
		return ApprovalCost{}, "", err
	}
	balance, err := r.Faucets.Balance(ctx, c.Faucet, p.Coin)
	if err != nil {
		return ApprovalCost{}, "", err
	}
	status, err := r.Listing.Status(ctx, c.Faucet.ID)
	if err != nil {
		return ApprovalCost{}, "", err
	}
	return ApprovalCost{Currency: p.Coin, Cost: cost, CostBitcoin: reply.Coins(cost), Balance: balance,
		Listing: reply.NewListing(status)}, ok, nil
}

// ApprovalRequest is an opened listing request and what it left.
type ApprovalRequest struct {
	Listing reply.Listing `json:"listing" jsonschema:"the listing request, pending the operator's decision"`
	Balance int64         `json:"balance" jsonschema:"the faucet's balance of the coin after the cost"`
}

// requestApproval pays the listing cost from the faucet's balance and
// opens a request the operator approves or rejects (a rejection refunds,
// D44).
func (r *runner) requestApproval(ctx context.Context, c *payout.Caller, p CoinParams) (ApprovalRequest, string, error) {
	req, err := r.Listing.Request(ctx, c.Faucet, p.Coin)
	if err != nil {
		return ApprovalRequest{}, "", err
	}
	balance, err := r.Faucets.Balance(ctx, c.Faucet, p.Coin)
	if err != nil {
		return ApprovalRequest{}, "", err
	}
	return ApprovalRequest{Listing: *reply.NewListing(req), Balance: balance},
		"Listing requested: the cost was paid and the request awaits the operator's decision.", nil
}

package apiv2

import (
	"context"
	"encoding/json"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The admin-scope operations (spec 4.2): create a faucet and request its
// listing. No key of any scope deletes a faucet: there is no such path.

type createFaucetParams struct {
	Name   string `json:"faucet_name"`
	Domain string `json:"faucet_domain"`
	URL    string `json:"faucet_url"`
}

type createFaucetData struct {
	Faucet reply.Faucet `json:"faucet"`
	// APIKey is the new faucet's v1 key, shown this once (D13).
	APIKey string `json:"api_key"`
}

// createFaucet makes a faucet owned by the key's faucet's owner.
func (h *Handler) createFaucet(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p createFaucetParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	f, key, err := h.Faucets.Create(ctx, faucet.CreateParams{OwnerID: c.Faucet.OwnerID, Name: p.Name, Domain: p.Domain, URL: p.URL})
	if err != nil {
		return nil, "", err
	}
	rec, err := reply.ReadFaucet(ctx, h.Faucets, h.Listing, f)
	return createFaucetData{Faucet: rec, APIKey: key}, "Faucet created. Its v1 api_key is shown this once.", err
}

type coinParams struct {
	Coin string `json:"coin"`
}

type approvalCostData struct {
	Currency    string         `json:"currency"`
	Cost        int64          `json:"cost"`
	CostBitcoin json.Number    `json:"cost_bitcoin"`
	Balance     int64          `json:"balance"` // the faucet's balance of the coin, which pays the cost
	Listing     *reply.Listing `json:"listing"` // the latest request, or null
}

// approvalCost is what listing the faucet costs in a coin (D44).
func (h *Handler) approvalCost(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p coinParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Coin == "" {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing coin.")
	}
	cost, err := h.Listing.Cost(ctx, p.Coin)
	if err != nil {
		return nil, "", err
	}
	balance, err := h.Faucets.Balance(ctx, c.Faucet, p.Coin)
	if err != nil {
		return nil, "", err
	}
	status, err := h.Listing.Status(ctx, c.Faucet.ID)
	if err != nil {
		return nil, "", err
	}
	return approvalCostData{Currency: p.Coin, Cost: cost, CostBitcoin: reply.Coins(cost), Balance: balance,
		Listing: reply.NewListing(status)}, "OK", nil
}

type requestApprovalData struct {
	Listing reply.Listing `json:"listing"`
	Balance int64         `json:"balance"` // the faucet's balance of the coin after the cost
}

// requestApproval pays the listing cost from the faucet's balance and opens
// a request the operator approves or rejects (a rejection refunds, D44).
func (h *Handler) requestApproval(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p coinParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Coin == "" {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing coin.")
	}
	req, err := h.Listing.Request(ctx, c.Faucet, p.Coin)
	if err != nil {
		return nil, "", err
	}
	balance, err := h.Faucets.Balance(ctx, c.Faucet, p.Coin)
	if err != nil {
		return nil, "", err
	}
	return requestApprovalData{Listing: *reply.NewListing(req), Balance: balance},
		"Listing requested: the cost was paid and the request awaits the operator's decision.", nil
}

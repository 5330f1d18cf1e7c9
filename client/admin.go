package client

import (
	"context"
	"encoding/json"
)

// The admin-scope paths of v2 (spec 4.2, D44): create a faucet and
// request its listing. Each is made once: neither is safe to repeat
// blindly (a second faucet, a second fee).

// NewFaucet is a new faucet's site.
type NewFaucet struct {
	Name   string `json:"faucet_name"`
	Domain string `json:"faucet_domain"`
	URL    string `json:"faucet_url"`
}

// CreatedFaucet is a new faucet's record and its v1 api_key, shown this
// once.
type CreatedFaucet struct {
	Faucet Faucet `json:"faucet"`
	APIKey string `json:"api_key"`
}

// CreateFaucet makes a faucet owned by the key's faucet's owner.
func (c *Client) CreateFaucet(ctx context.Context, f NewFaucet) (*CreatedFaucet, error) {
	return change[CreatedFaucet](ctx, c, "/faucet/create", f)
}

// ApprovalCost is what listing the faucet costs in a coin.
type ApprovalCost struct {
	Currency    string      `json:"currency"`
	Cost        int64       `json:"cost"`
	CostBitcoin json.Number `json:"cost_bitcoin"`
	Balance     int64       `json:"balance"` // the faucet's, which pays the cost
	Listing     *Listing    `json:"listing"` // the latest request, nil if none
}

type coinQuery struct {
	Coin string `json:"coin"`
}

// ApprovalCost reads what listing the faucet costs in coin.
func (c *Client) ApprovalCost(ctx context.Context, coin string) (*ApprovalCost, error) {
	return read[ApprovalCost](ctx, c, "/approval-cost", coinQuery{coin})
}

// ApprovalRequest is an opened listing request and the balance it left.
type ApprovalRequest struct {
	Listing Listing `json:"listing"`
	Balance int64   `json:"balance"`
}

// RequestApproval pays the listing cost in coin from the faucet's balance
// and opens a request the operator decides (a rejection refunds).
func (c *Client) RequestApproval(ctx context.Context, coin string) (*ApprovalRequest, error) {
	return change[ApprovalRequest](ctx, c, "/faucet/request-approval", coinQuery{coin})
}

package apiv2

import (
	"context"
	"encoding/json"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The read-scope operations (spec 4.2). Each also takes GET (D33); each
// answers with a record of package reply, as the tool server's tool of the
// same name does.

type currencyParams struct {
	Currency string `json:"currency"`
}

// balance is one coin's balance. Without a currency it is the faucet's
// first selected coin, or BTC when it selected none.
func (h *Handler) balance(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p currencyParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Currency == "" {
		p.Currency = reply.DefaultCurrency(c.Faucet)
	}
	b, err := h.Payouts.Balance(ctx, c, p.Currency)
	if err != nil {
		return nil, "", err
	}
	return reply.NewBalance(p.Currency, b), "OK", nil
}

// balances lists every active coin's balance, zero included.
func (h *Handler) balances(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return nil, "", err
	}
	held, err := h.Faucets.Balances(ctx, c.Faucet)
	if err != nil {
		return nil, "", err
	}
	return reply.NewBalances(active, held), "OK", nil
}

// currencies lists the active coins with their limits: the service's
// minimum payout and the faucet owner's send limits that count the coin.
func (h *Handler) currencies(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	active, err := h.Payouts.Currencies(ctx, c)
	if err != nil {
		return nil, "", err
	}
	return reply.NewCurrencies(active, c.Faucet), "OK", nil
}

type checkAddressParams struct {
	Address  string `json:"address"`
	Currency string `json:"currency"`
}

// checkAddress verifies a destination. A wallet address needs the coin it
// is linked for; a payout_user_hash, email or username resolves without.
func (h *Handler) checkAddress(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p checkAddressParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.Address == "" {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing address.")
	}
	if p.Currency == "" {
		p.Currency = reply.DefaultCurrency(c.Faucet)
	}
	u, err := h.Payouts.CheckAddress(ctx, c, p.Address, p.Currency)
	if err != nil {
		return nil, "", err
	}
	return reply.AddressCheck{Address: p.Address, Currency: p.Currency, PayoutUserHash: u.PayoutUserHash},
		"The address belongs to a registered user.", nil
}

type payoutsParams struct {
	Currency string `json:"currency"`
	Count    *int   `json:"count"`
}

// payouts lists recent payouts, newest first; count is 1-100, default 10.
func (h *Handler) payouts(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p payoutsParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	count := 10
	if p.Count != nil {
		if *p.Count < 1 || *p.Count > 100 {
			return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 100.")
		}
		count = *p.Count
	}
	list, err := h.Payouts.Payouts(ctx, c, p.Currency, count)
	if err != nil {
		return nil, "", err
	}
	return reply.NewPayouts(list), "OK", nil
}

// faucet is the faucet's record.
func (h *Handler) faucet(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	rec, err := reply.ReadFaucet(ctx, h.Faucets, h.Listing, c.Faucet)
	return rec, "OK", err
}

// statsDaily sums the last 30 days' payouts per day and coin.
func (h *Handler) statsDaily(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	stats, err := h.Faucets.DailyStats(ctx, c.Faucet)
	if err != nil {
		return nil, "", err
	}
	return reply.NewDaily(stats, h.Now()), "OK", nil
}

type pageParams struct {
	Coin string `json:"coin"`
	Page *int   `json:"page"`
}

// readPage decodes a paged request; its coin is required, then checked as
// reply.ReadPage checks it for the tools too.
func (h *Handler) readPage(ctx context.Context, in *input) (string, int, error) {
	var p pageParams
	if err := in.decode(&p); err != nil {
		return "", 0, err
	}
	if p.Coin == "" {
		return "", 0, drip.Errorf(drip.CodeInvalid, "Missing coin.")
	}
	n, err := reply.ReadPage(ctx, h.Coins, p.Coin, p.Page)
	if err != nil {
		return "", 0, err
	}
	return p.Coin, n, nil
}

// statsUsers is one page of what each recipient was paid in a coin, the
// largest totals first.
func (h *Handler) statsUsers(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return nil, "", err
	}
	p, err := h.Faucets.UserStats(ctx, c.Faucet, coin, n)
	if err != nil {
		return nil, "", err
	}
	return reply.NewUserStats(p), "OK", nil
}

// transactions is one page of the faucet's journal in a coin, newest first.
func (h *Handler) transactions(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	coin, n, err := h.readPage(ctx, in)
	if err != nil {
		return nil, "", err
	}
	p, err := h.Faucets.Transactions(ctx, c.Faucet, coin, n)
	if err != nil {
		return nil, "", err
	}
	return reply.NewTransactions(p), "OK", nil
}

// rateLimits reads the key's request rate and the owner's send limits.
func (h *Handler) rateLimits(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return reply.NewRateLimits(h.Rate, c.RateRemaining, c.Faucet.Limits), "OK", nil
}

// lowBalance reads the alert's setting and its latest emails (D43).
func (h *Handler) lowBalance(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	if err := in.decode(&struct{}{}); err != nil {
		return nil, "", err
	}
	return h.lowBalanceData(ctx, c.Faucet)
}

func (h *Handler) lowBalanceData(ctx context.Context, f *drip.Faucet) (any, string, error) {
	list, err := h.Faucets.Notifications(ctx, f)
	if err != nil {
		return nil, "", err
	}
	return reply.NewLowBalanceNotification(f.LowBalance, list), "OK", nil
}

type auditParams struct {
	Count *int `json:"count"`
}

type auditRecord struct {
	ID        int64           `json:"id"`
	KeyID     int64           `json:"key_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	CreatedAt string          `json:"created_at"`
}

type auditData struct {
	Entries []auditRecord `json:"entries"`
}

// auditLog lists the manage calls made through the tool server, newest
// first; count is 1-200, default 50.
func (h *Handler) auditLog(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p auditParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	count := 50
	if p.Count != nil {
		if *p.Count < 1 || *p.Count > 200 {
			return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 200.")
		}
		count = *p.Count
	}
	list, err := h.Audit.List(ctx, c.Faucet.ID, count)
	if err != nil {
		return nil, "", err
	}
	data := auditData{Entries: make([]auditRecord, len(list))}
	for i, e := range list {
		data.Entries[i] = auditRecord{ID: e.ID, KeyID: e.KeyID, Tool: e.Tool, Arguments: e.Arguments,
			Result: e.Result, IsError: e.IsError, CreatedAt: reply.Timestamp(e.CreatedAt)}
	}
	return data, "OK", nil
}

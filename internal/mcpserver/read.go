package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// The read tools (spec 4.3): what a read key may call. Each answers with
// the record of package reply that the v2 read path of the same name
// answers with (spec 4.2); its output schema is inferred from that record.

type noArgs struct{}

// readTools are the read tools, in the order of spec 4.3.
func (h *Handler) readTools() []tool {
	return []tool{
		newTool(h, spec[noArgs, reply.Faucet]{
			name: "get_faucet", title: "Faucet details",
			description: "Read the faucet's whole record: name, domain, URL, description, claim timer, selected currencies and " +
				"categories, owner status, IP whitelist, send limits, anti-fraud rules, low-balance alert, listing approval " +
				"and the balance of every coin it has held. Start here for a general question about the faucet.",
			annotations: readAnnotations("Faucet details"),
			run: func(ctx context.Context, c *payout.Caller, _ noArgs) (reply.Faucet, string, error) {
				rec, err := reply.ReadFaucet(ctx, h.Faucets, h.Listing, c.Faucet)
				return rec, "OK", err
			},
		}),
		newTool(h, spec[noArgs, reply.Balances]{
			name: "get_balances", title: "Balances",
			description: "Read the faucet's balance of every active coin, zero balances included. Amounts are in the coin's " +
				"smallest unit (balance) and in whole coins (balance_bitcoin).",
			annotations: readAnnotations("Balances"),
			run:         h.balances,
		}),
		newTool(h, spec[balanceArgs, reply.Balance]{
			name: "get_balance", title: "Balance of one coin",
			description: "Read the faucet's balance of one coin, in the coin's smallest unit (balance) and in whole coins " +
				"(balance_bitcoin). Without currency: the faucet's first selected coin, or BTC. Use get_currencies for the coins.",
			annotations: readAnnotations("Balance of one coin"),
			run:         h.balance,
		}),
		newTool(h, spec[payoutsArgs, reply.Payouts]{
			name: "get_payouts", title: "Recent payouts",
			description: "List the faucet's latest payouts, newest first: recipient as given, amount in smallest units, coin, " +
				"claimer IP, referral tag and time. count is 1 to 100 (default 10); currency filters to one coin. " +
				"For totals per day use get_daily_stats; per recipient, get_user_stats.",
			annotations: readAnnotations("Recent payouts"),
			refine: func(in *jsonschema.Schema) {
				in.Properties["count"].Minimum, in.Properties["count"].Maximum = new(1.0), new(100.0)
				in.Properties["count"].Default = json.RawMessage("10")
			},
			run: h.payouts,
		}),
		newTool(h, spec[noArgs, reply.Currencies]{
			name: "get_currencies", title: "Currencies and their limits",
			description: "List the coins the service pays in, each with its minimum payout, whether the faucet selected it, " +
				"and the owner's send limits that count it.",
			annotations: readAnnotations("Currencies and their limits"),
			run:         h.currencies,
		}),
		newTool(h, spec[checkAddressArgs, reply.AddressCheck]{
			name: "check_address", title: "Check a destination",
			description: "Check that a destination (email, username, wallet address or payout_user_hash) is a registered, " +
				"payable user, and get their payout_user_hash. A wallet address needs the coin it is linked for " +
				"(currency; default the faucet's first selected coin, or BTC). An error result means it cannot be paid.",
			annotations: readAnnotations("Check a destination"),
			refine:      func(in *jsonschema.Schema) { in.Properties["address"].MinLength = new(1) },
			run:         h.checkAddress,
		}),
		newTool(h, spec[noArgs, reply.Daily]{
			name: "get_daily_stats", title: "Daily statistics",
			description: "Sum the faucet's payouts per UTC day and coin over the last 30 days (today included): payouts, " +
				"amount and distinct recipients. Days without payouts are left out; newest first.",
			annotations: readAnnotations("Daily statistics"),
			run:         h.dailyStats,
		}),
		newTool(h, spec[pageArgs, reply.Page[reply.UserStat]]{
			name: "get_user_stats", title: "Payouts per recipient",
			description: "List what the faucet paid each recipient in one coin (payouts, amount, last payout), largest totals " +
				"first, 50 a page. Recipients are identified by payout_user_hash.",
			annotations: readAnnotations("Payouts per recipient"),
			refine:      refinePage,
			run:         h.userStats,
		}),
		newTool(h, spec[pageArgs, reply.Page[reply.Transaction]]{
			name: "get_transactions", title: "Transactions",
			description: "List the faucet's ledger entries in one coin, newest first, 50 a page: deposits, payouts, listing " +
				"fees and refunds. amount is positive for money in, negative for money out.",
			annotations: readAnnotations("Transactions"),
			refine:      refinePage,
			run:         h.transactions,
		}),
		newTool(h, spec[noArgs, reply.RateLimits]{
			name: "get_ratelimits", title: "Rate limits",
			description: "Read this key's request rate (requests a minute, burst, and how many it may still make now) and the " +
				"owner's send limits (payouts or amounts per faucet, recipient or claimer IP within a window).",
			annotations: readAnnotations("Rate limits"),
			run: func(_ context.Context, c *payout.Caller, _ noArgs) (reply.RateLimits, string, error) {
				return reply.NewRateLimits(h.Rate, c.RateRemaining, c.Faucet.Limits), "OK", nil
			},
		}),
		newTool(h, spec[noArgs, reply.LowBalanceNotification]{
			name: "get_low_balance_notification", title: "Low-balance alert",
			description: "Read the low-balance alert: whether it is on, each coin's threshold, and the latest alert emails " +
				"with their delivery state.",
			annotations: readAnnotations("Low-balance alert"),
			run: func(ctx context.Context, c *payout.Caller, _ noArgs) (reply.LowBalanceNotification, string, error) {
				data, err := h.lowBalanceData(ctx, c.Faucet)
				return data, "OK", err
			},
		}),
	}
}

func (h *Handler) balances(ctx context.Context, c *payout.Caller, _ noArgs) (reply.Balances, string, error) {
	active, err := h.Coins.ListActive(ctx)
	if err != nil {
		return reply.Balances{}, "", err
	}
	held, err := h.Faucets.Balances(ctx, c.Faucet)
	if err != nil {
		return reply.Balances{}, "", err
	}
	return reply.NewBalances(active, held), "OK", nil
}

type balanceArgs struct {
	Currency string `json:"currency,omitempty" jsonschema:"coin symbol, upper-case (BTC, DOGE...); default: the faucet's first selected coin, or BTC"`
}

func (h *Handler) balance(ctx context.Context, c *payout.Caller, in balanceArgs) (reply.Balance, string, error) {
	if in.Currency == "" {
		in.Currency = reply.DefaultCurrency(c.Faucet)
	}
	b, err := h.Payouts.Balance(ctx, c, in.Currency)
	if err != nil {
		return reply.Balance{}, "", err
	}
	return reply.NewBalance(in.Currency, b), "OK", nil
}

func (h *Handler) currencies(ctx context.Context, c *payout.Caller, _ noArgs) (reply.Currencies, string, error) {
	active, err := h.Payouts.Currencies(ctx, c)
	if err != nil {
		return reply.Currencies{}, "", err
	}
	return reply.NewCurrencies(active, c.Faucet), "OK", nil
}

type checkAddressArgs struct {
	Address  string `json:"address" jsonschema:"email, username, wallet address or payout_user_hash"`
	Currency string `json:"currency,omitempty" jsonschema:"coin a wallet address is linked for; default: the faucet's first selected coin, or BTC"`
}

func (h *Handler) checkAddress(ctx context.Context, c *payout.Caller, in checkAddressArgs) (reply.AddressCheck, string, error) {
	if in.Currency == "" {
		in.Currency = reply.DefaultCurrency(c.Faucet)
	}
	u, err := h.Payouts.CheckAddress(ctx, c, in.Address, in.Currency)
	if err != nil {
		return reply.AddressCheck{}, "", err
	}
	return reply.AddressCheck{Address: in.Address, Currency: in.Currency, PayoutUserHash: u.PayoutUserHash},
		"The address belongs to a registered user.", nil
}

type payoutsArgs struct {
	Currency string `json:"currency,omitempty" jsonschema:"only payouts in this coin; default: every coin"`
	Count    *int   `json:"count,omitempty" jsonschema:"how many payouts, 1 to 100"`
}

func (h *Handler) payouts(ctx context.Context, c *payout.Caller, in payoutsArgs) (reply.Payouts, string, error) {
	count := 10
	if in.Count != nil {
		count = *in.Count // 1-100, as the input schema says
	}
	list, err := h.Payouts.Payouts(ctx, c, in.Currency, count)
	if err != nil {
		return reply.Payouts{}, "", err
	}
	return reply.NewPayouts(list), "OK", nil
}

func (h *Handler) dailyStats(ctx context.Context, c *payout.Caller, _ noArgs) (reply.Daily, string, error) {
	stats, err := h.Faucets.DailyStats(ctx, c.Faucet)
	if err != nil {
		return reply.Daily{}, "", err
	}
	return reply.NewDaily(stats, h.Now()), "OK", nil
}

type pageArgs struct {
	Coin string `json:"coin" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
	Page *int   `json:"page,omitempty" jsonschema:"page number, from 1"`
}

func refinePage(in *jsonschema.Schema) {
	in.Properties["coin"].MinLength = new(1)
	in.Properties["page"].Minimum, in.Properties["page"].Default = new(1.0), json.RawMessage("1")
}

func (h *Handler) userStats(ctx context.Context, c *payout.Caller, in pageArgs) (reply.Page[reply.UserStat], string, error) {
	n, err := reply.ReadPage(ctx, h.Coins, in.Coin, in.Page)
	if err != nil {
		return reply.Page[reply.UserStat]{}, "", err
	}
	p, err := h.Faucets.UserStats(ctx, c.Faucet, in.Coin, n)
	if err != nil {
		return reply.Page[reply.UserStat]{}, "", err
	}
	return reply.NewUserStats(p), "OK", nil
}

func (h *Handler) transactions(ctx context.Context, c *payout.Caller, in pageArgs) (reply.Page[reply.Transaction], string, error) {
	n, err := reply.ReadPage(ctx, h.Coins, in.Coin, in.Page)
	if err != nil {
		return reply.Page[reply.Transaction]{}, "", err
	}
	p, err := h.Faucets.Transactions(ctx, c.Faucet, in.Coin, n)
	if err != nil {
		return reply.Page[reply.Transaction]{}, "", err
	}
	return reply.NewTransactions(p), "OK", nil
}

func (h *Handler) lowBalanceData(ctx context.Context, f *drip.Faucet) (reply.LowBalanceNotification, error) {
	list, err := h.Faucets.Notifications(ctx, f)
	if err != nil {
		return reply.LowBalanceNotification{}, err
	}
	return reply.NewLowBalanceNotification(f.LowBalance, list), nil
}

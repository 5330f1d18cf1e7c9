package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dripfaucet/drip/internal/operation"
)

// row is one tool of the table: its name, the operation it runs (whose
// scope a key needs, as the v2 path of the same operation needs it, D16),
// and what tools/list shows of it besides the operation's schemas.
type row struct {
	name        string
	op          *operation.Op
	title       string
	description string
	annotations *mcp.ToolAnnotations
}

// table is the tool server's tools (spec 4.3), read then manage, in the
// order of the specification. Each answers with the record its v2 path
// answers with.
func table(ops *operation.Service) []row {
	return []row{
		{name: "get_faucet", op: ops.Faucet, title: "Faucet details",
			description: "Read the faucet's whole record: name, domain, URL, description, claim timer, selected currencies and " +
				"categories, owner status, IP whitelist, send limits, anti-fraud rules, low-balance alert, listing approval " +
				"and the balance of every coin it has held. Start here for a general question about the faucet.",
			annotations: readAnnotations("Faucet details")},
		{name: "get_balances", op: ops.Balances, title: "Balances",
			description: "Read the faucet's balance of every active coin, zero balances included. Amounts are in the coin's " +
				"smallest unit (balance) and in whole coins (balance_bitcoin).",
			annotations: readAnnotations("Balances")},
		{name: "get_balance", op: ops.Balance, title: "Balance of one coin",
			description: "Read the faucet's balance of one coin, in the coin's smallest unit (balance) and in whole coins " +
				"(balance_bitcoin). Without currency: the faucet's first selected coin, or BTC. Use get_currencies for the coins.",
			annotations: readAnnotations("Balance of one coin")},
		{name: "get_payouts", op: ops.Payouts, title: "Recent payouts",
			description: "List the faucet's latest payouts, newest first: recipient as given, amount in smallest units, coin, " +
				"claimer IP, referral tag and time. count is 1 to 100 (default 10); currency filters to one coin. " +
				"For totals per day use get_daily_stats; per recipient, get_user_stats.",
			annotations: readAnnotations("Recent payouts")},
		{name: "get_currencies", op: ops.Currencies, title: "Currencies and their limits",
			description: "List the coins the service pays in, each with its minimum payout, whether the faucet selected it, " +
				"and the owner's send limits that count it.",
			annotations: readAnnotations("Currencies and their limits")},
		{name: "check_address", op: ops.CheckAddress, title: "Check a destination",
			description: "Check that a destination (email, username, wallet address or payout_user_hash) is a registered, " +
				"payable user, and get their payout_user_hash. Without currency, a wallet address is found in whichever coin " +
				"it is linked for, and the result's currency says which; with currency, only in that coin. An error result " +
				"means it cannot be paid.",
			annotations: readAnnotations("Check a destination")},
		{name: "get_daily_stats", op: ops.DailyStats, title: "Daily statistics",
			description: "Sum the faucet's payouts per UTC day and coin over the last 30 days (today included): payouts, " +
				"amount and distinct recipients. Days without payouts are left out; newest first.",
			annotations: readAnnotations("Daily statistics")},
		{name: "get_user_stats", op: ops.UserStats, title: "Payouts per recipient",
			description: "List what the faucet paid each recipient in one coin (payouts, amount, last payout), largest totals " +
				"first, 50 a page. Recipients are identified by payout_user_hash.",
			annotations: readAnnotations("Payouts per recipient")},
		{name: "get_transactions", op: ops.Transactions, title: "Transactions",
			description: "List the faucet's ledger entries in one coin, newest first, 50 a page: deposits, payouts, listing " +
				"fees and refunds. amount is positive for money in, negative for money out.",
			annotations: readAnnotations("Transactions")},
		{name: "get_ratelimits", op: ops.RateLimits, title: "Rate limits",
			description: "Read this key's request rate (requests a minute, burst, and how many it may still make now) and the " +
				"owner's send limits (payouts or amounts per faucet, recipient or claimer IP within a window).",
			annotations: readAnnotations("Rate limits")},
		{name: "get_low_balance_notification", op: ops.LowBalanceNotification, title: "Low-balance alert",
			description: "Read the low-balance alert: whether it is on, each coin's threshold, and the latest alert emails " +
				"with their delivery state.",
			annotations: readAnnotations("Low-balance alert")},

		{name: "get_ip_whitelist", op: ops.IPWhitelist, title: "IP whitelist",
			description: "Read the faucet's IP whitelist: the addresses and CIDRs its keys (this one included) may be used " +
				"from. An empty list admits any IP.",
			annotations: manageAnnotations("IP whitelist", true, false, true)},
		{name: "set_ip_whitelist", op: ops.SetIPWhitelist, title: "Replace the IP whitelist",
			description: "Replace the faucet's IP whitelist with the given addresses and CIDRs (at most 100); its keys, this " +
				"one included, are then refused from any other IP, so keep the address this assistant calls from. " +
				"An empty list admits any IP and removes the protection, and 0.0.0.0/0 or ::/0 admit any IPv4 or IPv6 address: the " +
				"result then carries a warning. " +
				"Read the current list with get_ip_whitelist first and send the whole new list.",
			annotations: manageAnnotations("Replace the IP whitelist", false, true, true)},
		{name: "get_anti_fraud", op: ops.AntiFraudRules, title: "Anti-fraud rules",
			description: "Read the anti-fraud rules: whether rank checks are on, the minimum trust_rank and maximum " +
				"negative_rank a recipient may have, and the whitelist (skips rank checks) and blacklist (never paid).",
			annotations: manageAnnotations("Anti-fraud rules", true, false, true)},
		{name: "toggle_anti_fraud", op: ops.ToggleAntiFraud, title: "Turn anti-fraud checks on or off",
			description: "Turn the anti-fraud rank checks on (enabled: true) or off (enabled: false); without enabled, flip " +
				"them. The blacklist applies either way. Turning them off lets recipients of any rank be paid: the result " +
				"then carries a warning. Prefer giving enabled, so that a repeated call changes nothing.",
			annotations: manageAnnotations("Turn anti-fraud checks on or off", false, true, false)},
		{name: "update_anti_fraud_rules", op: ops.UpdateAntiFraudRules, title: "Update anti-fraud rules",
			description: "Set the anti-fraud ranks and lists. trust_rank (0-100, the minimum a recipient needs) is required; " +
				"negative_rank, whitelist and blacklist are left as they are when absent, and a list given replaces the " +
				"old one whole (read it with get_anti_fraud first). Lowering trust_rank, raising negative_rank, adding " +
				"whitelist entries or removing blacklist entries weakens the checks: the result then carries a warning.",
			annotations: manageAnnotations("Update anti-fraud rules", false, true, true)},
		{name: "update_faucet_settings", op: ops.UpdateFaucet, title: "Update faucet settings",
			description: "Set the faucet's public settings. faucet_name, faucet_domain, faucet_url (http or https, on that " +
				"domain), faucet_description (may be empty) and timer_minutes are required, so read them with get_faucet " +
				"and send back those you keep; currencies_selected and categories_selected replace the lists when given " +
				"and are left as they are when absent. Returns the updated faucet.",
			annotations: manageAnnotations("Update faucet settings", false, true, true)},
		{name: "set_ratelimits", op: ops.SetRateLimits, title: "Replace the send limits",
			description: "Replace the owner's send limits (at most 50) with the given list; an empty list removes every limit. " +
				"Each limit counts payouts (max_count) and/or smallest units paid (max_amount) per faucet, per recipient " +
				"or per claimer IP within window_seconds, in one coin or (currency absent) all coins. Read the current " +
				"limits with get_ratelimits first and send the whole new list. A list with fewer limits than before removes " +
				"protection: the result then carries a warning.",
			annotations: manageAnnotations("Replace the send limits", false, true, true)},
		{name: "toggle_low_balance_notification", op: ops.ToggleLowBalanceNotification, title: "Turn the low-balance alert on or off",
			description: "Turn the low-balance email alert on (enabled: true) or off (enabled: false); without enabled, flip " +
				"it. thresholds (coin symbol -> smallest units) set those coins' thresholds, 0 removing one; other coins " +
				"keep theirs. The owner is emailed once each time a payout takes a coin's balance below its threshold.",
			annotations: manageAnnotations("Turn the low-balance alert on or off", false, true, false)},
	}
}

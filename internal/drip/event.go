package drip

import "encoding/json"

// The data of each event type: what the ledger stores with an event (D50)
// and what its webhook body carries under "data" (spec 2.8, D51), one
// definition for both. A stored event's data has exactly these members.

// SentData is the data of a payout.sent event (spec 2.8).
type SentData struct {
	To             string `json:"to"`
	Amount         int64  `json:"amount"` // smallest units
	Currency       string `json:"currency"`
	PayoutID       string `json:"payout_id"` // a string in this body (spec 2.8)
	PayoutUserHash string `json:"payout_user_hash"`
	Message        string `json:"message"`
}

// FailedData is the data of a payout.failed event (D51), which spec 6.1
// leaves open: the refusal in both vocabularies.
type FailedData struct {
	To       string `json:"to"` // the destination as the caller gave it
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Status   *int   `json:"status"` // the v1 status (spec 7.1); null where v1 has none (a v2-only refusal)
	Error    string `json:"error"`  // the v2 error code
	Message  string `json:"message"`
}

// LowBalanceData is the data of a faucet.low_balance event (D43), which
// the specification does not show: the coin, the balance after the
// payout that took it below the owner's threshold (in smallest units and
// as an exact decimal of whole coins, D1), the threshold, and a message.
type LowBalanceData struct {
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"`
	BalanceBitcoin json.Number `json:"balance_bitcoin"`
	Threshold      int64       `json:"threshold"`
	Message        string      `json:"message"`
}

// TestData is the data of a webhook.test event: what the owner's "send a
// test event" sends to one endpoint, so a receiver can be tried without a
// payout. Receivers should acknowledge it and do nothing else.
type TestData struct {
	Message string `json:"message"`
}

package drip

import "time"

// What a faucet's activity leaves besides its settings and the ledger:
// idempotency keys, owner notifications, listing requests, statistics, the
// journal as an account sees it, and the audit log.

// Idempotency is the record of a paid v2 send under an idempotency key
// (D35): what identifies the request, and what its reply said, so a retry
// gets the original reply. It is written in the payout's transaction.
type Idempotency struct {
	FaucetID       int64
	Key            string
	RequestHash    string // of the request's fields, to tell a retry from a reuse
	PayoutID       int64
	Coin           string
	Balance        int64 // the faucet's balance after the payout
	PayoutUserHash string
	RateRemaining  float64
	CreatedAt      time.Time
}

// Notification is an email owed to a faucet's owner (D43), kept whether or
// not SMTP is configured, so the owner can read what was sent.
type Notification struct {
	ID        int64
	FaucetID  int64
	Kind      string // "low_balance" or "webhook_disabled"
	Coin      string
	Threshold int64
	Balance   int64
	CreatedAt time.Time
	SentAt    *time.Time // nil: not delivered yet
	Attempts  int
	LastError string
	Channel   string // "smtp" or "log", once delivered
	// Detail is what a kind needs beyond coin and amounts: the URL of the
	// endpoint of a "webhook_disabled" notification.
	Detail string
}

// The kinds of notification.
const (
	NotifyLowBalance      = "low_balance"      // a faucet's balance fell below its threshold (D43)
	NotifyWebhookDisabled = "webhook_disabled" // an endpoint failed every attempt for 3 days (D52)
)

// ListingStatus is where a listing approval request stands (D44).
type ListingStatus string

const (
	ListingPending  ListingStatus = "pending"
	ListingApproved ListingStatus = "approved"
	ListingRejected ListingStatus = "rejected"
)

// ListingRequest is a faucet's request to appear on the public faucet
// list; its cost was moved to system:listing when it was made (D44).
type ListingRequest struct {
	ID        int64
	FaucetID  int64
	Coin      string
	Amount    int64
	Status    ListingStatus
	CreatedAt time.Time
	DecidedAt *time.Time
}

// DailyStat is one UTC day's payouts of one coin.
type DailyStat struct {
	Day        time.Time // midnight UTC
	Coin       string
	Payouts    int64
	Amount     int64
	Recipients int64 // distinct
}

// UserStat is what a faucet paid one recipient in one coin.
type UserStat struct {
	PayoutUserHash string
	Payouts        int64
	Amount         int64
	LastPayoutAt   time.Time
}

// Transaction is one journal transfer seen from one account: Amount is
// positive for money in, negative for money out.
type Transaction struct {
	ID        int64
	Kind      string // "deposit", "payout", "listing_fee", "listing_refund"
	Coin      string
	Amount    int64
	PayoutID  int64 // 0 unless Kind is "payout"
	CreatedAt time.Time
}

// AuditEntry is one change to a faucet, made through the tool server or
// the faucet's console pages, kept for the faucet's owner to read: who
// called which operation with which arguments (never secrets), and what
// came of it.
type AuditEntry struct {
	ID       int64
	FaucetID int64
	// Who made the change: a key through the tool server, or a user on the
	// faucet's console pages; exactly one of KeyID and UserID is set.
	KeyID     int64
	KeyPrefix string // read back with the entry
	UserID    int64
	Username  string // read back with the entry
	Tool      string // the operation's name (its tool's)
	Arguments []byte // JSON
	Result    string
	IsError   bool
	CreatedAt time.Time
}

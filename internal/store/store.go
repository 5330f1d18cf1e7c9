// Package store defines the storage interface of drip. The SQL behind it is
// shared by both engines (package sqlstore); packages sqlite and postgres
// supply connections, schema and error translation, and storetest is the one
// suite both must pass (D30). Only cmd/drip picks an engine.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique value (username, email, address, key) is taken.
	ErrConflict = errors.New("store: already exists")
	// ErrInsufficientFunds: a debit would take a balance below zero.
	ErrInsufficientFunds = errors.New("store: insufficient funds")
	// ErrLimitReached: an addition would take a capped total past its cap.
	ErrLimitReached = errors.New("store: limit reached")
)

// The database's faults (D6, D58) are *drip.Error values, so that every
// interface answers them as an outage through its own table, and are
// wrapped with their cause, for the log: errors.Is finds them.
var (
	// ErrUnavailable: the database did not answer, or not before the
	// context's deadline (connection refused or reset, a timeout). What was
	// asked is known not to have happened: a read read nothing, and a
	// transaction that failed so did not commit.
	ErrUnavailable = &drip.Error{Code: drip.CodeUnavailable, RetryAfter: time.Second,
		Message: "The service is temporarily unavailable; retry in a few seconds."}
	// ErrCommitUnknown: a transaction's commit was sent but no answer came,
	// so it may or may not have committed. Only a caller that can ask the
	// database later (the ledger, D6) may settle it; others pass it on.
	ErrCommitUnknown = &drip.Error{Code: drip.CodeOutcomeUnknown, RetryAfter: time.Second,
		Message: "The database did not confirm whether this change was made; check before retrying."}
)

// Store is a database of drip. Reads outside a transaction may run
// concurrently; Transact serializes writes as the engine requires.
type Store interface {
	Reader
	// Transact runs fn in one write transaction, committing when fn returns
	// nil and rolling back on error or panic. Conflicts the engine reports as
	// retryable (SQLite busy, PostgreSQL serialization failure) rerun fn, so
	// fn must not have effects outside tx. An error wrapping
	// ErrCommitUnknown means the commit was sent and may have taken effect;
	// any other error means the transaction did not commit.
	Transact(ctx context.Context, fn func(tx Tx) error) error
	// EventCommitted reports whether an event with this id is committed,
	// after waiting for any transaction still writing one to end: a
	// transaction whose commit is unknown (ErrCommitUnknown) is settled by
	// the ledger through the event it wrote (D6). faucetID is the event's
	// faucet. It changes nothing.
	EventCommitted(ctx context.Context, id string, faucetID int64) (bool, error)
	// Ping checks that the database answers, for readiness (D58).
	Ping(ctx context.Context) error
	// Migrate applies the engine's pending migrations.
	Migrate(ctx context.Context) error
	// StatsRebuild empties the sums the statistics are kept as (D73), for
	// the folder to fold every payout again; the reads stay exact.
	StatsRebuild(ctx context.Context) error
	Engine() string
	Close() error
}

// Reader holds every read. Both Store and Tx implement it.
type Reader interface {
	SecretGet(ctx context.Context, name string) ([]byte, error)

	CoinList(ctx context.Context) ([]drip.Coin, error)

	UserGetByID(ctx context.Context, id int64) (*drip.User, error)
	UserGetByUsername(ctx context.Context, username string) (*drip.User, error)
	UserGetByEmail(ctx context.Context, email string) (*drip.User, error)
	UserGetByPayoutHash(ctx context.Context, hash string) (*drip.User, error)
	UserGetByAddress(ctx context.Context, coin, address string) (*drip.User, error)
	// UserAddressList returns the user's linked addresses as "COIN:address".
	UserAddressList(ctx context.Context, userID int64) ([]string, error)
	// UserAddressOwners returns who linked address, for which coin, in the
	// order of the coins; none is no error.
	UserAddressOwners(ctx context.Context, address string) ([]AddressOwner, error)

	FaucetGetByID(ctx context.Context, id int64) (*drip.Faucet, error)
	// FaucetGetByKeyHash finds the faucet whose current or pending v1 key has
	// this hash (D13: both work until the rotation is confirmed).
	FaucetGetByKeyHash(ctx context.Context, hash string) (*drip.Faucet, error)
	FaucetListByOwner(ctx context.Context, ownerID int64) ([]drip.Faucet, error)

	BalanceGet(ctx context.Context, accountID int64, coin string) (int64, error)
	// BalanceDebits is how many debits each of the account's balances of
	// coin ("": of every coin) has taken, by coin. A count only grows, and
	// a transaction that writes a faucet's payouts of a coin raises the
	// faucet's count of that coin (D66).
	BalanceDebits(ctx context.Context, accountID int64, coin string) ([]DebitCount, error)
	BalanceList(ctx context.Context, accountID int64) ([]drip.Balance, error)

	PayoutList(ctx context.Context, p *PayoutListParams) ([]drip.Payout, error)
	PayoutWindow(ctx context.Context, p *PayoutWindowParams) (count, sum int64, err error)
	// PayoutExists reports whether a payout with this id is committed.
	PayoutExists(ctx context.Context, id int64) (bool, error)

	// RefusalCountOthers counts the distinct faucets other than faucetID whose
	// blacklist refused the user since the given time (D42 negative rank).
	RefusalCountOthers(ctx context.Context, userID, faucetID int64, since time.Time) (int64, error)

	EventList(ctx context.Context, faucetID int64, limit int) ([]drip.Event, error)
	EventGet(ctx context.Context, id string) (*drip.Event, error)
	// EventFeed reads up to p.Limit of the faucet's events after p.After
	// in feed order (D59), of every type; those of a type p.Types does not
	// list come without their data. It reads only events no later commit
	// can precede: on PostgreSQL those of transactions below its
	// snapshot's xmin, all of them ended.
	EventFeed(ctx context.Context, p *EventFeedParams) ([]EventAt, error)

	KeyGetByID(ctx context.Context, id int64) (*drip.Key, error)
	// CacheGeneration is what every change to what a send reads before
	// the ledger raises (keys, faucets, users, their addresses), in that
	// change's transaction (D63).
	CacheGeneration(ctx context.Context) (CacheGen, error)
	// KeyGetByHash finds a v2 key by the hash of its whole secret, revoked
	// and expired keys included: judging them is the caller's.
	KeyGetByHash(ctx context.Context, hash string) (*drip.Key, error)
	KeyListByFaucet(ctx context.Context, faucetID int64) ([]drip.Key, error)

	IdempotencyGet(ctx context.Context, faucetID int64, key string) (*drip.Idempotency, error)
	// IdempotencyGetMany reads the faucet's keys among keys that are bound,
	// in one statement (a batch of sends, D61); a key not bound is absent.
	IdempotencyGetMany(ctx context.Context, faucetID int64, keys []string) ([]drip.Idempotency, error)
	// KeySpendGet is a key's spend of the day in USD micros; 0 when none.
	KeySpendGet(ctx context.Context, keyID, day int64) (int64, error)

	// StatsDaily sums the faucet's payouts per UTC day and coin since the
	// given time, newest day first.
	StatsDaily(ctx context.Context, faucetID int64, since time.Time) ([]drip.DailyStat, error)
	// StatsUsers sums the faucet's payouts of a coin per recipient, largest
	// total first, one page of them, with the number of recipients.
	StatsUsers(ctx context.Context, p *PageParams) ([]drip.UserStat, int64, error)
	// TransactionList is one page of an account's journal in one coin,
	// newest first, with the number of its transfers in that coin. The
	// account is one that receives no payouts, such as a faucet's: the
	// payouts a user received are listed by PayoutListByRecipient (D67).
	TransactionList(ctx context.Context, p *PageParams) ([]drip.Transaction, int64, error)

	NotificationListByFaucet(ctx context.Context, faucetID int64, limit int) ([]drip.Notification, error)
	// NotificationBacklog counts the notifications waiting for delivery
	// (not sent, fewer than maxAttempts attempts) and tells when the
	// oldest of them was written; zero when none waits.
	NotificationBacklog(ctx context.Context, maxAttempts int) (pending int64, oldest time.Time, err error)

	// ListingCostList returns the operator's listing cost per coin.
	ListingCostList(ctx context.Context) (map[string]int64, error)
	ListingRequestGet(ctx context.Context, id int64) (*drip.ListingRequest, error)
	ListingRequestListByFaucet(ctx context.Context, faucetID int64) ([]drip.ListingRequest, error)
	ListingRequestListByStatus(ctx context.Context, status drip.ListingStatus) ([]drip.ListingRequest, error)
	// FaucetListListed returns the faucets with an approved listing request.
	FaucetListListed(ctx context.Context) ([]drip.Faucet, error)

	// AuditList is the faucet's latest audit entries, newest first: those
	// before the entry beforeID, or from the newest when it is 0.
	AuditList(ctx context.Context, faucetID int64, limit int, beforeID int64) ([]drip.AuditEntry, error)

	// SessionGet finds a session by the SHA-256 of its token, revoked and
	// expired ones included: judging them is the caller's.
	SessionGet(ctx context.Context, tokenHash string) (*drip.Session, error)
	// SessionListByUser is the user's sessions not revoked and not past
	// their absolute expiry at p.At, newest first.
	SessionListByUser(ctx context.Context, p *SessionListByUserParams) ([]drip.Session, error)
	// RecoveryCodesRemaining counts the user's unused recovery codes.
	RecoveryCodesRemaining(ctx context.Context, userID int64) (int64, error)
	// SecurityLogList is the user's latest security log entries, newest first.
	SecurityLogList(ctx context.Context, p *SecurityLogListParams) ([]drip.SecurityEvent, error)

	// The wallet pages (issue 11).
	// PayoutListByRecipient is a page of the payouts a user received,
	// newest first (by time, then id), each with its faucet's name: those
	// of p.Coin and p.FaucetID when set, after the payout p.Before in that
	// order (keyset paging) or from the newest when it is 0.
	PayoutListByRecipient(ctx context.Context, p *PayoutListByRecipientParams) ([]ReceivedPayout, error)
	// FaucetListPayers is the faucets that have paid the user, by name.
	FaucetListPayers(ctx context.Context, userID int64) ([]drip.Faucet, error)

	// The operator pages (issue 11, item 6).
	// OperatorLogList is a page of the operator log, newest first: the
	// entries before p.BeforeID, or from the newest when it is 0.
	OperatorLogList(ctx context.Context, p *OperatorLogListParams) ([]OperatorLogEntry, error)
	// UserSearch is a page of the users whose username, email or
	// payout_user_hash contains p.Query (every user when it is ""), in
	// the order they signed up.
	UserSearch(ctx context.Context, p *UserSearchParams) ([]drip.User, error)
	// BalanceTotals sums the balances per coin and holder: users' wallets,
	// faucets' balances, system:deposits and system:listing.
	BalanceTotals(ctx context.Context) ([]BalanceTotal, error)

	ReconcileCoinSums(ctx context.Context) ([]CoinSum, error)
	ReconcileAccounts(ctx context.Context) ([]AccountMismatch, error)
	// ReconcilePayouts is the ids of the payouts ledger.Report.Payouts
	// describes, ascending, each once.
	ReconcilePayouts(ctx context.Context) ([]int64, error)
	// ReconcileEvents is the seqs of the events ledger.Report.Events
	// describes, ascending: none on an engine that keeps no copy of them.
	ReconcileEvents(ctx context.Context) ([]int64, error)
	// ReconcileStatistics is the ids of the faucets whose statistics' sums
	// disagree with the payouts they hold (D73), ascending.
	ReconcileStatistics(ctx context.Context) ([]int64, error)

	// A faucet's API keys page (issue 11).
	// FaucetKeyPending reports whether the faucet has a v1 key rotation
	// waiting to be confirmed (D13); ErrNotFound when there is no faucet.
	FaucetKeyPending(ctx context.Context, id int64) (bool, error)

	// The faucet management pages (issue 11).
	// PayoutSearch is a page of the faucet's payouts, newest first, each
	// with its recipient's payout_user_hash: those matching whichever of
	// coin, recipient and referral p names, and older than the payout
	// p.BeforeID (keyset paging) or from the newest when it is 0.
	PayoutSearch(ctx context.Context, p *PayoutSearchParams) ([]PayoutFound, error)

	// Webhook endpoints (issue 12, D53, D54). An endpoint is always named
	// with its faucet: one of another faucet is ErrNotFound.
	// WebhookEndpointList is the faucet's endpoints, oldest first.
	WebhookEndpointList(ctx context.Context, faucetID int64) ([]WebhookEndpoint, error)
	// WebhookEndpointGet is the faucet's endpoint id; ErrNotFound when the
	// faucet has no such endpoint.
	WebhookEndpointGet(ctx context.Context, faucetID, id int64) (*WebhookEndpoint, error)
	// WebhookEndpointCount counts the faucet's endpoints, enabled or not.
	WebhookEndpointCount(ctx context.Context, faucetID int64) (int, error)

	// Webhook deliveries (issue 12, D50, D52): the outbox the ledger's
	// events fan out into, one row per event and subscribed endpoint.
	// WebhookDeliveryList is a page of the faucet's deliveries, newest
	// first, as p selects them.
	WebhookDeliveryList(ctx context.Context, p *WebhookDeliveryListParams) ([]WebhookDelivery, error)
	// WebhookDeliveryGet is the faucet's delivery id; ErrNotFound when the
	// faucet has no such delivery.
	WebhookDeliveryGet(ctx context.Context, faucetID, id int64) (*WebhookDelivery, error)
	// OutboxAttemptList is every attempt of the delivery, oldest first.
	OutboxAttemptList(ctx context.Context, deliveryID int64) ([]OutboxAttempt, error)
	// WebhookDeliveryCount counts the deliveries in each state, of the
	// whole service (endpointID 0) or of one endpoint.
	WebhookDeliveryCount(ctx context.Context, endpointID int64) (map[string]int64, error)
	// OutboxBacklog is the outbox's rows of kind as metrics show them:
	// how many wait (state pending) and when the oldest was created.
	OutboxBacklog(ctx context.Context, kind string) (pending int64, oldest time.Time, err error)

	// Merchant checkouts (issue 13, spec 4.4).
	// CheckoutGet is the checkout of that public id; ErrNotFound if none.
	CheckoutGet(ctx context.Context, publicID string) (*Checkout, error)
	// CallbackGet is the checkout's callback; ErrNotFound if it has none.
	CallbackGet(ctx context.Context, checkoutID int64) (*Delivery, error)
	// CheckoutList is a page of checkouts, newest first: those paid to the
	// merchant p.MerchantID, or those paid by p.PayerID, older than the
	// checkout p.BeforeID (0: from the newest).
	CheckoutList(ctx context.Context, p *CheckoutListParams) ([]Checkout, error)
}

// Tx is a write transaction. Every write happens through one.
type Tx interface {
	Reader

	// SecretInit stores value under name unless a value is stored already.
	SecretInit(ctx context.Context, name string, value []byte) error

	CoinSetActive(ctx context.Context, symbol string, active bool) error

	AccountCreate(ctx context.Context, kind string, at time.Time) (int64, error)

	UserCreate(ctx context.Context, p *UserCreateParams) (int64, error)
	UserSetPayoutHash(ctx context.Context, id int64, hash string) error
	UserSetStatus(ctx context.Context, id int64, status drip.UserStatus) error
	UserAddressAdd(ctx context.Context, userID int64, coin, address string, at time.Time) error
	// UserAddressRemove unlinks one of the user's addresses (the wallet
	// pages, issue 11); ErrNotFound when the user has not linked it.
	UserAddressRemove(ctx context.Context, userID int64, coin, address string) error
	UserSetPassword(ctx context.Context, p *UserSetPasswordParams) error
	// UserSetEmail replaces the user's email and whether it is verified;
	// ErrConflict when another user has that email.
	UserSetEmail(ctx context.Context, p *UserSetEmailParams) error
	UserSetOperator(ctx context.Context, p *UserSetOperatorParams) error
	// UserSetTOTP stores the encrypted TOTP secret and whether it is on;
	// an empty secret with Enabled false removes the second factor.
	UserSetTOTP(ctx context.Context, p *UserSetTOTPParams) error
	// UserAcceptTOTPStep records p.Step as the user's last accepted TOTP
	// time step only if it is after the last one, in one conditional
	// update: a code replayed inside its window, on this node or another,
	// gets ErrNotFound and changes nothing.
	UserAcceptTOTPStep(ctx context.Context, p *UserAcceptTOTPStepParams) error

	SessionCreate(ctx context.Context, p *SessionCreateParams) (int64, error)
	// SessionTouch records that a live session was used at p.At.
	SessionTouch(ctx context.Context, p *SessionTouchParams) error
	// SessionRenew gives a live session a new token (its old one stops
	// working at once) and records when its second factor was passed;
	// ErrNotFound when the session is revoked or unknown.
	SessionRenew(ctx context.Context, p *SessionRenewParams) error
	// SessionRevoke ends one live session of the user; ErrNotFound when the
	// user has no such live session.
	SessionRevoke(ctx context.Context, p *SessionRevokeParams) error
	// SessionRevokeByUser ends every live session of the user but
	// p.ExceptID (0: all of them) and returns how many it ended.
	SessionRevokeByUser(ctx context.Context, p *SessionRevokeByUserParams) (int64, error)

	AccountTokenCreate(ctx context.Context, p *AccountTokenCreateParams) error
	// AccountTokenUse marks an unused, unexpired token of p.Kind used at
	// p.At and returns it, in one conditional update, so two uses racing
	// cannot both succeed; a used, expired or unknown token is ErrNotFound.
	AccountTokenUse(ctx context.Context, p *AccountTokenUseParams) (*drip.AccountToken, error)

	// RecoveryCodesReplace deletes the user's recovery codes and stores
	// these hashes as the new, unused ones.
	RecoveryCodesReplace(ctx context.Context, p *RecoveryCodesReplaceParams) error
	// RecoveryCodeUse marks an unused code of the user used; ErrNotFound
	// when the user has no such unused code.
	RecoveryCodeUse(ctx context.Context, p *RecoveryCodeUseParams) error

	SecurityLogAdd(ctx context.Context, e *drip.SecurityEvent) (int64, error)

	FaucetCreate(ctx context.Context, p *FaucetCreateParams) (int64, error)
	// FaucetSetPendingKey records a rotation's new key hash next to the current one.
	FaucetSetPendingKey(ctx context.Context, id int64, hash string) error
	// FaucetConfirmKey makes the pending key the only key; ErrNotFound when
	// no rotation is pending.
	FaucetConfirmKey(ctx context.Context, id int64) error
	FaucetUpdateSettings(ctx context.Context, f *drip.Faucet) error
	// FaucetLock serializes payouts of one faucet, so that owner send limits
	// counted inside the transaction cannot be overtaken (D41).
	FaucetLock(ctx context.Context, faucetID int64) error

	// BalanceDebit takes amount from the balance and returns the new balance,
	// or ErrInsufficientFunds when that would go below zero (and then changes nothing).
	BalanceDebit(ctx context.Context, accountID int64, coin string, amount int64) (int64, error)
	// BalanceCredit adds amount (which may be negative only for system:deposits).
	BalanceCredit(ctx context.Context, accountID int64, coin string, amount int64) (int64, error)
	TransferInsert(ctx context.Context, t *Transfer) (int64, error)

	// PayoutsOpen begins a batch of payouts with what the ledger decides it
	// on, in one round trip where the engine pipelines (see
	// PayoutsOpenParams).
	PayoutsOpen(ctx context.Context, p *PayoutsOpenParams) (*PayoutBooks, error)
	// PayoutsInsert writes a batch of payouts in a few set-based statements,
	// in one round trip where the engine pipelines: the senders' debits,
	// their journal transfers, payout rows, the recipients' credits, the
	// keys' spends, the idempotency rows, the notifications and the events.
	// It is the ledger's only write of payouts (D4, D5). A debit that would
	// take a balance below zero fails it with ErrInsufficientFunds, and the
	// transaction must roll back. The debited balances are those
	// PayoutsOpen locked in the same transaction, as the ledger's are: on
	// PostgreSQL a debit updates the row version a search of the key found
	// in the same statement, which the lock keeps the current one.
	PayoutsInsert(ctx context.Context, b *PayoutBatch) error

	PayoutInsert(ctx context.Context, p *drip.Payout, transferID int64) (int64, error)
	EventInsert(ctx context.Context, e *drip.Event) error
	RefusalInsert(ctx context.Context, userID, faucetID int64, at time.Time) error

	// IdempotencyInsert binds an idempotency key to its paid payout;
	// ErrConflict when the faucet has used the key already.
	IdempotencyInsert(ctx context.Context, r *drip.Idempotency) error
	// IdempotencyDeleteBefore forgets keys used before the given time.
	IdempotencyDeleteBefore(ctx context.Context, before time.Time) (int64, error)

	// KeySpendAdd adds micros to a key's spend of the day unless that would
	// take it past capMicros (then ErrLimitReached, nothing added), and
	// returns the new spend. micros is negative only to hand back the spend
	// of a payout refused later in the same transaction.
	KeySpendAdd(ctx context.Context, keyID, day, micros, capMicros int64) (int64, error)

	NotificationInsert(ctx context.Context, n *drip.Notification) (int64, error)
	// NotificationClaim leases up to limit undelivered notifications due at
	// now (fewer than maxAttempts tried) until now+lease, so no other worker
	// takes them meanwhile, and returns them.
	NotificationClaim(ctx context.Context, now time.Time, lease time.Duration, maxAttempts, limit int) ([]drip.Notification, error)
	// NotificationRecord records the outcome of an attempt: delivered
	// (SentAt set, on Channel) or failed with LastError and next tried at
	// nextAttempt, with n.Attempts the attempts made so far (the maximum, to
	// give up).
	NotificationRecord(ctx context.Context, n *drip.Notification, nextAttempt time.Time) error

	// ListingCostSet sets a coin's listing cost; amount 0 withdraws the offer.
	ListingCostSet(ctx context.Context, coin string, amount int64, at time.Time) error
	// ListingRequestCreate records a request whose fee moved in transferID;
	// ErrConflict when the faucet has a pending or approved request.
	ListingRequestCreate(ctx context.Context, r *drip.ListingRequest, transferID int64) (int64, error)
	// ListingRequestDecide approves or rejects a pending request;
	// ErrNotFound when it is not pending.
	ListingRequestDecide(ctx context.Context, id int64, status drip.ListingStatus, at time.Time, refundTransferID int64) error

	AuditInsert(ctx context.Context, e *drip.AuditEntry) (int64, error)

	// The operator pages (issue 11, item 6).
	OperatorLogAdd(ctx context.Context, e *OperatorLogEntry) (int64, error)
	// UserSetEmailVerified marks the user's current email verified;
	// ErrNotFound when there is no such user.
	UserSetEmailVerified(ctx context.Context, id int64) error
	// CoinSetMinPayout sets the smallest amount a send of the coin may
	// pay; ErrNotFound when there is no such coin.
	CoinSetMinPayout(ctx context.Context, symbol string, minPayout int64) error

	KeyCreate(ctx context.Context, k *drip.Key, hash string) (int64, error)
	// KeyRevoke marks a live key revoked; ErrNotFound if there is no such
	// live key.
	KeyRevoke(ctx context.Context, id int64, at time.Time) error

	// A faucet's API keys page (issue 11).
	// KeyTouch records that the key was used at the given time, unless it
	// was recorded as used at that time or later already.
	KeyTouch(ctx context.Context, id int64, at time.Time) error

	// Webhook endpoints (issue 12, D53, D54).
	// WebhookEndpointCreate inserts e (its ID ignored) and returns its id.
	WebhookEndpointCreate(ctx context.Context, e *WebhookEndpoint) (int64, error)
	// WebhookEndpointSetSecret replaces the sealed signing secret of the
	// faucet's endpoint id; ErrNotFound when the faucet has no such endpoint.
	WebhookEndpointSetSecret(ctx context.Context, faucetID, id int64, sealed string, at time.Time) error
	// WebhookEndpointSetEnabled writes e.Enabled, e.DisabledReason and
	// e.UpdatedAt to the endpoint e.ID of the faucet e.FaucetID;
	// ErrNotFound when the faucet has no such endpoint. Disabling parks the
	// endpoint's pending deliveries out of every claim's reach; enabling
	// makes them due at e.UpdatedAt (D52).
	WebhookEndpointSetEnabled(ctx context.Context, e *WebhookEndpoint) error
	// WebhookEndpointDelete deletes the faucet's endpoint id, with its
	// deliveries and their attempts; ErrNotFound when the faucet has no
	// such endpoint.
	WebhookEndpointDelete(ctx context.Context, faucetID, id int64) error

	// Webhook deliveries (issue 12, D50, D52).
	// WebhookDeliveryClaim leases up to limit pending deliveries due at now
	// whose endpoints are enabled, oldest due first, by moving their next
	// attempt to until, and returns them with their endpoint's URL and
	// sealed secret and their event. On PostgreSQL rows another
	// transaction holds are skipped (FOR UPDATE SKIP LOCKED), so claims on
	// several nodes never return one row twice.
	WebhookDeliveryClaim(ctx context.Context, now, until time.Time, limit int) ([]WebhookDelivery, error)
	// OutboxRecordAttempts records attempts, each with its delivery's new
	// state (OutboxRecord.Delivery): one set-based write for all.
	// An attempt whose delivery was recorded meanwhile by another claim
	// (its Tries moved on: this claim's lease had run out) is dropped, so
	// a late record never undoes a later one.
	OutboxRecordAttempts(ctx context.Context, attempts []OutboxRecord) error
	// WebhookEndpointsHealth records which endpoints answered and which
	// failed at time at: a success clears an endpoint's failing_since, a
	// failure sets it unless set. It returns the enabled endpoints of
	// failed whose failing_since is at or before disableBefore: those
	// failing every attempt for too long (D52), for the caller to disable.
	WebhookEndpointsHealth(ctx context.Context, succeeded, failed []int64, at, disableBefore time.Time) ([]WebhookEndpoint, error)
	// OutboxRelease ends the lease of claimed deliveries that
	// were not attempted (the worker is stopping), making them due at
	// at; a delivery recorded meanwhile (its tries moved on) is left.
	OutboxRelease(ctx context.Context, claimed []Delivery, at time.Time) error
	// Merchant checkouts (issue 13, spec 4.4, D55-D57).
	// CheckoutCreate inserts c (open, no quote) and returns its id.
	CheckoutCreate(ctx context.Context, c *Checkout) (int64, error)
	// CheckoutSetQuote holds c.Quote for the open checkout c.ID; false
	// when it is no longer open.
	CheckoutSetQuote(ctx context.Context, c *Checkout) (bool, error)
	// CheckoutPay marks the open checkout c.ID paid with c's payer,
	// transfer, time and token, if its quote is the one in c and has not
	// expired at c.PaidAt; false otherwise (paid already, cancelled, or
	// the quote moved on), when the caller must roll back.
	CheckoutPay(ctx context.Context, c *Checkout) (bool, error)
	// CheckoutCancel cancels the open checkout id; false when it is not
	// open.
	CheckoutCancel(ctx context.Context, id int64) (bool, error)
	// CheckoutVerify marks verified, at at, the paid checkout whose token
	// hashes to tokenHash and returns it, if it was not verified before;
	// ErrNotFound otherwise (D56: a token verifies once).
	CheckoutVerify(ctx context.Context, tokenHash string, at time.Time) (*Checkout, error)

	// CallbackInsert adds the checkout's callback to the outbox (D50,
	// D55): kind callback, due at at.
	CallbackInsert(ctx context.Context, checkoutID int64, at time.Time) (int64, error)
	// CallbackClaim leases up to limit due callbacks, as
	// WebhookDeliveryClaim does webhooks, each with its checkout.
	CallbackClaim(ctx context.Context, now, until time.Time, limit int) ([]CallbackDelivery, error)
	// CallbackResend starts the schedule of the checkout's callback again,
	// due at at, unless it is pending; false when it was.
	CallbackResend(ctx context.Context, checkoutID int64, at time.Time) (bool, error)
	// CallbackAcknowledge ends the checkout's pending callback as
	// delivered at at: the merchant verified the token, which stops the
	// attempts (D55).
	CallbackAcknowledge(ctx context.Context, checkoutID int64, at time.Time) error

	// WebhookDeliveryInsert adds a pending delivery of the event to the
	// faucet's endpoint, due at once (a test event); it returns its id.
	WebhookDeliveryInsert(ctx context.Context, faucetID, endpointID int64, eventID string, at time.Time) (int64, error)
	// WebhookDeliveriesResend starts the schedule again, due at once, for
	// the faucet's deliveries p selects (not pending ones) and returns how
	// many it restarted.
	WebhookDeliveriesResend(ctx context.Context, p *WebhookResendParams, at time.Time) (int64, error)
}

type UserCreateParams struct {
	AccountID     int64
	Username      string
	Email         string
	PasswordHash  string
	EmailVerified bool
	CreatedAt     time.Time
}

type FaucetCreateParams struct {
	OwnerID    int64
	AccountID  int64
	Name       string
	Domain     string
	URL        string
	APIKeyHash string
	Rules      drip.Rules
	CreatedAt  time.Time
}

type UserSetPasswordParams struct {
	ID           int64
	PasswordHash string // argon2id
}

type UserSetEmailParams struct {
	ID       int64
	Email    string
	Verified bool
}

type UserSetOperatorParams struct {
	ID       int64
	Operator bool
}

type UserSetTOTPParams struct {
	ID      int64
	Secret  string // encrypted; never the secret itself
	Enabled bool
}

type UserAcceptTOTPStepParams struct {
	ID   int64
	Step int64 // Unix time / 30 s
}

type SessionCreateParams struct {
	TokenHash  string // SHA-256 of the session token, hex
	UserID     int64
	CreatedAt  time.Time
	ExpiresAt  time.Time
	VerifiedAt time.Time // zero while the second factor is still to pass
	IP         string
	UserAgent  string
}

type SessionListByUserParams struct {
	UserID int64
	At     time.Time
}

type SessionTouchParams struct {
	ID int64
	At time.Time
}

type SessionRenewParams struct {
	ID           int64
	NewTokenHash string
	VerifiedAt   time.Time
}

type SessionRevokeParams struct {
	UserID int64
	ID     int64
	At     time.Time
}

type SessionRevokeByUserParams struct {
	UserID   int64
	ExceptID int64 // 0: none is kept
	At       time.Time
}

type AccountTokenCreateParams struct {
	TokenHash string // SHA-256 of the emailed token, hex
	UserID    int64
	Kind      drip.AccountTokenKind
	NewEmail  string
	CreatedAt time.Time
	ExpiresAt time.Time
}

type AccountTokenUseParams struct {
	TokenHash string
	Kind      drip.AccountTokenKind
	At        time.Time
}

type RecoveryCodesReplaceParams struct {
	UserID int64
	Hashes []string // SHA-256 of each normalized code, hex
}

type RecoveryCodeUseParams struct {
	UserID int64
	Hash   string
	At     time.Time
}

type SecurityLogListParams struct {
	UserID int64
	Limit  int
}

// PageParams select one page of a faucet's or account's rows of one coin.
type PageParams struct {
	ID     int64 // the faucet (StatsUsers) or the account (TransactionList)
	Coin   string
	Limit  int
	Offset int
}

// EventPosition is where an event stands in its faucet's feed (D59),
// which is ordered by TxID, then Seq. On PostgreSQL TxID is the id of the
// transaction that wrote the event (an xid8); on SQLite, whose one writer
// commits in seq order, it is 0. The zero position is before every event.
type EventPosition struct {
	TxID uint64
	Seq  int64
}

// EventFeedParams choose what EventFeed reads.
type EventFeedParams struct {
	FaucetID int64
	After    EventPosition
	Types    []string // the types whose data is read
	Limit    int      // events read, of every type
}

// EventAt is an event and its position in the feed. Event.Data is nil
// when its type is not one the read asked for.
type EventAt struct {
	Position EventPosition
	Event    drip.Event
}

type PayoutListParams struct {
	FaucetID int64
	Coin     string // "" for every coin
	Limit    int
}

// PayoutWindowParams selects the payouts an owner send limit counts (D41).
type PayoutWindowParams struct {
	FaucetID    int64
	Since       time.Time
	Coin        string // "" for every coin
	RecipientID int64  // 0: any recipient
	IPAddress   string // "": any claimer IP (only with RecipientID 0)
}

// Transfer is one journal entry: amount of coin moved from one account to
// another (D2). The journal is append-only.
type Transfer struct {
	Coin      string
	From      int64
	To        int64
	Amount    int64
	Kind      string // "deposit", "payout", ...
	CreatedAt time.Time
}

// BalanceKey names one account's holding of one coin.
type BalanceKey struct {
	Account int64
	Coin    string
}

// PayoutsOpenParams is what PayoutsOpen does, in this order.
type PayoutsOpenParams struct {
	// Faucets are locked as FaucetLock does, in ascending id order
	// (ErrNotFound if one is missing), before anything is read.
	Faucets []int64
	// Balances are read and held for the transaction, so the ledger can
	// decide the batch's debits before making them.
	Balances []BalanceKey
	// Windows are counted as PayoutWindow does, under the faucets' locks.
	Windows []PayoutWindowParams
	// IDs is how many transfer ids and payout ids to reserve for
	// PayoutsInsert.
	IDs int
	// Generation asks for the cache generation too (D63), for payments
	// whose sends read their key, faucet and recipient from memory under
	// a generation not yet confirmed (ledger.Payment.Generation).
	Generation bool
	// Idempotency are the batch's idempotency keys (D35), read under the
	// locks: which of them a payout has bound already.
	Idempotency []IdempotencyKey
}

// IdempotencyKey is an idempotency key of a faucet (D35).
type IdempotencyKey struct {
	FaucetID int64
	Key      string
}

// PayoutBooks is what PayoutsOpen read and reserved.
type PayoutBooks struct {
	Balances               map[BalanceKey]int64    // a balance never held is absent: zero
	Debits                 map[BalanceKey]int64    // each held balance's debit count (D66), before the batch
	Windows                []PayoutCount           // one per PayoutsOpenParams.Windows, in order
	TransferIDs, PayoutIDs []int64                 // IDs each, in ascending order
	Generation             CacheGen                // when PayoutsOpenParams.Generation
	Bound                  map[IdempotencyKey]bool // the PayoutsOpenParams.Idempotency bound already
}

// AsStored is t as a store reads it back: to the microsecond, in UTC.
func AsStored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// DebitCount is how many debits an account's balance of one coin has
// taken (D66).
type DebitCount struct {
	Coin   string
	Debits int64
}

// CacheGen is the cache generation (D63): two counters that only grow,
// each raised in the transaction of every change to what it covers. The
// zero value is no generation (none is ever read as zero).
type CacheGen struct {
	// Keys covers what authenticates a send: keys, faucets and their
	// owners' standing (a change to any user's row raises both).
	Keys int64
	// Recipients covers what a destination resolves to: users and the
	// addresses linked to them.
	Recipients int64
}

// After reports whether g was read after o. Both counters only grow, so of
// two generations read at different moments the later has the larger sum,
// or the same counters when nothing changed in between.
func (g CacheGen) After(o CacheGen) bool { return g.Keys+g.Recipients > o.Keys+o.Recipients }

// PayoutCount is what one send limit's window holds: its payouts and their sum.
type PayoutCount struct{ Count, Sum int64 }

// PayoutBatch is what PayoutsInsert writes.
type PayoutBatch struct {
	// Debits are what the senders pay, summed per account and coin (all
	// positive), applied before the rest.
	Debits  map[BalanceKey]int64
	Payouts []BatchPayout
	// Credits are what the recipients receive, summed per account and coin.
	// The store applies them in one lock order (as it does Debits), so
	// concurrent batches cannot deadlock on shared recipients.
	Credits map[BalanceKey]int64
	Events  []drip.Event
	// Idempotency binds v2 idempotency keys to payouts of the batch (D35).
	Idempotency []drip.Idempotency
	// Notifications are low-balance emails the batch's payouts caused (D43).
	Notifications []drip.Notification
	// Spends add the batch's payouts to their keys' spends of the day (D36).
	Spends    []KeySpend
	CreatedAt time.Time
}

// KeySpend is what a batch adds to a capped key's spend of one day (D36):
// Micros, refused with ErrLimitReached if it would take the spend past
// CapMicros (the ledger decided the payouts against the spend it read, so
// the cap only guards against a spend that went stale).
type KeySpend struct {
	KeyID     int64
	Day       int64 // days since 1970-01-01, UTC
	Micros    int64
	CapMicros int64
}

// BatchPayout is one payout of a PayoutBatch, with its reserved ids.
type BatchPayout struct {
	Payout     drip.Payout // ID reserved by PayoutsOpen
	TransferID int64       // reserved by PayoutsOpen too
	From, To   int64       // faucet and recipient accounts
}

// OperatorLogEntry is one action taken on the operator pages: who, what,
// on what, and its details (JSON, never a secret).
type OperatorLogEntry struct {
	ID         int64
	OperatorID int64
	Operator   string // the operator's username, read back with the entry
	Action     string // "user.suspend", "deposit", ...
	Target     string // what it was done to: "user alice", "faucet 3", "coin BTC"
	Detail     []byte // JSON
	CreatedAt  time.Time
}

type OperatorLogListParams struct {
	BeforeID int64 // 0: from the newest
	Limit    int
}

type UserSearchParams struct {
	Query  string // matched anywhere in username, email or payout_user_hash, in any case
	Limit  int
	Offset int
}

// BalanceTotal is what one kind of holder holds of a coin, over how many
// accounts.
type BalanceTotal struct {
	Coin     string
	Holder   string // "user", "faucet", "system:deposits" or "system:listing"
	Accounts int64
	Amount   int64
}

// CoinSum is a coin whose balances do not sum to zero (D3).
type CoinSum struct {
	Coin string `json:"coin"`
	Sum  int64  `json:"sum"`
}

// AccountMismatch is a balance that differs from the sum of its journal entries (D3).
type AccountMismatch struct {
	AccountID int64  `json:"account_id"`
	Coin      string `json:"coin"`
	Balance   int64  `json:"balance"`
	Journal   int64  `json:"journal"`
}

// AddressOwner is a user who linked a wallet address for a coin.
type AddressOwner struct {
	Coin   string
	UserID int64
}

// PayoutSearchParams filter a faucet's payouts (PayoutSearch); a zero
// filter matches every payout.
type PayoutSearchParams struct {
	FaucetID    int64
	Coin        string // "": every coin
	RecipientID int64  // 0: every recipient
	Referral    string // "": any referral
	BeforeID    int64  // only payouts listed after this one (older); 0: from the newest
	Limit       int
}

// PayoutFound is a payout PayoutSearch found, with its recipient's
// payout_user_hash (D12), which an owner may see.
type PayoutFound struct {
	drip.Payout
	PayoutUserHash string
}

// PayoutListByRecipientParams select a page of the payouts a user
// received (PayoutListByRecipient); a zero filter matches every payout.
type PayoutListByRecipientParams struct {
	UserID   int64  // the recipient
	Coin     string // "": every coin
	FaucetID int64  // 0: every faucet
	Before   int64  // a payout to the user: only those listed after it; 0: from the newest
	Limit    int
}

// ReceivedPayout is a payout as its recipient's wallet lists it.
type ReceivedPayout struct {
	drip.Payout
	FaucetName string
}

// WebhookEndpoint is where a faucet's events are delivered (issue 12,
// D53, D54): an https URL, the event types it receives, and its signing
// secret sealed (internal/seal), never the secret itself.
type WebhookEndpoint struct {
	ID           int64
	FaucetID     int64
	URL          string
	Events       []string // drip.EventPayoutSent, drip.EventPayoutFailed, drip.EventLowBalance
	SecretSealed string
	Enabled      bool
	// DisabledReason is "" while enabled, else why it was disabled:
	// "owner" or "failing" (D52).
	DisabledReason string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// FailingSince is when the first attempt failed since the endpoint's
	// last success; zero while its last attempt succeeded (D52).
	FailingSince time.Time
}

// The states of a webhook delivery.
const (
	DeliveryPending   = "pending"   // waiting for its next attempt
	DeliveryDelivered = "delivered" // a 2xx reply came
	DeliveryFailed    = "failed"    // the schedule ran out (D52)
)

// Delivery is one row of the outbox (D50), whatever its kind: where it
// stands on its schedule.
type Delivery struct {
	ID            int64
	Kind          string // DeliveryWebhook or DeliveryCallback
	State         string // DeliveryPending, DeliveryDelivered, DeliveryFailed
	Attempts      int    // attempts of the current schedule (a resend starts one)
	Tries         int    // every attempt ever: the attempt log's numbering
	NextAttemptAt time.Time
	LastStatus    int    // HTTP status of the last attempt; 0 for none
	LastError     string // why the last attempt failed; "" when it did not
	CreatedAt     time.Time
	DoneAt        time.Time // when delivered or failed; zero while pending
}

// The kinds of outbox delivery.
const (
	DeliveryWebhook  = "webhook"  // a faucet event to an endpoint (D51)
	DeliveryCallback = "callback" // a merchant payment's callback (D55)
)

// WebhookDelivery is one event to one endpoint (D50, D51).
type WebhookDelivery struct {
	Delivery
	EndpointID int64
	FaucetID   int64
	EventID    string

	// Filled by WebhookDeliveryClaim, WebhookDeliveryList and
	// WebhookDeliveryGet: the event's type; and by the claim only, the
	// endpoint's URL and sealed secret and the whole event.
	EventType    string
	URL          string
	SecretSealed string
	Event        drip.Event
}

// CallbackDelivery is a merchant payment's callback (D55), with its
// checkout.
type CallbackDelivery struct {
	Delivery
	Checkout Checkout
}

// OutboxAttempt is one attempt of a delivery (D50).
type OutboxAttempt struct {
	DeliveryID int64
	N          int // 1 for the first attempt ever
	At         time.Time
	Status     int // HTTP status; 0 when no reply came
	Latency    time.Duration
	Error      string
	Reply      string // the first 1 KB of the reply's body
}

// OutboxRecord is an attempt and the state it leaves its
// delivery in: Delivery's State, Attempts, Tries, NextAttemptAt,
// LastStatus, LastError and DoneAt are written.
type OutboxRecord struct {
	Attempt  OutboxAttempt
	Delivery *Delivery
}

// WebhookDeliveryListParams select a page of a faucet's deliveries.
type WebhookDeliveryListParams struct {
	FaucetID   int64
	EndpointID int64  // 0: every endpoint's
	State      string // "": every state
	BeforeID   int64  // keyset paging: older than this delivery; 0 from the newest
	Limit      int
}

// Checkout is a merchant checkout (issue 13): the payment form as posted
// (spec 4.4), the quote held for the buyer (D57), and the payment.
type Checkout struct {
	ID          int64
	PublicID    string // names it in the hosted page's URL
	MerchantID  int64
	Item        string
	Amount1     int64  // in 10^-8 of Currency1
	Currency1   string // USD or a coin
	Currency2   string // "" lets the buyer choose
	Custom      string
	CallbackURL string
	SuccessURL  string
	CancelURL   string
	State       string // CheckoutOpen, CheckoutPaid, CheckoutCancelled
	CreatedAt   time.Time
	Quote       CheckoutQuote // zero until quoted
	PayerID     int64
	TransferID  int64
	PaidAt      time.Time
	TokenHash   string
	TokenSealed string
	VerifiedAt  time.Time
}

// CheckoutQuote is the price held for a checkout's buyer (D57).
type CheckoutQuote struct {
	Coin    string
	Amount  int64  // smallest units of Coin
	Rate    string // Coin per unit of the pricing currency, as a decimal
	Source  string
	PriceAt time.Time
	Expires time.Time
}

// The states of a checkout.
const (
	CheckoutOpen      = "open"
	CheckoutPaid      = "paid"
	CheckoutCancelled = "cancelled"
)

// CheckoutListParams select a page of checkouts: paid to MerchantID, or
// paid by PayerID (one of the two).
type CheckoutListParams struct {
	MerchantID, PayerID int64
	BeforeID            int64
	Limit               int
}

// WebhookResendParams select the deliveries a resend restarts: one
// delivery (ID), or an endpoint's failed deliveries created in [From, To).
type WebhookResendParams struct {
	FaucetID   int64
	ID         int64
	EndpointID int64
	From, To   time.Time
}

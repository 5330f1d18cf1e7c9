package sqlstore

import (
	_ "embed"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

//go:embed queries.sql
var sharedQueries string

// stmt is one statement: its name in the SQL files, which every error it
// returns carries ("PayoutsInsertRows: ..."), so the one log line at the
// edge says which statement failed, and its SQL as the engine runs it.
type stmt struct{ name, sql string }

// queries holds every statement by name; loadQueries fills each field from
// the SQL files and fails if one is missing, so a typo cannot reach runtime.
type queries struct {
	SecretGet, SecretInit                                                           stmt
	CoinList, CoinSetActive                                                         stmt
	AccountCreate                                                                   stmt
	UserGetByID, UserGetByUsername, UserGetByEmail, UserGetByPayoutHash             stmt
	UserGetByAddress, UserCreate, UserSetPayoutHash, UserSetStatus                  stmt
	UserAddressAdd, UserAddressList, UserAddressOwners                              stmt
	UserSetPassword, UserSetEmail, UserSetOperator, UserSetTOTP, UserAcceptTOTPStep stmt
	SessionGet, SessionListByUser, SessionCreate, SessionTouch, SessionRenew        stmt
	SessionRevoke, SessionRevokeByUser, AccountTokenCreate, AccountTokenUse         stmt
	RecoveryCodesDelete, RecoveryCodeInsert, RecoveryCodeUse                        stmt
	RecoveryCodesRemaining, SecurityLogAdd, SecurityLogList                         stmt
	FaucetGetByID, FaucetGetByKeyHash, FaucetListByOwner, FaucetCreate              stmt
	FaucetSetPendingKey, FaucetConfirmKey, FaucetUpdateSettings                     stmt
	FaucetLock                                                                      stmt
	BalanceGet, BalanceList, BalanceDebit, BalanceCredit, BalanceDebits             stmt
	TransferInsert, PayoutInsert, PayoutList, PayoutListByCoin, PayoutExists        stmt
	PayoutWindowFaucet, PayoutWindowsRecipientRows, PayoutWindowsIPRows             stmt // windowCalls
	BalanceLock, PayoutIDsNext                                                      stmt
	TransfersInsertRows, PayoutsInsertRows, BalancesCreditRows, EventsInsertRows    stmt
	KeyCreate, KeyGetByID, KeyGetByHash, KeyListByFaucet, KeyRevoke                 stmt
	EventInsert, EventList, EventGet, EventProbe, Ping                              stmt
	EventFeed                                                                       stmt // the events feed
	RefusalInsert, RefusalCountOthers                                               stmt
	ReconcileCoinSums, ReconcileAccounts, ReconcilePayouts                          stmt
	FaucetListListed                                                                stmt
	IdempotencyGet, IdempotencyInsert, IdempotencyInsertRows, IdempotencyBoundRows  stmt
	IdempotencyGetMany                                                              stmt
	IdempotencyDeleteBefore, KeySpendGet, KeySpendInit, KeySpendAdd                 stmt
	StatsDaily, StatsUsers, StatsUsersCount, TransactionList, TransactionCount      stmt
	StatsFoldRange, StatsFoldDays, StatsFoldDayUsers, StatsFoldUsers, StatsFoldMark stmt // D73
	StatsPending, StatsRebuildUserCounts                                            stmt // D73
	ReconcileStatistics, StatsRebuildUsers, StatsRebuildDays, StatsRebuildDayUsers  stmt // D73
	NotificationInsert, NotificationsInsertRows, NotificationListByFaucet           stmt
	NotificationDue, NotificationLease, NotificationRecord, NotificationBacklog     stmt
	ListingCostList, ListingCostSet, ListingCostDelete                              stmt
	ListingRequestCreate, ListingRequestGet, ListingRequestListByFaucet             stmt
	ListingRequestListByStatus, ListingRequestDecide                                stmt
	AuditInsert, AuditList                                                          stmt
	PayoutListByRecipient, FaucetListPayers, UserAddressRemove                      stmt // the wallet pages
	PayoutListByRecipientCursor                                                     stmt // the wallet pages
	PayoutSearch, PayoutSearchByRecipient                                           stmt // the faucet management pages
	FaucetKeyPending, KeyTouch                                                      stmt // a faucet's API keys page
	OperatorLogAdd, OperatorLogList, UserSearch, UserSetEmailVerified               stmt // the operator pages
	CoinSetMinPayout, BalanceTotals                                                 stmt // the operator pages
	WebhookEndpointCreate, WebhookEndpointList, WebhookEndpointGet                  stmt // webhook endpoints
	WebhookEndpointCount, WebhookEndpointSetSecret, WebhookEndpointSetEnabled       stmt // webhook endpoints
	WebhookEndpointParkDeliveries                                                   stmt
	WebhookEndpointDelete, WebhookEndpointDeleteAttempts                            stmt // webhook endpoints
	WebhookEndpointDeleteDeliveries, WebhookEndpointsHealthy                        stmt // webhook endpoints
	WebhookEndpointsFailing, WebhookDeliveryList, WebhookDeliveryGet                stmt // webhook deliveries
	OutboxAttemptList, WebhookDeliveryCount, OutboxBacklog, OutboxClaim             stmt // webhook deliveries
	WebhookDeliveryClaimed, OutboxAttemptsInsertJSON, OutboxRecordJSON              stmt // webhook deliveries
	WebhookDeliveryInsert, WebhookDeliveriesResend, OutboxReleaseJSON               stmt // webhook deliveries
	CheckoutCreate, CheckoutGet, CheckoutList, CheckoutSetQuote, CheckoutPay        stmt // merchant checkouts
	CheckoutCancel, CheckoutVerify, CallbackInsert, CallbackAcknowledge             stmt // merchant checkouts
	CallbackGet, CallbackClaimed, CheckoutsOfCallbacks, CallbackResend              stmt // merchant callbacks
	MigrationLock, MigrationInit, MigrationApplied, MigrationRecord                 stmt
	CacheGeneration                                                                 stmt // D63

	// The set forms of a payout batch's per-row statements (rowCalls), which
	// an engine defines only where one statement over the batch's rows is
	// as safe as one statement a row.
	FaucetsLockRows, BalancesLockRows, BalancesDebitRows stmt `sql:"optional"`

	// The fan-out of events into webhook deliveries (D50), which an engine
	// defines where no trigger on events makes them: each statement that
	// writes events runs it after them, over the same events (D69).
	EventsFanoutRows stmt `sql:"optional"`

	// The statements of PayoutBulkLoad (store.BulkLoader), in the order it runs them.
	PayoutBulkLoadBefore, PayoutBulkLoadTransfers, PayoutBulkLoadPayouts, PayoutBulkLoadCredits stmt

	// Where an engine keeps a faucet's payouts by recipient in two levels
	// (D71): reconcile's check of the copy against the payouts, and the
	// bulk load's copy of what it stored, with the watermark moved past it.
	ReconcilePayoutsByRecipient, ReconcilePayoutsByFaucet stmt `sql:"optional"`
	ReconcileEventsByFaucet                               stmt `sql:"optional"`
	PayoutBulkLoadByRecipient, PayoutBulkLoadWatermark    stmt `sql:"optional"`
	PayoutBulkLoadByFaucet, PayoutBulkLoadFaucetWatermark stmt `sql:"optional"`

	// Where payout ids commit out of order (PostgreSQL), the horizon below
	// which the statistics' fold may go (D73).
	StatsHorizonNext, StatsHorizonSet stmt `sql:"optional"`
}

var (
	nameLine = regexp.MustCompile(`(?m)^-- name: (\w+)\s*$`)
	include  = regexp.MustCompile(`\{\{(\w+)\}\}`)
)

// parseQueries splits a file of "-- name: X" blocks into a map.
func parseQueries(src string, into map[string]string) {
	locs := nameLine.FindAllStringSubmatchIndex(src, -1)
	for i, loc := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		into[src[loc[2]:loc[3]]] = statementBody(src[loc[1]:end])
	}
}

// statementBody is one block's statement without the comment lines that
// follow it (the heading of the next group of statements) and without its
// final semicolon. Whatever follows a statement's ";" makes SQLite's
// driver take the text for a script of several statements, which it
// parses again on every call instead of running the prepared statement.
func statementBody(block string) string {
	body := strings.TrimSpace(block)
	for {
		i := strings.LastIndexByte(body, '\n')
		if !strings.HasPrefix(strings.TrimSpace(body[i+1:]), "--") {
			break
		}
		body = strings.TrimSpace(body[:max(i, 0)])
	}
	return strings.TrimSuffix(body, ";")
}

// statements is every statement by name as an engine defines it: the
// shared file's, then the engine's overrides.
func statements(overrides string) map[string]string {
	m := map[string]string{}
	parseQueries(sharedQueries, m)
	parseQueries(overrides, m)
	return m
}

// expand replaces each {{Name}} in sql by the named block of m.
func expand(m map[string]string, sql string) string {
	return include.ReplaceAllStringFunc(sql, func(ref string) string {
		return m[ref[2:len(ref)-2]]
	})
}

// QueryText is the statement name as an engine with overrides runs it,
// before its placeholders are rebound, for tests that read its plan.
func QueryText(overrides, name string) (string, bool) {
	m := statements(overrides)
	sql, ok := m[name]
	return expand(m, sql), ok
}

func loadQueries(overrides string, rebind func(string) string) (*queries, error) {
	m := statements(overrides)
	q := &queries{}
	v := reflect.ValueOf(q).Elem()
	for i := 0; i < v.NumField(); i++ {
		field := v.Type().Field(i)
		name := field.Name
		sql, ok := m[name]
		if !ok && field.Tag.Get("sql") == "optional" {
			v.Field(i).Set(reflect.ValueOf(stmt{name: name}))
			continue
		}
		if !ok {
			return nil, fmt.Errorf("sqlstore: query %s is not defined", name)
		}
		v.Field(i).Set(reflect.ValueOf(stmt{name: name, sql: rebind(expand(m, sql))}))
	}
	return q, nil
}

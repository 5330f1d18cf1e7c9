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

// queries holds every statement by name; loadQueries fills each field from
// the SQL files and fails if one is missing, so a typo cannot reach runtime.
type queries struct {
	SecretGet, SecretInit                                                        string
	CoinList, CoinSetActive                                                      string
	AccountCreate                                                                string
	UserGetByID, UserGetByUsername, UserGetByEmail, UserGetByPayoutHash          string
	UserGetByAddress, UserCreate, UserSetPayoutHash, UserSetStatus               string
	UserAddressAdd, UserAddressList                                              string
	FaucetGetByID, FaucetGetByKeyHash, FaucetListByOwner, FaucetCreate           string
	FaucetSetPendingKey, FaucetConfirmKey, FaucetUpdateSettings                  string
	FaucetLock                                                                   string
	BalanceGet, BalanceList, BalanceDebit, BalanceCredit                         string
	TransferInsert, PayoutInsert, PayoutList, PayoutListByCoin, PayoutExists     string
	PayoutWindowFaucet, PayoutWindowRecipient, PayoutWindowIP                    string
	BalancesLock, BalancesDebit, TransferIDsNext, PayoutIDsNext                  string
	TransfersInsertJSON, PayoutsInsertJSON, BalancesCreditJSON, EventsInsertJSON string
	KeyCreate, KeyGetByID, KeyGetByHash, KeyListByFaucet, KeyRevoke              string
	EventInsert, EventList, EventGet, EventProbe, Ping                           string
	RefusalInsert, RefusalCountOthers                                            string
	ReconcileCoinSums, ReconcileAccounts, ReconcilePayouts                       string
	FaucetListListed                                                             string
	IdempotencyGet, IdempotencyInsert, IdempotencyInsertJSON                     string
	IdempotencyDeleteBefore, KeySpendGet, KeySpendInit, KeySpendAdd              string
	StatsDaily, StatsUsers, StatsUsersCount, TransactionList, TransactionCount   string
	NotificationInsert, NotificationsInsertJSON, NotificationListByFaucet        string
	NotificationDue, NotificationLease, NotificationRecord                       string
	ListingCostList, ListingCostSet, ListingCostDelete                           string
	ListingRequestCreate, ListingRequestGet, ListingRequestListByFaucet          string
	ListingRequestListByStatus, ListingRequestDecide                             string
	AuditInsert, AuditList                                                       string
	MigrationLock, MigrationInit, MigrationApplied, MigrationRecord              string

	// The statements of PayoutBulkLoad (store.BulkLoader), in the order it runs them.
	PayoutBulkLoadBefore, PayoutBulkLoadTransfers, PayoutBulkLoadPayouts, PayoutBulkLoadCredits string
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
		body := strings.TrimSpace(src[loc[1]:end])
		body = strings.TrimSuffix(body, ";")
		into[src[loc[2]:loc[3]]] = body
	}
}

func loadQueries(overrides string, rebind func(string) string) (*queries, error) {
	m := map[string]string{}
	parseQueries(sharedQueries, m)
	parseQueries(overrides, m)
	q := &queries{}
	v := reflect.ValueOf(q).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		sql, ok := m[name]
		if !ok {
			return nil, fmt.Errorf("sqlstore: query %s is not defined", name)
		}
		sql = include.ReplaceAllStringFunc(sql, func(ref string) string {
			return m[ref[2:len(ref)-2]]
		})
		v.Field(i).SetString(rebind(sql))
	}
	return q, nil
}

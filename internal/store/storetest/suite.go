package storetest

import (
	"testing"

	"github.com/dripfaucet/drip/internal/store"
)

// Run is the suite every engine must pass (D30, D31). open returns a fresh,
// migrated store that the test owns; every subtest opens its own, so they
// run in parallel without seeing each other's rows.
//
// The tests live in one file per concern (users.go, ledger.go, ...); the
// factories they share are in fixtures.go.
func Run(t *testing.T, open func(testing.TB) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, st store.Store)
	}{
		// secrets.go, coins.go
		{"SecretInitKeepsTheFirstValue", testSecretInitKeepsTheFirstValue},
		{"CoinsSeededWithTheBuiltinsInOrder", testCoinsSeededWithTheBuiltinsInOrder},
		{"CoinSetActiveTogglesAndRefusesUnknownCoins", testCoinSetActive},
		// users.go
		{"UserGetByEveryKey", testUserGetByEveryKey},
		{"UserDuplicatesAreConflicts", testUserDuplicatesAreConflicts},
		{"UserMissingIsNotFound", testUserMissingIsNotFound},
		{"UserSetStatus", testUserSetStatus},
		{"AddressUniquePerCoin", testAddressUniquePerCoin},
		// accounts.go
		{"UserAccountSettersRoundTrip", testUserAccountSettersRoundTrip},
		{"UserAcceptTOTPStepOnlyForward", testUserAcceptTOTPStepOnlyForward},
		{"Sessions", testSessions},
		{"AccountTokenUseOnce", testAccountTokenUseOnce},
		{"RecoveryCodesSingleUse", testRecoveryCodesSingleUse},
		{"SecurityLogNewestFirstPerUser", testSecurityLogNewestFirstPerUser},
		// faucets.go
		{"FaucetCreateAndGet", testFaucetCreateAndGet},
		{"FaucetKeyRotation", testFaucetKeyRotation},
		{"FaucetUpdateSettingsRoundTrips", testFaucetUpdateSettingsRoundTrips},
		{"FaucetSettingsAndLowBalanceRoundTrip", testFaucetSettingsAndLowBalanceRoundTrip},
		{"FaucetListByOwner", testFaucetListByOwner},
		{"FaucetLock", testFaucetLock},
		// cachegen.go
		{"CacheGeneration", testCacheGeneration},
		// ledger.go, reconcile.go
		{"AccountCreateReturnsNewIDsOfKnownKinds", testAccountCreate},
		{"BalanceOfNeverHeldCoinIsZero", testBalanceOfNeverHeldCoinIsZero},
		{"BalanceCreditAndList", testBalanceCreditAndList},
		{"BalanceDebitRefusesOverdraftAndChangesNothing", testBalanceDebitRefusesOverdraft},
		{"BalanceNeverNegativeExceptDeposits", testBalanceNeverNegativeExceptDeposits},
		{"PayoutsOpenAndDebit", testPayoutsOpenAndDebit},
		{"ConcurrentDebitsNeverOverdraw", testConcurrentDebits},
		{"TransferInsertChecksItsRow", testTransferInsert},
		{"TransactionListSignedNewestFirstAndPaged", testTransactionListSignedNewestFirst},
		{"ReconcileCleanLedgerIsEmpty", testReconcileClean},
		{"ReconcileFindsABrokenLedger", testReconcileBroken},
		{"ReconcileFindsAPayoutNamingNobody", testReconcileNamesNobody},
		// payouts.go, events.go, refusals.go
		{"PayoutListNewestFirstWithCoinAndLimit", testPayoutList},
		{"PayoutWindowCounts", testPayoutWindow},
		{"PayoutBulkLoadPaysRoundRobinAndReconciles", testPayoutBulkLoad},
		{"EventInsertAndList", testEvents},
		{"EventFeedReadsInOrderPerFaucet", testEventFeedReadsInOrderPerFaucet}, // feed.go
		{"EventFeedHoldsBackWhatAnOpenTransactionPrecedes", testEventFeedHoldsBackWhatAnOpenTransactionPrecedes},
		{"EventFeedPagesThroughConcurrentWritersWithoutGapsOrRepeats", testEventFeedPagesThroughConcurrentWritersWithoutGapsOrRepeats},
		{"RefusalCountOthersCountsDistinctOtherFaucets", testRefusalCountOthers},
		// keys.go, idempotency.go
		{"Keys", testKeys},
		{"KeySpendAddUpToTheCapPerKeyAndDay", testKeySpendAddUpToTheCap},
		{"PayoutBatchSpendPastTheCapWritesNothing", testPayoutBatchSpendGuard},
		{"IdempotencyInsertGetAndDeleteBefore", testIdempotencyInsertGetAndDelete},
		{"IdempotencyWrittenWithPayoutBatchOrFailsIt", testIdempotencyWrittenWithPayoutBatch},
		// stats.go, notifications.go, listing.go, audit.go
		{"StatsDailyByUTCDayAndCoin", testStatsDailyByUTCDayAndCoin},
		{"StatsUsersLargestFirstAndPaged", testStatsUsersLargestFirstAndPaged},
		{"StatsFoldedAgree", testStatsFoldedAgree},
		{"StatsUsersPagedByRank", testStatsUsersPagedByRank},
		{"StatsFoldWaitsForOpenPayouts", testStatsFoldWaitsForOpenPayouts},
		{"NotificationInsertAndListNewestFirst", testNotificationInsertAndList},
		{"NotificationClaimLeasesAndRecordEnds", testNotificationClaimLeaseAndRecord},
		{"NotificationBacklogCountsWhatAwaitsDelivery", testNotificationBacklog},
		{"ListingCostSetListAndWithdraw", testListingCosts},
		{"ListingRequestsOneOpenPerFaucet", testListingRequests},
		{"AuditInsertAndListNewestFirstPerFaucet", testAuditInsertAndList},
		// wallet.go
		{"PayoutListByRecipientNewestFirstFilteredAndPaged", testPayoutListByRecipient}, {"PayoutListByRecipientMergesFaucets", testPayoutListByRecipientMerges}, {"FaucetListPayersByName", testFaucetListPayers}, {"UserAddressRemoveOnlyTheUsersOwn", testUserAddressRemove},
		{"PayoutSearchFiltersAndPages", testPayoutSearchFiltersAndPages}, // manage.go
		// operator.go
		{"OperatorLogNewestFirstAndPaged", testOperatorLogNewestFirstAndPaged}, {"UserSearchBySubstringPaged", testUserSearchBySubstringPaged}, {"UserSetEmailVerified", testUserSetEmailVerified}, {"CoinSetMinPayout", testCoinSetMinPayout}, {"BalanceTotalsPerCoinAndHolder", testBalanceTotalsPerCoinAndHolder},
		{"FaucetKeyPending", testFaucetKeyPending}, {"KeyTouchOnlyForward", testKeyTouchOnlyForward}, // keypage.go
		{"WebhookEndpointsRoundTrip", testWebhookEndpointsRoundTrip}, {"WebhookEndpointsOfAnotherFaucetNotFound", testWebhookEndpointsOfAnotherFaucetNotFound}, // webhooks.go
		// deliveries.go
		{"WebhookFanOutInTheEventsTransaction", testWebhookFanOut}, {"WebhookClaimLeasesAndRecordMovesOn", testWebhookClaimAndRecord},
		{"WebhookClaimsDisjoint", testWebhookClaimsDisjoint}, {"WebhookResendRestarts", testWebhookResend}, {"WebhookStaleRecordDropped", testWebhookStaleRecordDropped},
		{"WebhookEndpointHealth", testWebhookEndpointHealth}, {"WebhookEndpointDeleteTakesDeliveries", testWebhookEndpointDeleteTakesDeliveries},
		{"CheckoutLifecycle", testCheckoutLifecycle}, // checkouts.go
		// transact.go, migrations.go, errors.go
		{"TransactCommitsOnNil", testTransactCommits},
		{"TransactRollsBackOnError", testTransactRollsBackOnError},
		{"TransactRollsBackAndRepanicsOnPanic", testTransactRollsBackOnPanic},
		{"TransactWritesInvisibleOutsideUntilCommit", testTransactIsolation},
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"ErrorsNameTheirStatement", testErrorsNameTheirStatement},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, open(t))
		})
	}
}

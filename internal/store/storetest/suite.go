package storetest

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// t0 is the suite's reference time: microsecond precision, as stored (D30).
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// faucetOpts compares faucets read back from JSON columns: an empty list
// may come back as nil, and netip.Prefix compares by value.
var faucetOpts = cmp.Options{
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// Run is the suite every engine must pass (D30, D31). open returns a fresh,
// migrated store that the test owns; every subtest opens its own, so they
// run in parallel without seeing each other's rows.
func Run(t *testing.T, open func(testing.TB) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, st store.Store)
	}{
		{"SecretInitKeepsTheFirstValue", testSecretInitKeepsTheFirstValue},
		{"CoinsSeededWithTheBuiltinsInOrder", testCoinsSeededWithTheBuiltinsInOrder},
		{"CoinSetActiveTogglesAndRefusesUnknownCoins", testCoinSetActive},
		{"AccountCreateReturnsNewIDsOfKnownKinds", testAccountCreate},
		{"UserGetByEveryKey", testUserGetByEveryKey},
		{"UserDuplicatesAreConflicts", testUserDuplicatesAreConflicts},
		{"UserMissingIsNotFound", testUserMissingIsNotFound},
		{"UserSetStatus", testUserSetStatus},
		{"AddressUniquePerCoin", testAddressUniquePerCoin},
		{"FaucetCreateAndGet", testFaucetCreateAndGet},
		{"FaucetKeyRotation", testFaucetKeyRotation},
		{"FaucetUpdateSettingsRoundTrips", testFaucetUpdateSettingsRoundTrips},
		{"FaucetListByOwner", testFaucetListByOwner},
		{"FaucetLock", testFaucetLock},
		{"ErrorsNameTheirStatement", testErrorsNameTheirStatement},
		{"BalanceOfNeverHeldCoinIsZero", testBalanceOfNeverHeldCoinIsZero},
		{"BalanceCreditAndList", testBalanceCreditAndList},
		{"BalanceDebitRefusesOverdraftAndChangesNothing", testBalanceDebitRefusesOverdraft},
		{"BalanceNeverNegativeExceptDeposits", testBalanceNeverNegativeExceptDeposits},
		{"TransferInsertChecksItsRow", testTransferInsert},
		{"PayoutListNewestFirstWithCoinAndLimit", testPayoutList},
		{"PayoutWindowCounts", testPayoutWindow},
		{"PayoutBulkLoadPaysRoundRobinAndReconciles", testPayoutBulkLoad},
		{"Keys", testKeys},
		{"BalancesLockAndDebit", testBalancesLockAndDebit},
		{"EventInsertAndList", testEvents},
		{"RefusalCountOthersCountsDistinctOtherFaucets", testRefusalCountOthers},
		{"TransactCommitsOnNil", testTransactCommits},
		{"TransactRollsBackOnError", testTransactRollsBackOnError},
		{"TransactRollsBackAndRepanicsOnPanic", testTransactRollsBackOnPanic},
		{"TransactWritesInvisibleOutsideUntilCommit", testTransactIsolation},
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"ReconcileCleanLedgerIsEmpty", testReconcileClean},
		{"ReconcileFindsABrokenLedger", testReconcileBroken},
		{"ConcurrentDebitsNeverOverdraw", testConcurrentDebits},
		{"FaucetSettingsAndLowBalanceRoundTrip", testFaucetSettingsAndLowBalanceRoundTrip},
		{"IdempotencyInsertGetAndDeleteBefore", testIdempotencyInsertGetAndDelete},
		{"IdempotencyWrittenWithPayoutBatchOrFailsIt", testIdempotencyWrittenWithPayoutBatch},
		{"KeySpendAddUpToTheCapPerKeyAndDay", testKeySpendAddUpToTheCap},
		{"StatsDailyByUTCDayAndCoin", testStatsDailyByUTCDayAndCoin},
		{"StatsUsersLargestFirstAndPaged", testStatsUsersLargestFirstAndPaged},
		{"TransactionListSignedNewestFirstAndPaged", testTransactionListSignedNewestFirst},
		{"NotificationInsertAndListNewestFirst", testNotificationInsertAndList},
		{"NotificationClaimLeasesAndRecordEnds", testNotificationClaimLeaseAndRecord},
		{"NotificationBacklogCountsWhatAwaitsDelivery", testNotificationBacklog},
		{"ListingCostSetListAndWithdraw", testListingCosts},
		{"ListingRequestsOneOpenPerFaucet", testListingRequests},
		{"AuditInsertAndListNewestFirstPerFaucet", testAuditInsertAndList},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, open(t))
		})
	}
}

// transact runs fn in a transaction and fails the test if it does not commit.
func transact(t testing.TB, st store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := st.Transact(ctx, func(tx store.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("Transact: %v", err)
	}
}

// try runs fn in a transaction and returns its outcome, for expected failures.
func try(st store.Store, fn func(ctx context.Context, tx store.Tx) error) error {
	ctx := context.Background()
	return st.Transact(ctx, func(tx store.Tx) error { return fn(ctx, tx) })
}

// newUser creates a verified, active user with a wallet account and a payout hash.
func newUser(t testing.TB, st store.Store, name string) *drip.User {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "user", t0)
		if err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{
			AccountID: acct, Username: name, Email: name + "@example.com",
			PasswordHash: "argon2id$" + name, EmailVerified: true, CreatedAt: t0,
		})
		if err != nil {
			return err
		}
		return tx.UserSetPayoutHash(ctx, id, fmt.Sprintf("%040x", id))
	})
	u, err := st.UserGetByID(context.Background(), id)
	if err != nil {
		t.Fatalf("UserGetByID(%d): %v", id, err)
	}
	return u
}

// newFaucet creates a faucet of owner with its own account and key hash.
func newFaucet(t testing.TB, st store.Store, owner *drip.User, keyHash string) *drip.Faucet {
	t.Helper()
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "faucet", t0)
		if err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: owner.ID, AccountID: acct, Name: "Faucet " + keyHash,
			Domain: keyHash + ".example.com", URL: "https://" + keyHash + ".example.com/",
			APIKeyHash: keyHash, Rules: drip.DefaultRules, CreatedAt: t0,
		})
		return err
	})
	f, err := st.FaucetGetByID(context.Background(), id)
	if err != nil {
		t.Fatalf("FaucetGetByID(%d): %v", id, err)
	}
	return f
}

// move applies a correct double-entry transfer, as the ledger does (D2).
func move(ctx context.Context, tx store.Tx, coin string, from, to, amount int64, kind string, at time.Time) (int64, error) {
	var err error
	if from == drip.AccountDeposits {
		_, err = tx.BalanceCredit(ctx, from, coin, -amount)
	} else {
		_, err = tx.BalanceDebit(ctx, from, coin, amount)
	}
	if err != nil {
		return 0, err
	}
	if _, err := tx.BalanceCredit(ctx, to, coin, amount); err != nil {
		return 0, err
	}
	return tx.TransferInsert(ctx, &store.Transfer{Coin: coin, From: from, To: to, Amount: amount, Kind: kind, CreatedAt: at})
}

// deposit funds account with amount of coin from system:deposits.
func deposit(t testing.TB, st store.Store, account int64, coin string, amount int64) {
	t.Helper()
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := move(ctx, tx, coin, drip.AccountDeposits, account, amount, "deposit", t0)
		return err
	})
}

// pay records a correct payout (transfer, balances, payout row) and returns it with its id.
func pay(t testing.TB, st store.Store, f *drip.Faucet, r *drip.User, coin string, amount int64, ip string, at time.Time) drip.Payout {
	t.Helper()
	p := drip.Payout{FaucetID: f.ID, RecipientID: r.ID, To: r.Username, Coin: coin, Amount: amount,
		IPAddress: ip, Referral: "ref", CreatedAt: at}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		transfer, err := move(ctx, tx, coin, f.AccountID, r.AccountID, amount, "payout", at)
		if err != nil {
			return err
		}
		p.ID, err = tx.PayoutInsert(ctx, &p, transfer)
		return err
	})
	return p
}

func balance(t testing.TB, st store.Store, account int64, coin string) int64 {
	t.Helper()
	b, err := st.BalanceGet(context.Background(), account, coin)
	if err != nil {
		t.Fatalf("BalanceGet(%d, %s): %v", account, coin, err)
	}
	return b
}

func testSecretInitKeepsTheFirstValue(t *testing.T, st store.Store) {
	ctx := context.Background()
	if _, err := st.SecretGet(ctx, "hash_key"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SecretGet of an unset secret: err = %v, want ErrNotFound", err)
	}
	first := []byte{0x00, 0x01, 0xfe, 0xff, 'a'}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "hash_key", first) })
	// A second node starting, or an admin command, must not replace the
	// secret: every payout_user_hash depends on it (D12).
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "hash_key", []byte("second")) })
	got, err := st.SecretGet(ctx, "hash_key")
	if err != nil {
		t.Fatalf("SecretGet: %v", err)
	}
	if diff := cmp.Diff(first, got); diff != "" {
		t.Errorf("secret after a second SecretInit (-want +got):\n%s", diff)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.SecretInit(ctx, "other", []byte("x")) })
	if got, err := st.SecretGet(ctx, "other"); err != nil || string(got) != "x" {
		t.Errorf("SecretGet(other) = %q, %v; want \"x\", nil", got, err)
	}
}

// builtinCoins is the coin set the first migration of every engine seeds,
// in its order (the order of the currencies operation, spec 2.6).
var builtinCoins = []drip.Coin{
	{Symbol: "BTC", Name: "Bitcoin"}, {Symbol: "ETH", Name: "Ethereum"},
	{Symbol: "DOGE", Name: "Dogecoin"}, {Symbol: "LTC", Name: "Litecoin"},
	{Symbol: "BCH", Name: "Bitcoin Cash"}, {Symbol: "DASH", Name: "Dash"},
	{Symbol: "DGB", Name: "DigiByte"}, {Symbol: "TRX", Name: "Tron"},
	{Symbol: "USDT", Name: "Tether"}, {Symbol: "BNB", Name: "Binance Coin"},
	{Symbol: "SOL", Name: "Solana"}, {Symbol: "XRP", Name: "Ripple"},
}

func testCoinsSeededWithTheBuiltinsInOrder(t *testing.T, st store.Store) {
	var want []drip.Coin
	for _, c := range builtinCoins {
		c.Active, c.MinPayout = true, 1
		want = append(want, c)
	}
	got, err := st.CoinList(context.Background())
	if err != nil {
		t.Fatalf("CoinList: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CoinList of a fresh store (-want +got):\n%s", diff)
	}
}

func testCoinSetActive(t *testing.T, st store.Store) {
	ctx := context.Background()
	active := func() map[string]bool {
		coins, err := st.CoinList(ctx)
		if err != nil {
			t.Fatalf("CoinList: %v", err)
		}
		m := map[string]bool{}
		for _, c := range coins {
			m[c.Symbol] = c.Active
		}
		return m
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, "DOGE", false) })
	if got := active(); got["DOGE"] || !got["BTC"] || len(got) != 12 {
		t.Errorf("after disabling DOGE: %v; want DOGE off, the rest on", got)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, "DOGE", true) })
	if got := active(); !got["DOGE"] {
		t.Errorf("after enabling DOGE again: %v; want DOGE on", got)
	}
	for _, symbol := range []string{"NOPE", "doge", ""} {
		err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.CoinSetActive(ctx, symbol, false) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("CoinSetActive(%q): err = %v, want ErrNotFound", symbol, err)
		}
	}
}

func testAccountCreate(t *testing.T, st store.Store) {
	seen := map[int64]bool{}
	for _, kind := range []string{"user", "faucet", "system", "user"} {
		var id int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			id, err = tx.AccountCreate(ctx, kind, t0)
			return err
		})
		// Ids 1 and 2 are the fixed system accounts (D2).
		if id <= drip.AccountListing || seen[id] {
			t.Errorf("AccountCreate(%s) = %d; want a new id above %d (seen %v)", kind, id, drip.AccountListing, seen)
		}
		seen[id] = true
		if b := balance(t, st, id, "BTC"); b != 0 {
			t.Errorf("balance of new account %d = %d, want 0", id, b)
		}
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.AccountCreate(ctx, "bogus", t0)
		return err
	})
	if err == nil {
		t.Error("AccountCreate of an unknown kind succeeded; want the CHECK to refuse it")
	}
	// Foreign keys are on (D30): no balance of an account that does not exist.
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceCredit(ctx, 999999, "BTC", 5)
		return err
	})
	if err == nil {
		t.Error("BalanceCredit to account 999999, which does not exist, succeeded; want a foreign key error")
	}
}

func testUserGetByEveryKey(t *testing.T, st store.Store) {
	ctx := context.Background()
	// A time with nanoseconds in another zone comes back in UTC, to the microsecond (D30).
	created := time.Date(2026, 3, 14, 16, 9, 26, 123456789, time.FixedZone("CET", 3600))
	var id, acct int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if acct, err = tx.AccountCreate(ctx, "user", created); err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{
			AccountID: acct, Username: "alice", Email: "alice@example.com",
			PasswordHash: "argon2id$x", EmailVerified: true, CreatedAt: created,
		})
		if err != nil {
			return err
		}
		if err := tx.UserSetPayoutHash(ctx, id, "00112233445566778899aabbccddeeff00112233"); err != nil {
			return err
		}
		return tx.UserAddressAdd(ctx, id, "BTC", "bc1qalice", created)
	})
	want := &drip.User{
		ID: id, AccountID: acct, Username: "alice", Email: "alice@example.com", PasswordHash: "argon2id$x",
		EmailVerified: true, Status: drip.UserActive, PayoutUserHash: "00112233445566778899aabbccddeeff00112233",
		CreatedAt: created.Truncate(time.Microsecond),
	}
	lookups := map[string]func() (*drip.User, error){
		"UserGetByID":         func() (*drip.User, error) { return st.UserGetByID(ctx, id) },
		"UserGetByUsername":   func() (*drip.User, error) { return st.UserGetByUsername(ctx, "alice") },
		"UserGetByEmail":      func() (*drip.User, error) { return st.UserGetByEmail(ctx, "alice@example.com") },
		"UserGetByPayoutHash": func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, want.PayoutUserHash) },
		"UserGetByAddress":    func() (*drip.User, error) { return st.UserGetByAddress(ctx, "BTC", "bc1qalice") },
	}
	for name, get := range lookups {
		got, err := get()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("%s: CreatedAt in %v, want UTC", name, got.CreatedAt.Location())
		}
	}
	// A user without a payout hash yet reads as "" (not an error).
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		a, err := tx.AccountCreate(ctx, "user", t0)
		if err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: a, Username: "nohash", Email: "nohash@example.com", CreatedAt: t0})
		return err
	})
	got, err := st.UserGetByID(ctx, id)
	if err != nil || got.PayoutUserHash != "" || got.EmailVerified || got.Status != drip.UserActive {
		t.Errorf("UserGetByID(new user without hash) = %+v, %v; want active, unverified, empty hash", got, err)
	}
}

func testUserDuplicatesAreConflicts(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	create := func(username, email string) func(ctx context.Context, tx store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "user", t0)
			if err != nil {
				return err
			}
			_, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: username, Email: email, CreatedAt: t0})
			return err
		}
	}
	cases := []struct {
		name string
		fn   func(ctx context.Context, tx store.Tx) error
	}{
		{"username taken", create("alice", "other@example.com")},
		{"email taken", create("carol", "alice@example.com")},
		{"payout hash taken", func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPayoutHash(ctx, bob.ID, alice.PayoutUserHash)
		}},
		{"account taken", func(ctx context.Context, tx store.Tx) error {
			_, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: alice.AccountID, Username: "dave", Email: "dave@example.com", CreatedAt: t0})
			return err
		}},
	}
	for _, c := range cases {
		if err := try(st, c.fn); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: err = %v, want ErrConflict", c.name, err)
		}
	}
	// The refused writes left nothing behind.
	if _, err := st.UserGetByUsername(context.Background(), "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UserGetByUsername(carol) after a refused create: err = %v, want ErrNotFound", err)
	}
	if got, _ := st.UserGetByID(context.Background(), bob.ID); got == nil || got.PayoutUserHash != bob.PayoutUserHash {
		t.Errorf("bob after a refused hash change = %+v; want hash %s kept", got, bob.PayoutUserHash)
	}
}

func testUserMissingIsNotFound(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserAddressAdd(ctx, alice.ID, "BTC", "bc1qalice", t0)
	})
	lookups := map[string]func() (*drip.User, error){
		"UserGetByID":                  func() (*drip.User, error) { return st.UserGetByID(ctx, alice.ID+1000) },
		"UserGetByUsername":            func() (*drip.User, error) { return st.UserGetByUsername(ctx, "nobody") },
		"UserGetByUsername wrong case": func() (*drip.User, error) { return st.UserGetByUsername(ctx, "ALICE") },
		"UserGetByEmail":               func() (*drip.User, error) { return st.UserGetByEmail(ctx, "nobody@example.com") },
		"UserGetByPayoutHash":          func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, fmt.Sprintf("%040x", 999999)) },
		"UserGetByPayoutHash empty":    func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, "") },
		"UserGetByAddress":             func() (*drip.User, error) { return st.UserGetByAddress(ctx, "BTC", "bc1qnobody") },
		"UserGetByAddress other coin":  func() (*drip.User, error) { return st.UserGetByAddress(ctx, "LTC", "bc1qalice") },
	}
	for name, get := range lookups {
		u, err := get()
		if !errors.Is(err, store.ErrNotFound) || u != nil {
			t.Errorf("%s: (%+v, %v), want (nil, ErrNotFound)", name, u, err)
		}
	}
	for name, fn := range map[string]func(ctx context.Context, tx store.Tx) error{
		"UserSetStatus":     func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, 999999, drip.UserSuspended) },
		"UserSetPayoutHash": func(ctx context.Context, tx store.Tx) error { return tx.UserSetPayoutHash(ctx, 999999, "x") },
	} {
		if err := try(st, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown user: err = %v, want ErrNotFound", name, err)
		}
	}
	if got, err := st.UserAddressList(ctx, 999999); err != nil || len(got) != 0 {
		t.Errorf("UserAddressList(unknown user) = %v, %v; want empty", got, err)
	}
}

func testUserSetStatus(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetStatus(ctx, alice.ID, drip.UserSuspended)
	})
	got, err := st.UserGetByID(ctx, alice.ID)
	if err != nil || got.Status != drip.UserSuspended || got.Payable() {
		t.Errorf("alice after suspension = %+v, %v; want suspended and not payable", got, err)
	}
	if got, _ := st.UserGetByID(ctx, bob.ID); got == nil || got.Status != drip.UserActive {
		t.Errorf("bob = %+v; want still active", got)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, alice.ID, drip.UserActive) })
	if got, _ := st.UserGetByID(ctx, alice.ID); got == nil || got.Status != drip.UserActive {
		t.Errorf("alice after reactivation = %+v; want active", got)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, alice.ID, "banished") }); err == nil {
		t.Error(`UserSetStatus("banished") succeeded; want the CHECK to refuse it`)
	}
}

func testAddressUniquePerCoin(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	add := func(u *drip.User, coin, addr string) error {
		return try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserAddressAdd(ctx, u.ID, coin, addr, t0) })
	}
	for _, a := range []struct{ coin, addr string }{{"BTC", "shared1"}, {"DOGE", "Dalice"}, {"BTC", "bc1alice"}} {
		if err := add(alice, a.coin, a.addr); err != nil {
			t.Fatalf("UserAddressAdd(alice, %s, %s): %v", a.coin, a.addr, err)
		}
	}
	if err := add(bob, "BTC", "shared1"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd of alice's BTC address for bob: err = %v, want ErrConflict", err)
	}
	if err := add(alice, "BTC", "shared1"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd of the same address twice: err = %v, want ErrConflict", err)
	}
	// The same string on another coin is another address.
	if err := add(bob, "LTC", "shared1"); err != nil {
		t.Errorf("UserAddressAdd(bob, LTC, shared1): %v, want nil", err)
	}
	if err := add(bob, "NOPE", "x"); err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd for an unknown coin: err = %v, want a foreign key error", err)
	}
	for _, c := range []struct {
		coin string
		want int64
	}{{"BTC", alice.ID}, {"LTC", bob.ID}} {
		u, err := st.UserGetByAddress(ctx, c.coin, "shared1")
		if err != nil || u.ID != c.want {
			t.Errorf("UserGetByAddress(%s, shared1) = %+v, %v; want user %d", c.coin, u, err, c.want)
		}
	}
	owners, err := st.UserAddressOwners(ctx, "shared1")
	if diff := cmp.Diff([]store.AddressOwner{{Coin: "BTC", UserID: alice.ID}, {Coin: "LTC", UserID: bob.ID}}, owners); err != nil || diff != "" {
		t.Errorf("UserAddressOwners(shared1): %v (-want +got):\n%s", err, diff)
	}
	if owners, err := st.UserAddressOwners(ctx, "nobody's"); err != nil || len(owners) != 0 {
		t.Errorf("UserAddressOwners of an address no one linked = %v, %v; want none", owners, err)
	}
	got, err := st.UserAddressList(ctx, alice.ID)
	if err != nil {
		t.Fatalf("UserAddressList: %v", err)
	}
	if diff := cmp.Diff([]string{"BTC:bc1alice", "BTC:shared1", "DOGE:Dalice"}, got); diff != "" {
		t.Errorf("UserAddressList(alice) (-want +got):\n%s", diff)
	}
	got, _ = st.UserAddressList(ctx, bob.ID)
	if diff := cmp.Diff([]string{"LTC:shared1"}, got); diff != "" {
		t.Errorf("UserAddressList(bob) (-want +got):\n%s", diff)
	}
}

func testFaucetCreateAndGet(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	rules := drip.Rules{AntiFraud: true, TrustRank: 20, NegativeRank: 50, Blacklist: []string{"mallory"}}
	var id, acct int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if acct, err = tx.AccountCreate(ctx, "faucet", t0); err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: owner.ID, AccountID: acct, Name: "Drops", Domain: "drops.example.com",
			URL: "https://drops.example.com/claim", APIKeyHash: "key1", Rules: rules, CreatedAt: t0,
		})
		return err
	})
	want := &drip.Faucet{ID: id, OwnerID: owner.ID, OwnerStatus: drip.UserActive, AccountID: acct, Name: "Drops",
		Domain: "drops.example.com", URL: "https://drops.example.com/claim", CreatedAt: t0, Rules: rules,
		Settings: drip.DefaultSettings}
	got, err := st.FaucetGetByID(ctx, id)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	if diff := cmp.Diff(want, got, faucetOpts); diff != "" {
		t.Errorf("FaucetGetByID (-want +got):\n%s", diff)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "key1"); err != nil || got.ID != id {
		t.Errorf("FaucetGetByKeyHash(key1) = %+v, %v; want faucet %d", got, err, id)
	}
	// The owner's status is read with the faucet, as it is now: a key of a
	// suspended owner is refused from the moment of the suspension (D21).
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetStatus(ctx, owner.ID, drip.UserSuspended)
	})
	if got, err := st.FaucetGetByKeyHash(ctx, "key1"); err != nil || got.OwnerStatus != drip.UserSuspended {
		t.Errorf("after suspending the owner: FaucetGetByKeyHash = %+v, %v; want OwnerStatus suspended", got, err)
	}
	if f, err := st.FaucetGetByID(ctx, id+1000); !errors.Is(err, store.ErrNotFound) || f != nil {
		t.Errorf("FaucetGetByID(unknown) = %+v, %v; want nil, ErrNotFound", f, err)
	}
	if f, err := st.FaucetGetByKeyHash(ctx, "nokey"); !errors.Is(err, store.ErrNotFound) || f != nil {
		t.Errorf("FaucetGetByKeyHash(unknown) = %+v, %v; want nil, ErrNotFound", f, err)
	}
	// Key hashes and accounts are one per faucet.
	for name, p := range map[string]store.FaucetCreateParams{
		"same key":     {OwnerID: owner.ID, Name: "B", Domain: "b.example.com", URL: "https://b.example.com/", APIKeyHash: "key1", CreatedAt: t0},
		"same account": {OwnerID: owner.ID, AccountID: acct, Name: "C", Domain: "c.example.com", URL: "https://c.example.com/", APIKeyHash: "key3", CreatedAt: t0},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			if p.AccountID == 0 {
				a, err := tx.AccountCreate(ctx, "faucet", t0)
				if err != nil {
					return err
				}
				p.AccountID = a
			}
			_, err := tx.FaucetCreate(ctx, &p)
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("FaucetCreate with the %s: err = %v, want ErrConflict", name, err)
		}
	}
}

func testFaucetKeyRotation(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "old")
	other := newFaucet(t, st, owner, "otherkey")
	findsFaucet := func(hash string, want int64) {
		t.Helper()
		got, err := st.FaucetGetByKeyHash(ctx, hash)
		switch {
		case want == 0 && !errors.Is(err, store.ErrNotFound):
			t.Errorf("FaucetGetByKeyHash(%s) = %+v, %v; want ErrNotFound", hash, got, err)
		case want != 0 && (err != nil || got.ID != want):
			t.Errorf("FaucetGetByKeyHash(%s) = %+v, %v; want faucet %d", hash, got, err, want)
		}
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetConfirmKey with nothing pending: err = %v, want ErrNotFound", err)
	}
	findsFaucet("old", f.ID)

	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "new") })
	// D13: both keys work until the rotation is confirmed.
	findsFaucet("old", f.ID)
	findsFaucet("new", f.ID)
	findsFaucet("otherkey", other.ID)

	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) })
	findsFaucet("old", 0) // dead the moment the rotation is confirmed
	findsFaucet("new", f.ID)
	findsFaucet("otherkey", other.ID)

	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetConfirmKey a second time: err = %v, want ErrNotFound", err)
	}
	findsFaucet("new", f.ID)

	// Rotating again before confirming replaces the pending key.
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "next1") })
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "next2") })
	findsFaucet("next1", 0)
	findsFaucet("next2", f.ID)
	findsFaucet("new", f.ID)

	for name, fn := range map[string]func(ctx context.Context, tx store.Tx) error{
		"FaucetSetPendingKey": func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, 999999, "x") },
		"FaucetConfirmKey":    func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, 999999) },
	} {
		if err := try(st, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown faucet: err = %v, want ErrNotFound", name, err)
		}
	}
	// A pending key cannot be another faucet's key.
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, other.ID, "next2") }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("FaucetSetPendingKey to another faucet's pending key: err = %v, want ErrConflict", err)
	}
}

func testFaucetUpdateSettingsRoundTrips(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	bystander := newFaucet(t, st, owner, "key2")
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "pending") })

	want := *f
	want.Name, want.Domain, want.URL = "Renamed", "renamed.example.com", "https://renamed.example.com/x"
	want.IPWhitelist = []netip.Prefix{
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("198.51.100.7/32"), netip.MustParsePrefix("2001:db8::/32"),
	}
	want.Limits = []drip.Limit{
		{Coin: "BTC", Per: drip.PerIP, WindowSeconds: 60, MaxCount: 3},
		{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 5000},
		{Coin: "DOGE", Per: drip.PerRecipient, WindowSeconds: 86400, MaxCount: 2, MaxAmount: 9000},
	}
	want.Rules = drip.Rules{AntiFraud: false, TrustRank: 40, NegativeRank: 10,
		Whitelist: []string{"alice"}, Blacklist: []string{"10.0.0.0/8", "bob@example.com"}}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &want) })

	got, err := st.FaucetGetByID(ctx, f.ID)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	if diff := cmp.Diff(&want, got, faucetOpts); diff != "" {
		t.Errorf("faucet after FaucetUpdateSettings (-want +got):\n%s", diff)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "key"); err != nil || got.ID != f.ID {
		t.Errorf("FaucetGetByKeyHash after a settings update = %+v, %v; want the key kept", got, err)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "pending"); err != nil || got.ID != f.ID {
		t.Errorf("FaucetGetByKeyHash(pending) after a settings update = %+v, %v; want the pending key kept", got, err)
	}
	if got, _ := st.FaucetGetByID(ctx, bystander.ID); got == nil || got.Name != bystander.Name || len(got.Limits) != 0 {
		t.Errorf("another faucet after the update = %+v; want it untouched", got)
	}

	// Clearing the lists clears them.
	cleared := want
	cleared.IPWhitelist, cleared.Limits, cleared.Rules = nil, nil, drip.DefaultRules
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &cleared) })
	got, _ = st.FaucetGetByID(ctx, f.ID)
	if diff := cmp.Diff(&cleared, got, faucetOpts); diff != "" {
		t.Errorf("faucet after clearing its lists (-want +got):\n%s", diff)
	}

	missing := want
	missing.ID = 999999
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &missing) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetUpdateSettings of an unknown faucet: err = %v, want ErrNotFound", err)
	}
}

func testFaucetListByOwner(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	nobody := newUser(t, st, "nobody")
	a1 := newFaucet(t, st, alice, "a1")
	b1 := newFaucet(t, st, bob, "b1")
	a2 := newFaucet(t, st, alice, "a2")

	for _, c := range []struct {
		owner *drip.User
		want  []drip.Faucet
	}{{alice, []drip.Faucet{*a1, *a2}}, {bob, []drip.Faucet{*b1}}, {nobody, nil}} {
		got, err := st.FaucetListByOwner(ctx, c.owner.ID)
		if err != nil {
			t.Fatalf("FaucetListByOwner(%s): %v", c.owner.Username, err)
		}
		if diff := cmp.Diff(c.want, got, faucetOpts); diff != "" {
			t.Errorf("FaucetListByOwner(%s) (-want +got):\n%s", c.owner.Username, diff)
		}
	}
}

func testFaucetLock(t *testing.T, st store.Store) {
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, f.ID) })
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, 999999) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetLock of an unknown faucet: err = %v, want ErrNotFound", err)
	}
}

// testErrorsNameTheirStatement: an error leaving the store says which
// statement failed, for the one log line at the edge, and is still the
// store's error for errors.Is.
func testErrorsNameTheirStatement(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	cases := []struct {
		name      string
		err       error
		want      error
		statement string
	}{
		{"not found", func() error { _, err := st.UserGetByID(ctx, 999999); return err }(), store.ErrNotFound, "UserGetByID"},
		{"no row changed", try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, 999999, drip.UserSuspended) }),
			store.ErrNotFound, "UserSetStatus"},
		{"unique violation", try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: owner.AccountID, Username: owner.Username,
				Email: "other@example.com", CreatedAt: t0})
			return err
		}), store.ErrConflict, "UserCreate"},
		{"overdraft", try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.BalanceDebit(ctx, owner.AccountID, "BTC", 1)
			return err
		}), store.ErrInsufficientFunds, "BalanceDebit"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) || !strings.HasPrefix(c.err.Error(), c.statement+": ") {
			t.Errorf("%s: err = %v; want %v, prefixed %q", c.name, c.err, c.want, c.statement+": ")
		}
	}
}

func testBalanceOfNeverHeldCoinIsZero(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 7)
	for _, coin := range []string{"DOGE", "XRP"} {
		if b, err := st.BalanceGet(ctx, alice.AccountID, coin); err != nil || b != 0 {
			t.Errorf("BalanceGet(alice, never-held %s) = %d, %v; want 0, nil", coin, b, err)
		}
	}
	if b, err := st.BalanceGet(ctx, 999999, "BTC"); err != nil || b != 0 {
		t.Errorf("BalanceGet(unknown account) = %d, %v; want 0, nil", b, err)
	}
	if got, err := st.BalanceList(ctx, newUser(t, st, "bob").AccountID); err != nil || len(got) != 0 {
		t.Errorf("BalanceList of an account that never held a coin = %v, %v; want empty", got, err)
	}
}

func testBalanceCreditAndList(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	var got []int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			coin   string
			amount int64
		}{{"XRP", 5}, {"BTC", 100}, {"BTC", 23}, {"DOGE", 1}} {
			after, err := tx.BalanceCredit(ctx, alice.AccountID, c.coin, c.amount)
			if err != nil {
				return err
			}
			got = append(got, after)
		}
		return nil
	})
	if diff := cmp.Diff([]int64{5, 100, 123, 1}, got); diff != "" {
		t.Errorf("balances returned by BalanceCredit (-want +got):\n%s", diff)
	}
	list, err := st.BalanceList(ctx, alice.AccountID)
	if err != nil {
		t.Fatalf("BalanceList: %v", err)
	}
	// In the coins' order, not the order they were first held in.
	want := []drip.Balance{{Coin: "BTC", Amount: 123}, {Coin: "DOGE", Amount: 1}, {Coin: "XRP", Amount: 5}}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("BalanceList (-want +got):\n%s", diff)
	}
}

func testBalanceDebitRefusesOverdraft(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 100)
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 101); !errors.Is(err, store.ErrInsufficientFunds) {
			t.Errorf("BalanceDebit(101 of 100): err = %v, want ErrInsufficientFunds", err)
		}
		if _, err := tx.BalanceDebit(ctx, alice.AccountID, "DOGE", 1); !errors.Is(err, store.ErrInsufficientFunds) {
			t.Errorf("BalanceDebit of a never-held coin: err = %v, want ErrInsufficientFunds", err)
		}
		// The refusal changed nothing and left the transaction usable: the
		// ledger commits a payout.failed event after it.
		if b, err := tx.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 100 {
			t.Errorf("balance inside the transaction after a refused debit = %d, %v; want 100", b, err)
		}
		after, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 40)
		if err != nil || after != 60 {
			t.Errorf("BalanceDebit(40 of 100) = %d, %v; want 60, nil", after, err)
		}
		after, err = tx.BalanceDebit(ctx, alice.AccountID, "BTC", 60)
		if err != nil || after != 0 {
			t.Errorf("BalanceDebit(60 of 60) = %d, %v; want 0, nil (a balance may reach zero)", after, err)
		}
		return nil
	})
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after debits = %d, want 0", b)
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceDebit(ctx, alice.AccountID, "BTC", 1)
		return err
	})
	if !errors.Is(err, store.ErrInsufficientFunds) {
		t.Errorf("Transact returning a refused debit: err = %v, want ErrInsufficientFunds", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after a refused debit = %d, want 0", b)
	}
}

func testBalanceNeverNegativeExceptDeposits(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, alice.AccountID, "BTC", 5)
	// D2: the database itself refuses a negative balance, even if code
	// forgets BalanceDebit: a credit of a negative amount is not a way around.
	for _, c := range []struct {
		name    string
		account int64
		coin    string
		amount  int64
	}{
		{"user below zero", alice.AccountID, "BTC", -6},
		{"user's never-held coin", alice.AccountID, "DOGE", -1},
		{"faucet", f.AccountID, "BTC", -1},
		{"system:listing", drip.AccountListing, "BTC", -1},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.BalanceCredit(ctx, c.account, c.coin, c.amount)
			return err
		})
		if err == nil {
			t.Errorf("BalanceCredit(%s, %d %s) succeeded; want the balance CHECK to refuse it", c.name, c.amount, c.coin)
		}
		if b := balance(t, st, c.account, c.coin); b < 0 {
			t.Errorf("balance of %s = %d after a refused credit; want it unchanged", c.name, b)
		}
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 5 {
		t.Errorf("alice's BTC = %d, want 5", b)
	}
	// system:deposits mirrors the outside world and goes negative by design.
	var after int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		after, err = tx.BalanceCredit(ctx, drip.AccountDeposits, "DOGE", -250)
		return err
	})
	if after != -250 || balance(t, st, drip.AccountDeposits, "DOGE") != -250 {
		t.Errorf("system:deposits DOGE = %d, want -250", after)
	}
}

func testTransferInsert(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	var ids []int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i := 0; i < 3; i++ {
			id, err := tx.TransferInsert(ctx, &store.Transfer{Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: 10, Kind: "payout", CreatedAt: t0})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if len(ids) != 3 || !(ids[0] < ids[1] && ids[1] < ids[2]) {
		t.Errorf("TransferInsert ids = %v; want increasing", ids)
	}
	for name, tr := range map[string]store.Transfer{
		"zero amount":     {Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: 0, Kind: "payout", CreatedAt: t0},
		"negative amount": {Coin: "BTC", From: alice.AccountID, To: bob.AccountID, Amount: -5, Kind: "payout", CreatedAt: t0},
		"to itself":       {Coin: "BTC", From: alice.AccountID, To: alice.AccountID, Amount: 5, Kind: "payout", CreatedAt: t0},
		"unknown coin":    {Coin: "NOPE", From: alice.AccountID, To: bob.AccountID, Amount: 5, Kind: "payout", CreatedAt: t0},
		"unknown account": {Coin: "BTC", From: alice.AccountID, To: 999999, Amount: 5, Kind: "payout", CreatedAt: t0},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.TransferInsert(ctx, &tr)
			return err
		})
		if err == nil {
			t.Errorf("TransferInsert with %s succeeded; want the schema to refuse it", name)
		}
	}
}

func testPayoutList(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 1000)
	deposit(t, st, g.AccountID, "BTC", 1000)
	p1 := pay(t, st, f, alice, "BTC", 10, "203.0.113.1", t0)
	p2 := pay(t, st, f, alice, "DOGE", 20, "", t0.Add(time.Second))
	pg := pay(t, st, g, alice, "BTC", 99, "", t0.Add(2*time.Second))
	p3 := pay(t, st, f, alice, "BTC", 30, "203.0.113.2", t0.Add(3*time.Second))

	cases := []struct {
		name string
		p    store.PayoutListParams
		want []drip.Payout
	}{
		{"all coins newest first", store.PayoutListParams{FaucetID: f.ID, Limit: 10}, []drip.Payout{p3, p2, p1}},
		{"one coin", store.PayoutListParams{FaucetID: f.ID, Coin: "BTC", Limit: 10}, []drip.Payout{p3, p1}},
		{"limit", store.PayoutListParams{FaucetID: f.ID, Limit: 2}, []drip.Payout{p3, p2}},
		{"one coin with limit", store.PayoutListParams{FaucetID: f.ID, Coin: "BTC", Limit: 1}, []drip.Payout{p3}},
		{"a coin never paid", store.PayoutListParams{FaucetID: f.ID, Coin: "LTC", Limit: 10}, nil},
		{"other faucet", store.PayoutListParams{FaucetID: g.ID, Limit: 10}, []drip.Payout{pg}},
		{"unknown faucet", store.PayoutListParams{FaucetID: 999999, Limit: 10}, nil},
	}
	for _, c := range cases {
		got, err := st.PayoutList(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: PayoutList: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: PayoutList (-want +got):\n%s", c.name, diff)
		}
	}
}

func testPayoutWindow(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	r1 := newUser(t, st, "r1")
	r2 := newUser(t, st, "r2")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, f.AccountID, "DOGE", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)
	pay(t, st, f, r1, "BTC", 100, "198.51.100.1", t0.Add(-2*time.Hour))
	pay(t, st, f, r2, "BTC", 200, "198.51.100.1", t0.Add(-30*time.Minute))
	pay(t, st, f, r1, "DOGE", 400, "198.51.100.2", t0.Add(-10*time.Minute))
	pay(t, st, f, r1, "BTC", 800, "", t0)
	pay(t, st, g, r1, "BTC", 1600, "198.51.100.1", t0) // another faucet's payouts never count

	hourAgo, longAgo := t0.Add(-time.Hour), t0.Add(-3*time.Hour)
	cases := []struct {
		name              string
		p                 store.PayoutWindowParams
		wantCount, wantSu int64
	}{
		{"faucet, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo}, 3, 1400},
		{"faucet, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo}, 4, 1500},
		{"faucet, BTC, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, Coin: "BTC"}, 2, 1000},
		{"faucet, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(-30 * time.Minute)}, 3, 1400},
		{"faucet, after the last payout", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(time.Microsecond)}, 0, 0},
		{"recipient, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, RecipientID: r1.ID}, 2, 1200},
		{"recipient, BTC, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, Coin: "BTC", RecipientID: r1.ID}, 2, 900},
		{"other recipient", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, RecipientID: r2.ID}, 1, 200},
		{"recipient, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0, RecipientID: r1.ID}, 1, 800},
		{"ip, all", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "198.51.100.1"}, 2, 300},
		{"ip, last hour", store.PayoutWindowParams{FaucetID: f.ID, Since: hourAgo, IPAddress: "198.51.100.1"}, 1, 200},
		{"ip, since is inclusive", store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(-30 * time.Minute), IPAddress: "198.51.100.1"}, 1, 200},
		{"ip, other coin", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "198.51.100.2", Coin: "BTC"}, 0, 0},
		{"ip never seen", store.PayoutWindowParams{FaucetID: f.ID, Since: longAgo, IPAddress: "192.0.2.1"}, 0, 0},
		{"other faucet", store.PayoutWindowParams{FaucetID: g.ID, Since: longAgo}, 1, 1600},
		{"faucet without payouts", store.PayoutWindowParams{FaucetID: 999999, Since: longAgo}, 0, 0},
	}
	for _, c := range cases {
		count, sum, err := st.PayoutWindow(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: PayoutWindow: %v", c.name, err)
			continue
		}
		if count != c.wantCount || sum != c.wantSu {
			t.Errorf("%s: PayoutWindow = (%d, %d), want (%d, %d)", c.name, count, sum, c.wantCount, c.wantSu)
		}
	}
}

func testEvents(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	events := []drip.Event{
		{ID: "evt_a", FaucetID: f.ID, Type: drip.EventPayoutSent, Data: []byte(`{"to":"alice","amount":5,"payout_id":"1"}`), CreatedAt: t0},
		{ID: "evt_c", FaucetID: f.ID, Type: drip.EventPayoutFailed, Data: []byte(`{"status":402,"message":"é \"quoted\""}`), CreatedAt: t0.Add(time.Second)},
		{ID: "evt_b", FaucetID: f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0.Add(time.Second)},
		{ID: "evt_g", FaucetID: g.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0.Add(time.Hour)},
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i := range events {
			if err := tx.EventInsert(ctx, &events[i]); err != nil {
				return err
			}
		}
		return nil
	})
	// Newest first in the order they were written, whatever their times
	// and ids (random in production), so delivery follows causation.
	got, err := st.EventList(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("EventList: %v", err)
	}
	if diff := cmp.Diff([]drip.Event{events[2], events[1], events[0]}, got); diff != "" {
		t.Errorf("EventList (-want +got):\n%s", diff)
	}
	got, _ = st.EventList(ctx, f.ID, 1)
	if diff := cmp.Diff([]drip.Event{events[2]}, got); diff != "" {
		t.Errorf("EventList with limit 1 (-want +got):\n%s", diff)
	}
	got, _ = st.EventList(ctx, g.ID, 10)
	if diff := cmp.Diff([]drip.Event{events[3]}, got); diff != "" {
		t.Errorf("EventList of the other faucet (-want +got):\n%s", diff)
	}
	dup := drip.Event{ID: "evt_a", FaucetID: g.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.EventInsert(ctx, &dup) }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("EventInsert with a used id: err = %v, want ErrConflict", err)
	}
}

func testRefusalCountOthers(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	u := newUser(t, st, "mallory")
	other := newUser(t, st, "other")
	var f [6]*drip.Faucet
	for i := range f {
		f[i] = newFaucet(t, st, owner, fmt.Sprintf("key%d", i))
	}
	refusals := []struct {
		user   *drip.User
		faucet *drip.Faucet
		at     time.Time
	}{
		{u, f[1], t0},
		{u, f[2], t0.Add(-48 * time.Hour)},
		{u, f[2], t0},
		{u, f[3], t0},
		{u, f[3], t0}, // the same faucet twice is still one faucet
		{u, f[4], t0.Add(-10 * 24 * time.Hour)},
		{other, f[5], t0},
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, r := range refusals {
			if err := tx.RefusalInsert(ctx, r.user.ID, r.faucet.ID, r.at); err != nil {
				return err
			}
		}
		return nil
	})
	cases := []struct {
		name   string
		user   *drip.User
		faucet *drip.Faucet
		since  time.Time
		want   int64
	}{
		{"others than f1, last week", u, f[1], t0.Add(-7 * 24 * time.Hour), 2},
		{"others than f1, last month", u, f[1], t0.Add(-30 * 24 * time.Hour), 3},
		{"others than f2, last week", u, f[2], t0.Add(-7 * 24 * time.Hour), 2},
		{"others than f0, last week", u, f[0], t0.Add(-7 * 24 * time.Hour), 3},
		{"since is inclusive", u, f[0], t0, 3},
		{"after the last refusal", u, f[0], t0.Add(time.Second), 0},
		{"another user", other, f[0], t0.Add(-time.Hour), 1},
		{"another user, the refusing faucet asks", other, f[5], t0.Add(-time.Hour), 0},
		{"owner never refused", owner, f[0], t0.Add(-30 * 24 * time.Hour), 0},
	}
	for _, c := range cases {
		got, err := st.RefusalCountOthers(ctx, c.user.ID, c.faucet.ID, c.since)
		if err != nil || got != c.want {
			t.Errorf("%s: RefusalCountOthers = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}

func testTransactCommits(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	err := st.Transact(context.Background(), func(tx store.Tx) error {
		_, err := move(context.Background(), tx, "BTC", drip.AccountDeposits, alice.AccountID, 42, "deposit", t0)
		return err
	})
	if err != nil {
		t.Fatalf("Transact: %v", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 42 {
		t.Errorf("balance after a committed credit = %d, want 42", b)
	}
}

var errBoom = errors.New("boom")

func testTransactRollsBackOnError(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 10)
	err := st.Transact(ctx, func(tx store.Tx) error {
		if _, err := move(ctx, tx, "BTC", drip.AccountDeposits, alice.AccountID, 5, "deposit", t0); err != nil {
			return err
		}
		if err := tx.UserSetStatus(ctx, alice.ID, drip.UserSuspended); err != nil {
			return err
		}
		return fmt.Errorf("giving up: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Transact: err = %v, want the callback's error", err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 10 {
		t.Errorf("balance after a rolled-back credit = %d, want 10", b)
	}
	if b := balance(t, st, drip.AccountDeposits, "BTC"); b != -10 {
		t.Errorf("system:deposits after a rolled-back credit = %d, want -10", b)
	}
	if u, _ := st.UserGetByID(ctx, alice.ID); u == nil || u.Status != drip.UserActive {
		t.Errorf("alice after a rolled-back suspension = %+v, want active", u)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("ledger after a rollback is not clean: %s", report)
	}
	// The store is still usable: nothing was left holding the writer.
	deposit(t, st, alice.AccountID, "BTC", 1)
	if b := balance(t, st, alice.AccountID, "BTC"); b != 11 {
		t.Errorf("balance after a later deposit = %d, want 11", b)
	}
}

func testTransactRollsBackOnPanic(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	type token struct{ n int }
	want := &token{7}
	got := func() (p any) {
		defer func() { p = recover() }()
		_ = st.Transact(ctx, func(tx store.Tx) error {
			if _, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 5); err != nil {
				t.Errorf("BalanceCredit: %v", err)
			}
			panic(want)
		})
		return nil
	}()
	if got != want {
		t.Fatalf("recovered %v from Transact, want the callback's panic value %v", got, want)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("balance after a panicking transaction = %d, want 0", b)
	}
	// The panic released the transaction: the next one commits (on SQLite,
	// the one writer connection was returned rolled back).
	done := make(chan error, 1)
	go func() {
		done <- st.Transact(ctx, func(tx store.Tx) error {
			_, err := tx.BalanceCredit(ctx, alice.AccountID, "DOGE", 3)
			return err
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Transact after a panic: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Transact after a panic did not finish in 30s: the panicking transaction was not released")
	}
	if b := balance(t, st, alice.AccountID, "DOGE"); b != 3 {
		t.Errorf("balance after the next transaction = %d, want 3", b)
	}
}

func testTransactIsolation(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 9); err != nil {
			return err
		}
		// The transaction reads its own writes...
		if b, err := tx.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 9 {
			t.Errorf("tx.BalanceGet inside the transaction = %d, %v; want 9", b, err)
		}
		// ...and nobody else does before it commits.
		if b, err := st.BalanceGet(ctx, alice.AccountID, "BTC"); err != nil || b != 0 {
			t.Errorf("st.BalanceGet while the transaction is open = %d, %v; want 0", b, err)
		}
		return nil
	})
	if b := balance(t, st, alice.AccountID, "BTC"); b != 9 {
		t.Errorf("balance after commit = %d, want 9", b)
	}
}

func testMigrateIsIdempotent(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 5)
	for i := 0; i < 2; i++ {
		if err := st.Migrate(ctx); err != nil {
			t.Fatalf("Migrate again (%d): %v", i+1, err)
		}
	}
	coins, err := st.CoinList(ctx)
	if err != nil || len(coins) != len(builtinCoins) {
		t.Errorf("CoinList after migrating again = %d coins, %v; want %d", len(coins), err, len(builtinCoins))
	}
	if u, err := st.UserGetByUsername(ctx, "alice"); err != nil || u.ID != alice.ID {
		t.Errorf("alice after migrating again = %+v, %v; want kept", u, err)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 5 {
		t.Errorf("balance after migrating again = %d, want 5", b)
	}
	if st.Engine() == "" {
		t.Error(`Engine() = ""; want the engine's name`)
	}
}

// reconcile runs the three reconcile queries and describes every finding;
// "" means the ledger holds its invariant (D3).
func reconcile(t testing.TB, st store.Reader) string {
	t.Helper()
	ctx := context.Background()
	sums, err := st.ReconcileCoinSums(ctx)
	if err != nil {
		t.Fatalf("ReconcileCoinSums: %v", err)
	}
	accounts, err := st.ReconcileAccounts(ctx)
	if err != nil {
		t.Fatalf("ReconcileAccounts: %v", err)
	}
	payouts, err := st.ReconcilePayouts(ctx)
	if err != nil {
		t.Fatalf("ReconcilePayouts: %v", err)
	}
	if len(sums)+len(accounts)+len(payouts) == 0 {
		return ""
	}
	return fmt.Sprintf("coin sums %+v, accounts %+v, payouts %v", sums, accounts, payouts)
}

func testReconcileClean(t *testing.T, st store.Store) {
	if report := reconcile(t, st); report != "" {
		t.Errorf("fresh store: %s; want clean", report)
	}
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	deposit(t, st, f.AccountID, "DOGE", 50)
	pay(t, st, f, alice, "BTC", 300, "", t0)
	pay(t, st, f, alice, "DOGE", 50, "", t0) // a balance back at zero is still consistent
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := move(ctx, tx, "BTC", f.AccountID, drip.AccountListing, 100, "listing", t0)
		return err
	})
	if report := reconcile(t, st); report != "" {
		t.Errorf("ledger of correct transfers: %s; want clean", report)
	}
}

func testReconcileBroken(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1000)
	good := pay(t, st, f, alice, "BTC", 100, "", t0)

	// 1. Money from nowhere: a credit without a transfer.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.BalanceCredit(ctx, alice.AccountID, "BTC", 50)
		return err
	})
	// 2. A journal entry whose balances never moved.
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.TransferInsert(ctx, &store.Transfer{Coin: "DOGE", From: f.AccountID, To: alice.AccountID, Amount: 70, Kind: "payout", CreatedAt: t0})
		return err
	})
	// 3. A payout whose transfer says another amount.
	var bad int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		transfer, err := move(ctx, tx, "BTC", f.AccountID, alice.AccountID, 200, "payout", t0)
		if err != nil {
			return err
		}
		bad, err = tx.PayoutInsert(ctx, &drip.Payout{FaucetID: f.ID, RecipientID: alice.ID, To: "alice", Coin: "BTC", Amount: 300, CreatedAt: t0}, transfer)
		return err
	})

	sums, err := st.ReconcileCoinSums(ctx)
	if err != nil {
		t.Fatalf("ReconcileCoinSums: %v", err)
	}
	if diff := cmp.Diff([]store.CoinSum{{Coin: "BTC", Sum: 50}}, sums); diff != "" {
		t.Errorf("ReconcileCoinSums (-want +got):\n%s", diff)
	}
	accounts, err := st.ReconcileAccounts(ctx)
	if err != nil {
		t.Fatalf("ReconcileAccounts: %v", err)
	}
	wantAccounts := []store.AccountMismatch{
		{AccountID: alice.AccountID, Coin: "BTC", Balance: 350, Journal: 300},
		{AccountID: alice.AccountID, Coin: "DOGE", Balance: 0, Journal: 70},
		{AccountID: f.AccountID, Coin: "DOGE", Balance: 0, Journal: -70},
	}
	if alice.AccountID > f.AccountID {
		wantAccounts = append(wantAccounts[2:], wantAccounts[:2]...)
	}
	if diff := cmp.Diff(wantAccounts, accounts); diff != "" {
		t.Errorf("ReconcileAccounts (-want +got):\n%s", diff)
	}
	payouts, err := st.ReconcilePayouts(ctx)
	if err != nil {
		t.Fatalf("ReconcilePayouts: %v", err)
	}
	if diff := cmp.Diff([]int64{bad}, payouts); diff != "" {
		t.Errorf("ReconcilePayouts (-want +got):\n%s (payout %d is correct)", diff, good.ID)
	}
}

func testConcurrentDebits(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	deposit(t, st, alice.AccountID, "BTC", 200)
	const workers = 32
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		succeeded int
		after     []int64
	)
	start := make(chan struct{})
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			var b int64
			err := st.Transact(ctx, func(tx store.Tx) error {
				var err error
				b, err = tx.BalanceDebit(ctx, alice.AccountID, "BTC", 10)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				succeeded++
				after = append(after, b)
			case !errors.Is(err, store.ErrInsufficientFunds):
				t.Errorf("concurrent debit: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if succeeded != 20 {
		t.Errorf("%d of %d debits of 10 from 200 succeeded, want 20", succeeded, workers)
	}
	if b := balance(t, st, alice.AccountID, "BTC"); b != 0 {
		t.Errorf("final balance = %d, want 0", b)
	}
	// Every debit saw the one before it: the balances after are 190..0, each once.
	var want []int64
	for b := int64(190); b >= 0; b -= 10 {
		want = append(want, b)
	}
	if diff := cmp.Diff(want, after, cmpopts.SortSlices(func(a, b int64) bool { return a > b })); diff != "" {
		t.Errorf("balances returned by the successful debits (-want +got):\n%s", diff)
	}
}

// bulkLoad runs the bulk load every engine's transactions offer to drip
// bench (store.BulkLoader), outside the product's store.Tx.
func bulkLoad(ctx context.Context, tx store.Tx, p *store.PayoutBulkLoadParams) error {
	bl, ok := tx.(store.BulkLoader)
	if !ok {
		return fmt.Errorf("%T does not implement store.BulkLoader", tx)
	}
	return bl.PayoutBulkLoad(ctx, p)
}

func testPayoutBulkLoad(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	r1, r2, r3 := newUser(t, st, "r1"), newUser(t, st, "r2"), newUser(t, st, "r3")
	outsider := newUser(t, st, "outsider") // after the range: never paid
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 500)
	earlier := pay(t, st, f, r1, "BTC", 100, "", t0)
	depositsBefore := balance(t, st, drip.AccountDeposits, "BTC")

	load := func(count int64) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			return bulkLoad(ctx, tx, &store.PayoutBulkLoadParams{
				FaucetID: f.ID, FirstRecipientID: r1.ID, LastRecipientID: r3.ID,
				Coin: "BTC", Amount: 7, Count: count, CreatedAt: t0.Add(time.Hour),
			})
		})
	}
	load(10) // r1 gets 4, r2 and r3 get 3 each
	load(2)  // round-robin restarts at r1

	if report := reconcile(t, st); report != "" {
		t.Errorf("after bulk loads: %s; want clean", report)
	}
	got := map[string]int64{
		"faucet": balance(t, st, f.AccountID, "BTC"), "r1": balance(t, st, r1.AccountID, "BTC"),
		"r2": balance(t, st, r2.AccountID, "BTC"), "r3": balance(t, st, r3.AccountID, "BTC"),
		"outsider": balance(t, st, outsider.AccountID, "BTC"), "deposits": balance(t, st, drip.AccountDeposits, "BTC"),
	}
	want := map[string]int64{
		"faucet": 400, "r1": 100 + 5*7, "r2": 4 * 7, "r3": 3 * 7,
		"outsider": 0, "deposits": depositsBefore - 12*7, // the loads fund themselves
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("balances after bulk loads of 10 and 2 (-want +got):\n%s", diff)
	}
	count, sum, err := st.PayoutWindow(ctx, &store.PayoutWindowParams{FaucetID: f.ID, Since: t0.Add(time.Hour)})
	if err != nil {
		t.Fatalf("PayoutWindow: %v", err)
	}
	if count != 12 || sum != 12*7 {
		t.Errorf("loaded payouts: count %d sum %d, want 12 and %d", count, sum, 12*7)
	}
	list, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Limit: 100})
	if err != nil {
		t.Fatalf("PayoutList: %v", err)
	}
	var to []string
	for _, p := range list {
		to = append(to, p.To)
		if p.ID != earlier.ID && (p.ID < earlier.ID || p.Amount != 7 || p.RecipientID == outsider.ID) {
			t.Errorf("loaded payout %+v: want an id after %d, amount 7, a recipient in the range", p, earlier.ID)
		}
	}
	wantTo := []string{"r2", "r1", "r1", "r3", "r2", "r1", "r3", "r2", "r1", "r3", "r2", "r1", "r1"} // newest first
	if diff := cmp.Diff(wantTo, to); diff != "" {
		t.Errorf("payouts newest first (-want +got):\n%s", diff)
	}

	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return bulkLoad(ctx, tx, &store.PayoutBulkLoadParams{
			FaucetID: f.ID, FirstRecipientID: outsider.ID + 100, LastRecipientID: outsider.ID + 200,
			Coin: "BTC", Amount: 7, Count: 3, CreatedAt: t0,
		})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bulk load to a range without users: err = %v, want ErrNotFound", err)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after a refused bulk load: %s; want clean", report)
	}
}

// The ledger's batch path (D5): balances read and held for a set of
// accounts, then debited together.
func testBalancesLockAndDebit(t *testing.T, st store.Store) {
	ctx := context.Background()
	a, b := newUser(t, st, "alpha"), newUser(t, st, "beta")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []struct {
			acct   int64
			coin   string
			amount int64
		}{{a.AccountID, "BTC", 100}, {a.AccountID, "DOGE", 7}, {b.AccountID, "BTC", 50}} {
			if _, err := tx.BalanceCredit(ctx, c.acct, c.coin, c.amount); err != nil {
				return err
			}
		}
		return nil
	})
	ka, kaDoge, kb := store.BalanceKey{Account: a.AccountID, Coin: "BTC"}, store.BalanceKey{Account: a.AccountID, Coin: "DOGE"}, store.BalanceKey{Account: b.AccountID, Coin: "BTC"}
	never := store.BalanceKey{Account: b.AccountID, Coin: "LTC"}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.BalancesLock(ctx, []store.BalanceKey{ka, kb, never})
		if err != nil {
			return err
		}
		if diff := cmp.Diff(map[store.BalanceKey]int64{ka: 100, kb: 50}, got); diff != "" {
			t.Errorf("BalancesLock (-want +got):\n%s", diff)
		}
		return tx.BalancesDebit(ctx, map[store.BalanceKey]int64{ka: 60, kb: 50})
	})
	for k, want := range map[store.BalanceKey]int64{ka: 40, kaDoge: 7, kb: 0} {
		if got, _ := st.BalanceGet(ctx, k.Account, k.Coin); got != want {
			t.Errorf("balance %+v = %d, want %d", k, got, want)
		}
	}
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.BalancesDebit(ctx, map[store.BalanceKey]int64{ka: 10, kb: 1})
	})
	if !errors.Is(err, store.ErrInsufficientFunds) {
		t.Errorf("debit beyond a balance: err = %v, want ErrInsufficientFunds", err)
	}
	if got, _ := st.BalanceGet(ctx, a.AccountID, "BTC"); got != 40 {
		t.Errorf("after the refused debit (rolled back) alpha holds %d, want 40", got)
	}
}

// v2 keys (D14): stored by hash, listed per faucet, revoked once.
func testKeys(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "v1key")
	exp := t0.Add(time.Hour)
	want := &drip.Key{FaucetID: f.ID, Prefix: "drip_abcdefgh", Scopes: []drip.Scope{drip.ScopeRead, drip.ScopeSend},
		ExpiresAt: &exp, IPWhitelist: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")},
		DailyUSDCapMicros: 25_000_000, CreatedAt: t0}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		want.ID, err = tx.KeyCreate(ctx, want, "hash1")
		return err
	})
	got, err := st.KeyGetByHash(ctx, "hash1")
	if err != nil {
		t.Fatalf("KeyGetByHash: %v", err)
	}
	if diff := cmp.Diff(want, got, faucetOpts); diff != "" {
		t.Errorf("KeyGetByHash (-want +got):\n%s", diff)
	}
	if _, err := st.KeyGetByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown hash: %v, want ErrNotFound", err)
	}
	dup := *want
	if err := try(st, func(ctx context.Context, tx store.Tx) error { _, err := tx.KeyCreate(ctx, &dup, "hash2"); return err }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a taken prefix: %v, want ErrConflict", err)
	}
	never := &drip.Key{FaucetID: f.ID, Prefix: "drip_zzzzzzzz", Scopes: []drip.Scope{drip.ScopeAdmin}, CreatedAt: t0}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		never.ID, err = tx.KeyCreate(ctx, never, "hash3")
		return err
	})
	list, err := st.KeyListByFaucet(ctx, f.ID)
	if err != nil || len(list) != 2 || list[0].ID != want.ID || list[1].ExpiresAt != nil || list[1].IPWhitelist != nil {
		t.Errorf("KeyListByFaucet = %+v, %v", list, err)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, want.ID, t0.Add(time.Minute)) })
	if got, _ := st.KeyGetByID(ctx, want.ID); got == nil || got.RevokedAt == nil || !got.RevokedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("after KeyRevoke: %+v", got)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.KeyRevoke(ctx, want.ID, t0) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking a revoked key: %v, want ErrNotFound", err)
	}
}

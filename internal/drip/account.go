package drip

// System accounts of the ledger (D2). Their ids are fixed by the first
// migration of each engine; the database CHECK that keeps balances from going
// negative exempts AccountDeposits alone, because it mirrors the outside world.
const (
	AccountDeposits int64 = 1 // system:deposits
	AccountListing  int64 = 2 // system:listing, collects listing fees (D44)
)

// Balance is an account's holding of one coin, in smallest units.
type Balance struct {
	Coin   string
	Amount int64
}

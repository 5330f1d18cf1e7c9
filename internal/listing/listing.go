// Package listing is listing approval (D44): the operator's cost per coin,
// faucets' requests to appear on the public faucet list, and the operator's
// decisions. Requesting moves the cost from the faucet's balance to
// system:listing in the transaction that opens the request; rejecting moves
// it back in the transaction that closes it, so the ledger reconciles (D3)
// whatever the outcome.
package listing

import (
	"context"
	"errors"
	"time"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
)

// Journal kinds of the transfers listing makes (drip.Transaction.Kind).
const (
	KindFee    = "listing_fee"
	KindRefund = "listing_refund"
)

// Service runs listing approval over a store.
type Service struct {
	store store.Store
	coins *coin.Catalog
	now   func() time.Time
}

// NewService returns the service; now is the clock (time.Now in production).
func NewService(st store.Store, coins *coin.Catalog, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, coins: coins, now: now}
}

// SetCost sets what a listing request costs in coin, in smallest units;
// 0 withdraws the offer in that coin. The coin must exist, active or not, so
// an operator can price a coin before enabling it.
func (s *Service) SetCost(ctx context.Context, coinSymbol string, amount int64) error {
	coinSymbol = drip.Symbol(coinSymbol) // any case (D28)
	if amount < 0 {
		return drip.Errorf(drip.CodeInvalidAmount, "Invalid listing cost: a whole number of smallest units, 0 to withdraw the offer.")
	}
	all, err := s.coins.List(ctx)
	if err != nil {
		return err
	}
	if !drip.HasCoin(all, coinSymbol) {
		return drip.Errorf(drip.CodeInvalidCurrency, "No coin %q.", coinSymbol)
	}
	return s.store.Transact(ctx, func(tx store.Tx) error {
		return tx.ListingCostSet(ctx, coinSymbol, amount, s.now())
	})
}

// Costs returns the listing cost of every coin it is offered in.
func (s *Service) Costs(ctx context.Context) (map[string]int64, error) {
	return s.store.ListingCostList(ctx)
}

// Cost is what a listing request in coin costs now. The coin must be active
// (CodeInvalidCurrency), and the operator must offer listing in it (CodeInvalid).
func (s *Service) Cost(ctx context.Context, coinSymbol string) (int64, error) {
	coinSymbol = drip.Symbol(coinSymbol) // any case (D28)
	if _, err := s.coins.Active(ctx, coinSymbol); err != nil {
		return 0, err
	}
	costs, err := s.store.ListingCostList(ctx)
	if err != nil {
		return 0, err
	}
	return costIn(costs, coinSymbol)
}

func costIn(costs map[string]int64, coinSymbol string) (int64, error) {
	cost, ok := costs[coinSymbol]
	if !ok || cost <= 0 {
		return 0, drip.Errorf(drip.CodeInvalid, "Listing is not offered in %s: choose a coin the operator has set a listing cost for.", coinSymbol)
	}
	return cost, nil
}

// Request asks for the faucet to be listed, paying in coin: the cost moves
// from the faucet's balance to system:listing and a pending request opens,
// both in one transaction. A faucet has at most one open (pending or
// approved) request (CodeConflict); a balance below the cost changes nothing
// (CodeInsufficientFunds).
func (s *Service) Request(ctx context.Context, f *drip.Faucet, coinSymbol string) (*drip.ListingRequest, error) {
	coinSymbol = drip.Symbol(coinSymbol) // any case (D28)
	if _, err := s.coins.Active(ctx, coinSymbol); err != nil {
		return nil, err
	}
	var r *drip.ListingRequest
	err := s.store.Transact(ctx, func(tx store.Tx) error {
		now := s.now()
		// The cost is read in the transaction that charges it, so an
		// operator's change never meets a request halfway.
		costs, err := tx.ListingCostList(ctx)
		if err != nil {
			return err
		}
		cost, err := costIn(costs, coinSymbol)
		if err != nil {
			return err
		}
		// Say why before touching money; the unique index still decides
		// when two requests race.
		open, err := tx.ListingRequestListByFaucet(ctx, f.ID)
		if err != nil {
			return err
		}
		if len(open) > 0 && open[0].Status != drip.ListingRejected {
			return alreadyOpen(&open[0])
		}
		_, transferID, err := ledger.Move(ctx, tx, &store.Transfer{
			Coin: coinSymbol, From: f.AccountID, To: drip.AccountListing, Amount: cost, Kind: KindFee, CreatedAt: now,
		})
		if errors.Is(err, store.ErrInsufficientFunds) {
			balance, err := tx.BalanceGet(ctx, f.AccountID, coinSymbol)
			if err != nil {
				return err
			}
			return drip.Errorf(drip.CodeInsufficientFunds,
				"Insufficient funds: listing costs %s %s; the faucet's %s balance is %s.",
				drip.FormatCoins(cost), coinSymbol, coinSymbol, drip.FormatCoins(balance))
		}
		if err != nil {
			return err
		}
		r = &drip.ListingRequest{FaucetID: f.ID, Coin: coinSymbol, Amount: cost, Status: drip.ListingPending, CreatedAt: now}
		r.ID, err = tx.ListingRequestCreate(ctx, r, transferID)
		if errors.Is(err, store.ErrConflict) {
			return drip.Errorf(drip.CodeConflict, "The faucet already has an open listing request.")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// alreadyOpen is the refusal of a request while another is open.
func alreadyOpen(open *drip.ListingRequest) error {
	if open.Status == drip.ListingApproved {
		return drip.Errorf(drip.CodeConflict, "The faucet is listed already (request %d was approved).", open.ID)
	}
	return drip.Errorf(drip.CodeConflict, "The faucet already has a pending listing request (%d); wait for the operator's decision.", open.ID)
}

// Approve approves a pending request: the faucet joins the public list and
// the fee stays with system:listing.
func (s *Service) Approve(ctx context.Context, id int64) (*drip.ListingRequest, error) {
	return s.decide(ctx, id, drip.ListingApproved, nil)
}

// Reject rejects a pending request and refunds its fee to the faucet, in
// the same transaction. The faucet may then ask again.
func (s *Service) Reject(ctx context.Context, id int64) (*drip.ListingRequest, error) {
	return s.decide(ctx, id, drip.ListingRejected, func(ctx context.Context, tx store.Tx, r *drip.ListingRequest, now time.Time) (int64, error) {
		f, err := tx.FaucetGetByID(ctx, r.FaucetID)
		if err != nil {
			return 0, err
		}
		_, transferID, err := ledger.Move(ctx, tx, &store.Transfer{
			Coin: r.Coin, From: drip.AccountListing, To: f.AccountID, Amount: r.Amount, Kind: KindRefund, CreatedAt: now,
		})
		return transferID, err
	})
}

// decide closes a pending request with status; refund, when given, moves
// money back and returns its transfer's id, in the same transaction.
func (s *Service) decide(ctx context.Context, id int64, status drip.ListingStatus,
	refund func(context.Context, store.Tx, *drip.ListingRequest, time.Time) (int64, error)) (*drip.ListingRequest, error) {
	var r *drip.ListingRequest
	err := s.store.Transact(ctx, func(tx store.Tx) error {
		now := s.now()
		var err error
		if r, err = tx.ListingRequestGet(ctx, id); errors.Is(err, store.ErrNotFound) {
			return drip.Errorf(drip.CodeNotFound, "No listing request %d.", id)
		} else if err != nil {
			return err
		}
		if r.Status != drip.ListingPending {
			return decidedAlready(r)
		}
		var refundID int64
		if refund != nil {
			if refundID, err = refund(ctx, tx, r, now); err != nil {
				return err
			}
		}
		// Only a pending request changes: if another decision got there
		// first, this one (and its refund) rolls back.
		if err := tx.ListingRequestDecide(ctx, id, status, now, refundID); errors.Is(err, store.ErrNotFound) {
			if r, err = tx.ListingRequestGet(ctx, id); err != nil {
				return err
			}
			return decidedAlready(r)
		} else if err != nil {
			return err
		}
		r, err = tx.ListingRequestGet(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func decidedAlready(r *drip.ListingRequest) error {
	return drip.Errorf(drip.CodeConflict, "Listing request %d is %s already: only a pending request can be approved or rejected.", r.ID, r.Status)
}

// ParseStatus reads a listing status as callers write it.
func ParseStatus(s string) (drip.ListingStatus, error) {
	switch st := drip.ListingStatus(s); st {
	case drip.ListingPending, drip.ListingApproved, drip.ListingRejected:
		return st, nil
	}
	return "", drip.Errorf(drip.CodeInvalid, "Invalid listing status %q: pending, approved or rejected.", s)
}

// Requests lists the requests in one status, oldest first, so the operator
// decides them in the order they came.
func (s *Service) Requests(ctx context.Context, status drip.ListingStatus) ([]drip.ListingRequest, error) {
	if _, err := ParseStatus(string(status)); err != nil {
		return nil, err
	}
	return s.store.ListingRequestListByStatus(ctx, status)
}

// Status is the faucet's latest request, which says where its listing
// stands; nil (and no error) when the faucet never asked.
func (s *Service) Status(ctx context.Context, faucetID int64) (*drip.ListingRequest, error) {
	list, err := s.store.ListingRequestListByFaucet(ctx, faucetID)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// Listed returns the faucets of the public list: those with an approved
// request, in the order they were created. A suspended owner's faucet is
// left out while the suspension lasts, since it cannot pay anyone.
func (s *Service) Listed(ctx context.Context) ([]drip.Faucet, error) {
	all, err := s.store.FaucetListListed(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]drip.Faucet, 0, len(all))
	for _, f := range all {
		if f.OwnerStatus != drip.UserSuspended {
			out = append(out, f)
		}
	}
	return out, nil
}

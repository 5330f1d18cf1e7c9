package merchant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/seal"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// Checkout is a merchant checkout as stored.
type Checkout = store.Checkout

// TransferKind is the ledger kind of a buyer's payment to a merchant.
const TransferKind = "merchant"

// Deps are what the checkout service works with.
type Deps struct {
	Store  store.Store
	Users  *user.Registry
	Coins  *coin.Catalog
	Prices price.Source
	// HTTP are the rules callback URLs are checked with when a form is
	// posted (D53's addresses; http admitted, as sites use it).
	HTTP safehttp.Options
	Now  func() time.Time // time.Now when nil
}

// Service runs the hosted checkout: it keeps no state but its sealing
// key, so any number of nodes may run it.
type Service struct {
	st     store.Store
	users  *user.Registry
	coins  *coin.Catalog
	prices price.Source
	http   safehttp.Options
	now    func() time.Time
	key    *seal.Key
}

// New loads (creating on first use) the key that seals payment tokens for
// their callbacks (internal/seal, purpose seal.Merchant).
func New(ctx context.Context, d Deps) (*Service, error) {
	if d.Store == nil || d.Users == nil || d.Coins == nil || d.Prices == nil {
		return nil, errors.New("merchant: a store, users, coins and prices are required")
	}
	key, err := seal.Load(ctx, d.Store, seal.Merchant)
	if err != nil {
		return nil, err
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	d.HTTP.AllowHTTP = true
	d.HTTP.Name = "callback_url"
	return &Service{st: d.Store, users: d.Users, coins: d.Coins, prices: d.Prices, http: d.HTTP, now: d.Now, key: key}, nil
}

// Create checks a posted payment form (spec 4.4) and creates its checkout,
// open and not yet quoted. A refused form is a *FieldError naming the
// field, and creates nothing.
func (s *Service) Create(ctx context.Context, form url.Values) (*Checkout, error) {
	f, err := ParseForm(form)
	if err != nil {
		return nil, err
	}
	merchant, err := s.users.ByUsername(ctx, f.Merchant)
	switch {
	case drip.ErrorCode(err) == drip.CodeNotFound:
		return nil, fieldErr("merchant_username", "is not a drip user")
	case err != nil:
		return nil, err
	case merchant.Status != drip.UserActive:
		return nil, fieldErr("merchant_username", "cannot receive payments: the account is suspended")
	}
	if f.Currency1 != USD {
		if err := s.active(ctx, "currency1", f.Currency1); err != nil {
			return nil, err
		}
	}
	if f.Currency2 != "" {
		if err := s.active(ctx, "currency2", f.Currency2); err != nil {
			return nil, err
		}
	}
	if f.Callback != "" {
		if err := safehttp.CheckURL(ctx, f.Callback, s.http); err != nil {
			var de *drip.Error
			if errors.As(err, &de) {
				return nil, &FieldError{Field: "callback_url", Message: de.Message}
			}
			return nil, err
		}
	}
	c := &Checkout{PublicID: newPublicID(), MerchantID: merchant.ID, Item: f.Item, Amount1: f.Amount1,
		Currency1: f.Currency1, Currency2: f.Currency2, Custom: f.Custom, CallbackURL: f.Callback,
		SuccessURL: f.Success, CancelURL: f.Cancel, State: store.CheckoutOpen, CreatedAt: s.now()}
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		c.ID, err = tx.CheckoutCreate(ctx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (s *Service) active(ctx context.Context, field, symbol string) error {
	_, err := s.coins.Active(ctx, symbol)
	if drip.ErrorCode(err) == drip.CodeInvalidCurrency {
		return fieldErr(field, "is not a coin drip accepts (or USD, for currency1)")
	}
	return err
}

// newPublicID names a checkout in its page's URL: "chk_" and 128 random
// bits, so that checkouts cannot be found by counting.
func newPublicID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return "chk_" + hex.EncodeToString(b)
}

var errNoCheckout = drip.Errorf(drip.CodeNotFound, "There is no such checkout.")

// Get is the checkout publicID.
func (s *Service) Get(ctx context.Context, publicID string) (*Checkout, error) {
	c, err := s.st.CheckoutGet(ctx, publicID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoCheckout
	}
	return c, err
}

// Coins are the coins the buyer of c may pay with: currency2 when the
// merchant named one, else every active coin.
func (s *Service) Coins(ctx context.Context, c *Checkout) ([]drip.Coin, error) {
	all, err := s.coins.ListActive(ctx)
	if err != nil || c.Currency2 == "" {
		return all, err
	}
	for _, k := range all {
		if k.Symbol == c.Currency2 {
			return []drip.Coin{k}, nil
		}
	}
	return nil, drip.Errorf(drip.CodeInvalidCurrency, "The coin this checkout asks for, %s, is no longer accepted.", c.Currency2)
}

// Quote prices the open checkout publicID in coin at the current rates
// and holds that price for QuoteTTL (D57); it replaces a quote held
// before. coin must be currency2 when the merchant named one. Without a
// fresh price the checkout cannot be quoted in coin: CodeUnavailable,
// saying so.
func (s *Service) Quote(ctx context.Context, publicID, coinSymbol string) (*Checkout, error) {
	c, err := s.Get(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if err := open(c); err != nil {
		return nil, err
	}
	k, err := s.coins.Active(ctx, coinSymbol)
	if err != nil {
		return nil, err
	}
	if c.Currency2 != "" && k.Symbol != c.Currency2 {
		return nil, drip.Errorf(drip.CodeInvalidCurrency, "This checkout is paid in %s.", c.Currency2)
	}
	q, err := Price(ctx, s.prices, decimal.New(c.Amount1, -drip.Decimals), c.Currency1, k.Symbol, s.now())
	if errors.Is(err, ErrNoPrice) {
		return nil, drip.Errorf(drip.CodeUnavailable, "There is no current %s price to convert this checkout's price with; try again later or choose another coin.", k.Symbol)
	}
	if err != nil {
		return nil, err
	}
	c.Quote = store.CheckoutQuote{Coin: q.Coin, Amount: q.Amount, Rate: q.Rate.String(), Source: q.Source, PriceAt: q.PriceAt, Expires: q.Expires}
	var held bool
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		held, err = tx.CheckoutSetQuote(ctx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !held { // paid or cancelled meanwhile
		return s.Get(ctx, publicID)
	}
	return c, nil
}

// open is nil when c may still be quoted and paid.
func open(c *Checkout) error {
	switch c.State {
	case store.CheckoutPaid:
		return drip.Errorf(drip.CodeConflict, "This checkout is paid already.")
	case store.CheckoutCancelled:
		return drip.Errorf(drip.CodeConflict, "This checkout was cancelled.")
	}
	return nil
}

// ErrQuoteExpired is the refusal of a payment whose quote is not the one
// held any more, or has expired: the buyer must review a new one.
var ErrQuoteExpired = drip.Errorf(drip.CodeConflict, "The price you reviewed has expired or changed; review the new quote before paying.")

// Pay pays the checkout publicID from buyer's balance, at the quote the
// buyer reviewed (coin and amount, as the page showed them), in one
// transaction: the ledger transfer from buyer to merchant, the checkout
// marked paid with its single-use token (D56), and the callback's outbox
// row (D50, D55). Nothing of it happens when any part cannot: a balance
// too low (CodeInsufficientFunds), a quote expired or changed
// (ErrQuoteExpired), a checkout paid or cancelled. A payment repeated by
// the same buyer (a double click, a form sent again) pays nothing and
// answers the paid checkout, so the buyer sees their receipt.
func (s *Service) Pay(ctx context.Context, publicID string, buyer *drip.User, coinSymbol string, amount int64) (*Checkout, error) {
	c, err := s.Get(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if c.State == store.CheckoutPaid && c.PayerID == buyer.ID {
		return c, nil
	}
	if err := open(c); err != nil {
		return nil, err
	}
	now := s.now()
	switch {
	case c.MerchantID == buyer.ID:
		return nil, drip.Errorf(drip.CodeInvalid, "You cannot pay yourself.")
	case buyer.Status != drip.UserActive:
		return nil, drip.Errorf(drip.CodeForbidden, "Your account is suspended: it cannot pay.")
	case c.Quote.Coin == "" || c.Quote.Coin != drip.Symbol(coinSymbol) || c.Quote.Amount != amount || !now.Before(c.Quote.Expires):
		return nil, ErrQuoteExpired
	}
	merchant, err := s.st.UserGetByID(ctx, c.MerchantID)
	if err != nil {
		return nil, err
	}
	if merchant.Status != drip.UserActive {
		return nil, drip.Errorf(drip.CodeForbidden, "This merchant cannot receive payments now.")
	}
	token, hash := NewToken()
	paid := *c
	paid.PayerID, paid.PaidAt, paid.TokenHash = buyer.ID, now, hash
	if paid.TokenSealed, err = s.key.Seal([]byte(token), binding(c.ID)); err != nil {
		return nil, err
	}
	errMoved := errors.New("checkout moved on")
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		_, transferID, err := ledger.Move(ctx, tx, &store.Transfer{Coin: c.Quote.Coin, From: buyer.AccountID,
			To: merchant.AccountID, Amount: c.Quote.Amount, Kind: TransferKind, CreatedAt: now})
		if err != nil {
			return err
		}
		paid.TransferID = transferID
		ok, err := tx.CheckoutPay(ctx, &paid)
		if err != nil {
			return err
		}
		if !ok {
			return errMoved // rolls the transfer back
		}
		if paid.CallbackURL != "" {
			if _, err := tx.CallbackInsert(ctx, paid.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrInsufficientFunds):
		return nil, drip.Errorf(drip.CodeInsufficientFunds, "Your %s balance is too low for this payment of %s %s.",
			c.Quote.Coin, drip.FormatCoins(c.Quote.Amount), c.Quote.Coin)
	case errors.Is(err, errMoved):
		// Paid (perhaps by this buyer's other click), cancelled, or quoted
		// anew since it was read: say which.
		now, gerr := s.Get(ctx, publicID)
		if gerr != nil {
			return nil, gerr
		}
		if now.State == store.CheckoutPaid && now.PayerID == buyer.ID {
			return now, nil
		}
		if err := open(now); err != nil {
			return nil, err
		}
		return nil, ErrQuoteExpired
	case err != nil:
		return nil, err
	}
	paid.State = store.CheckoutPaid
	return &paid, nil
}

// binding ties a sealed token to its checkout: a sealed value copied to
// another checkout does not open there.
func binding(id int64) string { return "checkout:" + strconv.FormatInt(id, 10) }

// Token opens the payment token sealed with the paid checkout c, for its
// callback (D55, D56).
func (s *Service) Token(c *Checkout) (string, error) {
	b, err := s.key.Open(c.TokenSealed, binding(c.ID))
	if err != nil {
		return "", fmt.Errorf("merchant: the token of checkout %d: %w", c.ID, err)
	}
	return string(b), nil
}

// Cancel cancels the open checkout publicID (the buyer's Cancel) and
// returns it; a paid one stays paid (CodeConflict).
func (s *Service) Cancel(ctx context.Context, publicID string) (*Checkout, error) {
	c, err := s.Get(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if c.State == store.CheckoutCancelled {
		return c, nil
	}
	var ok bool
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		ok, err = tx.CheckoutCancel(ctx, c.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, drip.Errorf(drip.CodeConflict, "This checkout is paid already; it cannot be cancelled.")
	}
	c.State = store.CheckoutCancelled
	return c, nil
}

// Received is a page of the payments merchantID received, newest first,
// older than the checkout beforeID (0: from the newest).
func (s *Service) Received(ctx context.Context, merchantID, beforeID int64, limit int) ([]Checkout, error) {
	return s.st.CheckoutList(ctx, &store.CheckoutListParams{MerchantID: merchantID, BeforeID: beforeID, Limit: max(1, min(limit, 200))})
}

// Paid is a page of the payments payerID made to merchants, newest first,
// older than the checkout beforeID (0: from the newest).
func (s *Service) Paid(ctx context.Context, payerID, beforeID int64, limit int) ([]Checkout, error) {
	return s.st.CheckoutList(ctx, &store.CheckoutListParams{PayerID: payerID, BeforeID: beforeID, Limit: max(1, min(limit, 200))})
}

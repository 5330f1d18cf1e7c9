package merchant

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// Payment is a paid checkout as the merchant learns of it: the fields of
// the callback and of the verification reply (spec 2.9), amounts as
// 8-decimal strings (D56). amount1 and currency1 are the merchant's
// price; amount2 and currency2 what the buyer paid.
type Payment struct {
	Valid            bool   `json:"valid"`
	TransactionID    string `json:"transaction_id"`
	MerchantUsername string `json:"merchant_username"`
	PayerUsername    string `json:"payer_username"`
	Amount1          string `json:"amount1"`
	Currency1        string `json:"currency1"`
	Amount2          string `json:"amount2"`
	Currency2        string `json:"currency2"`
	Custom           string `json:"custom"`
}

// Verify is the answer to GET /merchant/get-payment/{token} (D56): the
// payment, valid, the first time its token is verified, which also ends
// its callback's attempts (D55); valid false, every other field empty,
// for a token verified before, unknown or malformed. The token is looked
// up by its hash; nothing is told about why a token is not valid.
func (s *Service) Verify(ctx context.Context, token string) (*Payment, error) {
	if !validToken(token) {
		return &Payment{}, nil
	}
	var c *Checkout
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		if c, err = tx.CheckoutVerify(ctx, HashToken(token), s.now()); err != nil {
			return err
		}
		return tx.CallbackAcknowledge(ctx, c.ID, s.now())
	})
	if errors.Is(err, store.ErrNotFound) {
		return &Payment{}, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := s.Payment(ctx, c)
	if err != nil {
		return nil, err
	}
	p.Valid = true
	return p, nil
}

// Payment is the paid checkout c as spec 2.9 tells it (Valid left false:
// only a verification says a payment is valid).
func (s *Service) Payment(ctx context.Context, c *Checkout) (*Payment, error) {
	merchant, err := s.st.UserGetByID(ctx, c.MerchantID)
	if err != nil {
		return nil, err
	}
	payer, err := s.st.UserGetByID(ctx, c.PayerID)
	if err != nil {
		return nil, err
	}
	return &Payment{
		TransactionID: strconv.FormatInt(c.TransferID, 10), MerchantUsername: merchant.Username, PayerUsername: payer.Username,
		Amount1: drip.FormatCoinsFixed(c.Amount1), Currency1: c.Currency1,
		Amount2: drip.FormatCoinsFixed(c.Quote.Amount), Currency2: c.Quote.Coin, Custom: c.Custom,
	}, nil
}

// CallbackForm is the form-encoded body of the paid checkout c's callback
// (spec 2.9, 6.2): its single-use token, the payment's fields, and the
// exchange rate the buyer paid at.
func (s *Service) CallbackForm(ctx context.Context, c *Checkout) (url.Values, error) {
	p, err := s.Payment(ctx, c)
	if err != nil {
		return nil, err
	}
	token, err := s.Token(c)
	if err != nil {
		return nil, err
	}
	return url.Values{
		"token": {token}, "transaction_id": {p.TransactionID}, "merchant_username": {p.MerchantUsername},
		"payer_username": {p.PayerUsername}, "amount1": {p.Amount1}, "currency1": {p.Currency1},
		"amount2": {p.Amount2}, "currency2": {p.Currency2}, "custom": {p.Custom}, "exchange_rate": {c.Quote.Rate},
	}, nil
}

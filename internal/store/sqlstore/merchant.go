package sqlstore

import (
	"context"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// scanDelivery reads one row of OutboxColumns, then more.
func scanDelivery(scan func(dest ...any) error, more ...any) (*store.Delivery, error) {
	var d store.Delivery
	var next, created int64
	var done *int64
	if err := scan(append([]any{&d.ID, &d.Kind, &d.State, &d.Attempts, &d.Tries, &next, &d.LastStatus, &d.LastError,
		&created, &done}, more...)...); err != nil {
		return nil, err
	}
	d.NextAttemptAt, d.CreatedAt = fromMicros(next), fromMicros(created)
	if done != nil {
		d.DoneAt = fromMicros(*done)
	}
	return &d, nil
}

func (q *querier) CallbackGet(ctx context.Context, checkoutID int64) (*store.Delivery, error) {
	return scanDelivery(func(dest ...any) error {
		return q.scanRow(ctx, q.q.CallbackGet, []any{checkoutID}, dest...)
	})
}

func (q *querier) CallbackClaim(ctx context.Context, now, until time.Time, limit int) ([]store.CallbackDelivery, error) {
	body, err := q.claim(ctx, store.DeliveryCallback, now, until, limit)
	if err != nil || body == "" {
		return nil, err
	}
	checkouts := map[int64]store.Checkout{}
	err = q.list(ctx, q.q.CheckoutsOfCallbacks, []any{body}, func(r Rows) error {
		c, err := scanCheckout(r.Scan)
		if err == nil {
			checkouts[c.ID] = *c
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []store.CallbackDelivery
	err = q.list(ctx, q.q.CallbackClaimed, []any{body}, func(r Rows) error {
		var checkoutID int64
		d, err := scanDelivery(r.Scan, &checkoutID)
		if err == nil {
			out = append(out, store.CallbackDelivery{Delivery: *d, Checkout: checkouts[checkoutID]})
		}
		return err
	})
	return out, err
}

func (q *querier) CallbackResend(ctx context.Context, checkoutID int64, at time.Time) (bool, error) {
	n, err := q.exec(ctx, q.q.CallbackResend, checkoutID, micros(at))
	return n == 1, err
}

// Merchant checkouts (issue 13, spec 4.4, D55-D57).

// scanCheckout reads one row of CheckoutColumns.
func scanCheckout(scan func(dest ...any) error) (*store.Checkout, error) {
	var c store.Checkout
	var created int64
	var priceAt, expires, payer, transfer, paid, verified *int64
	var tokenHash *string
	err := scan(&c.ID, &c.PublicID, &c.MerchantID, &c.Item, &c.Amount1, &c.Currency1, &c.Currency2, &c.Custom,
		&c.CallbackURL, &c.SuccessURL, &c.CancelURL, &c.State, &created, &c.Quote.Coin, &c.Quote.Amount, &c.Quote.Rate,
		&c.Quote.Source, &priceAt, &expires, &payer, &transfer, &paid, &tokenHash, &c.TokenSealed, &verified)
	if err != nil {
		return nil, err
	}
	c.CreatedAt = fromMicros(created)
	for _, t := range []struct {
		us *int64
		to *time.Time
	}{{priceAt, &c.Quote.PriceAt}, {expires, &c.Quote.Expires}, {paid, &c.PaidAt}, {verified, &c.VerifiedAt}} {
		if t.us != nil {
			*t.to = fromMicros(*t.us)
		}
	}
	if payer != nil {
		c.PayerID = *payer
	}
	if transfer != nil {
		c.TransferID = *transfer
	}
	if tokenHash != nil {
		c.TokenHash = *tokenHash
	}
	return &c, nil
}

func (q *querier) CheckoutCreate(ctx context.Context, c *store.Checkout) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.CheckoutCreate, []any{c.PublicID, c.MerchantID, c.Item, c.Amount1, c.Currency1, c.Currency2,
		c.Custom, c.CallbackURL, c.SuccessURL, c.CancelURL, micros(c.CreatedAt)}, &id)
	return id, err
}

func (q *querier) CheckoutGet(ctx context.Context, publicID string) (*store.Checkout, error) {
	return scanCheckout(func(dest ...any) error {
		return q.scanRow(ctx, q.q.CheckoutGet, []any{publicID}, dest...)
	})
}

func (q *querier) CheckoutList(ctx context.Context, p *store.CheckoutListParams) ([]store.Checkout, error) {
	var out []store.Checkout
	err := q.list(ctx, q.q.CheckoutList, []any{p.MerchantID, p.PayerID, p.BeforeID, p.Limit}, func(r Rows) error {
		c, err := scanCheckout(r.Scan)
		if err == nil {
			out = append(out, *c)
		}
		return err
	})
	return out, err
}

func (q *querier) CheckoutSetQuote(ctx context.Context, c *store.Checkout) (bool, error) {
	qt := &c.Quote
	n, err := q.exec(ctx, q.q.CheckoutSetQuote, c.ID, qt.Coin, qt.Amount, qt.Rate, qt.Source, micros(qt.PriceAt), micros(qt.Expires))
	return n == 1, err
}

func (q *querier) CheckoutPay(ctx context.Context, c *store.Checkout) (bool, error) {
	n, err := q.exec(ctx, q.q.CheckoutPay, c.ID, c.PayerID, c.TransferID, micros(c.PaidAt), c.TokenHash, c.TokenSealed,
		c.Quote.Coin, c.Quote.Amount)
	return n == 1, err
}

func (q *querier) CheckoutCancel(ctx context.Context, id int64) (bool, error) {
	n, err := q.exec(ctx, q.q.CheckoutCancel, id)
	return n == 1, err
}

func (q *querier) CheckoutVerify(ctx context.Context, tokenHash string, at time.Time) (*store.Checkout, error) {
	return scanCheckout(func(dest ...any) error {
		return q.scanRow(ctx, q.q.CheckoutVerify, []any{tokenHash, micros(at)}, dest...)
	})
}

func (q *querier) CallbackInsert(ctx context.Context, checkoutID int64, at time.Time) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.CallbackInsert, []any{checkoutID, micros(at)}, &id)
	return id, err
}

func (q *querier) CallbackAcknowledge(ctx context.Context, checkoutID int64, at time.Time) error {
	_, err := q.exec(ctx, q.q.CallbackAcknowledge, checkoutID, micros(at))
	return err
}

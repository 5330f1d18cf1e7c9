package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for merchant checkouts (issue 13, spec 4.4, D55-D57).

func newCheckout(t *testing.T, st store.Store, merchantID int64, publicID string) store.Checkout {
	t.Helper()
	c := store.Checkout{PublicID: publicID, MerchantID: merchantID, Item: "A year of premium", Amount1: 1_999_000_000,
		Currency1: "USD", Custom: "order-42", CallbackURL: "https://shop.example.com/ipn",
		SuccessURL: "https://shop.example.com/thanks", CancelURL: "https://shop.example.com/cart",
		State: store.CheckoutOpen, CreatedAt: t0}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		c.ID, err = tx.CheckoutCreate(ctx, &c)
		return err
	})
	return c
}

// A checkout round-trips; its quote is held while open; it is paid only
// with the quote it holds, before the quote expires, and once; a paid
// checkout cannot be cancelled; its token verifies once.
func testCheckoutLifecycle(t *testing.T, st store.Store) {
	ctx := context.Background()
	shop, buyer := newUser(t, st, "shop"), newUser(t, st, "buyer")
	c := newCheckout(t, st, shop.ID, "chk_one")
	got, err := st.CheckoutGet(ctx, "chk_one")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, *got); diff != "" {
		t.Errorf("CheckoutGet (-want +got):\n%s", diff)
	}
	if _, err := st.CheckoutGet(ctx, "chk_none"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown checkout: %v, want ErrNotFound", err)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.CheckoutCreate(ctx, &c)
		return err
	}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second checkout with the public id: %v, want ErrConflict", err)
	}

	c.Quote = store.CheckoutQuote{Coin: "BTC", Amount: 30_754, Rate: "0.0000153846153846", Source: "static",
		PriceAt: t0, Expires: t0.Add(15 * time.Minute)}
	ok := false
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		ok, err = tx.CheckoutSetQuote(ctx, &c)
		return err
	})
	if got, _ := st.CheckoutGet(ctx, "chk_one"); !ok || got.Quote != c.Quote {
		t.Errorf("the held quote: %v %+v, want %+v", ok, got.Quote, c.Quote)
	}

	deposit(t, st, buyer.AccountID, "BTC", 100_000)
	tr := transfer(t, st, "BTC", buyer.AccountID, shop.AccountID, 30_754, "merchant", t0)
	pay := func(q store.CheckoutQuote, at time.Time, token string) bool {
		t.Helper()
		p := c
		p.Quote, p.PayerID, p.TransferID, p.PaidAt, p.TokenHash, p.TokenSealed = q, buyer.ID, tr, at, token, "sealed:"+token
		var ok bool
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			ok, err = tx.CheckoutPay(ctx, &p)
			return err
		})
		return ok
	}
	other := c.Quote
	other.Amount--
	if pay(other, t0.Add(time.Minute), "h0") {
		t.Error("paid with a quote other than the one held")
	}
	if pay(c.Quote, t0.Add(15*time.Minute), "h0") {
		t.Error("paid at the moment the quote expired")
	}
	if !pay(c.Quote, t0.Add(14*time.Minute), "hash-1") {
		t.Fatal("the held quote before it expired was not paid")
	}
	if pay(c.Quote, t0.Add(14*time.Minute), "hash-2") {
		t.Error("paid twice")
	}
	got, _ = st.CheckoutGet(ctx, "chk_one")
	if got.State != store.CheckoutPaid || got.PayerID != buyer.ID || got.TransferID != tr || got.TokenHash != "hash-1" ||
		got.TokenSealed != "sealed:hash-1" || !got.PaidAt.Equal(t0.Add(14*time.Minute)) {
		t.Errorf("paid checkout %+v", got)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if ok, err := tx.CheckoutCancel(ctx, c.ID); err != nil || ok {
			return errors.Join(err, errors.New("a paid checkout was cancelled"))
		}
		if ok, err := tx.CheckoutSetQuote(ctx, &c); err != nil || ok {
			return errors.Join(err, errors.New("a paid checkout took a new quote"))
		}
		return nil
	})

	verify := func(hash string) (*store.Checkout, error) {
		var out *store.Checkout
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			var err error
			out, err = tx.CheckoutVerify(ctx, hash, t0.Add(20*time.Minute))
			return err
		})
		return out, err
	}
	if v, err := verify("hash-1"); err != nil || v.ID != c.ID || !v.VerifiedAt.Equal(t0.Add(20*time.Minute)) {
		t.Errorf("first verification: %+v, %v", v, err)
	}
	for _, h := range []string{"hash-1", "hash-2", "nothing"} {
		if _, err := verify(h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("verification of %s: %v, want ErrNotFound (once only)", h, err)
		}
	}

	// Cancel an open one; it cannot be paid then.
	c2 := newCheckout(t, st, shop.ID, "chk_two")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if ok, err := tx.CheckoutCancel(ctx, c2.ID); err != nil || !ok {
			return errors.Join(err, errors.New("an open checkout was not cancelled"))
		}
		return nil
	})

	// Lists: paid ones only, to the merchant or by the buyer.
	for _, p := range []store.CheckoutListParams{{MerchantID: shop.ID, Limit: 10}, {PayerID: buyer.ID, Limit: 10}} {
		list, err := st.CheckoutList(ctx, &p)
		if err != nil || len(list) != 1 || list[0].ID != c.ID {
			t.Errorf("CheckoutList(%+v) = %d rows, %v; want the one paid", p, len(list), err)
		}
	}
	if list, _ := st.CheckoutList(ctx, &store.CheckoutListParams{MerchantID: buyer.ID, Limit: 10}); len(list) != 0 {
		t.Errorf("the buyer received %d payments, want none", len(list))
	}
}

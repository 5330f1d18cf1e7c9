package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Payment is a merchant payment as drip's verification answers it (spec
// 2.9): Valid is true the first time its token is verified and never
// again; the amounts are decimal strings with 8 decimals. Amount1 and
// Currency1 are the merchant's price, Amount2 and Currency2 what the buyer
// paid.
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

// CallbackToken is the single-use token of a merchant callback (spec
// 6.2), a form-encoded POST; the other fields are the payment's, to be
// trusted only once VerifyPayment says so.
func CallbackToken(r *http.Request) (string, error) {
	if err := r.ParseForm(); err != nil {
		return "", fmt.Errorf("client: callback: %w", err)
	}
	token := r.PostForm.Get("token")
	if token == "" {
		return "", errors.New("client: callback: no token")
	}
	return token, nil
}

// VerifyPayment asks drip at baseURL about the payment of token (GET
// /merchant/get-payment/{token}, D56), server to server, before goods are
// delivered: check Valid, then that the amount, currency, merchant and
// custom are those of the order. A token verifies once; a verification
// that got no answer (an error) may be asked again only if the first
// answer was not received, so record the order as paid the moment Valid
// comes back.
func VerifyPayment(ctx context.Context, baseURL, token string, opts ...Option) (*Payment, error) {
	c, err := newConn(baseURL, opts)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/merchant/get-payment/"+url.PathEscape(token), nil)
	if err != nil {
		return nil, err
	}
	ex, err := c.do(req)
	if err != nil {
		return nil, err
	}
	if ex.status != http.StatusOK {
		return nil, fmt.Errorf("client: verify payment: HTTP %d", ex.status)
	}
	var p Payment
	if err := json.Unmarshal(ex.body, &p); err != nil {
		return nil, fmt.Errorf("client: verify payment: %w", err)
	}
	return &p, nil
}

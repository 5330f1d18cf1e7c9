package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// V1 calls drip's FaucetPay-style v1 interface (spec 4.1) with a faucet's
// api_key: form-encoded POSTs, replies always HTTP 200 with the outcome in
// the body's status (spec 7.1). A status other than 200 is an *Error with
// V1Status set. v1 has no idempotency keys, so nothing is retried: a send
// retried after a timeout could pay twice. Use Client.Send where that
// matters. V1 is safe for concurrent use.
type V1 struct {
	*conn
	apiKey string
}

// NewV1 returns a v1 client of the server at baseURL with a faucet's
// api_key. WithRetryPolicy has no effect on it.
func NewV1(baseURL, apiKey string, opts ...Option) (*V1, error) {
	c, err := newConn(baseURL, opts)
	if err != nil {
		return nil, err
	}
	if apiKey == "" {
		return nil, errors.New("client: empty api_key")
	}
	return &V1{conn: c, apiKey: apiKey}, nil
}

// v1Prefix is where v1 is mounted.
const v1Prefix = "/api/v1"

// v1Envelope is the part of every v1 reply that says its outcome.
type v1Envelope struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// call POSTs form (with the api_key) to a v1 method and decodes a
// successful reply into out.
func (v *V1) call(ctx context.Context, method string, form url.Values, out any) error {
	form.Set("api_key", v.apiKey)
	path := v1Prefix + method
	x, err := v.post(ctx, path, "application/x-www-form-urlencoded", []byte(form.Encode()), nil)
	if err != nil {
		return err
	}
	var env v1Envelope
	if x.status != http.StatusOK || json.Unmarshal(x.body, &env) != nil || env.Status == 0 {
		return &Error{HTTPStatus: x.status, Message: snippet(x.body), Path: path}
	}
	if env.Status != http.StatusOK {
		return &Error{HTTPStatus: x.status, V1Status: env.Status, Message: env.Message, Path: path}
	}
	if err := v.decode(x.body, out); err != nil {
		return fmt.Errorf("client: %s: decode reply: %w", path, err)
	}
	return nil
}

// V1SendRequest is a v1 payout.
type V1SendRequest struct {
	To        string // email, username, wallet address or payout_user_hash
	Amount    int64  // smallest units
	Currency  string
	IPAddress string // the claimer's IP, recommended
	Referral  string
}

// V1SendResult is a paid v1 send.
type V1SendResult struct {
	v1Envelope
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Currency           string      `json:"currency"`
	Balance            int64       `json:"balance"`
	BalanceBitcoin     json.Number `json:"balance_bitcoin"`
	PayoutID           int64       `json:"payout_id"`
	PayoutUserHash     string      `json:"payout_user_hash"`
}

// Send pays a registered user, once: it is never retried (v1 has no
// idempotency keys).
func (v *V1) Send(ctx context.Context, r V1SendRequest) (*V1SendResult, error) {
	form := url.Values{"to": {r.To}, "amount": {strconv.FormatInt(r.Amount, 10)}, "currency": {r.Currency}}
	if r.IPAddress != "" {
		form.Set("ip_address", r.IPAddress)
	}
	if r.Referral != "" {
		form.Set("referral", r.Referral)
	}
	return v1Call[V1SendResult](ctx, v, "/send", form)
}

// V1AddressCheck is a destination found payable.
type V1AddressCheck struct {
	v1Envelope
	PayoutUserHash string `json:"payout_user_hash"`
}

// CheckAddress verifies that address is a payable user for currency
// ("" for the server's default coin).
func (v *V1) CheckAddress(ctx context.Context, address, currency string) (*V1AddressCheck, error) {
	form := url.Values{"address": {address}}
	if currency != "" {
		form.Set("currency", currency)
	}
	return v1Call[V1AddressCheck](ctx, v, "/checkaddress", form)
}

// V1Balance is the faucet's balance of one coin.
type V1Balance struct {
	v1Envelope
	Currency       string      `json:"currency"`
	Balance        int64       `json:"balance"`
	BalanceBitcoin json.Number `json:"balance_bitcoin"`
}

// GetBalance reads the faucet's balance of currency ("" for the server's
// default coin).
func (v *V1) GetBalance(ctx context.Context, currency string) (*V1Balance, error) {
	form := url.Values{}
	if currency != "" {
		form.Set("currency", currency)
	}
	return v1Call[V1Balance](ctx, v, "/getbalance", form)
}

// V1Reward is one payout of a v1 list.
type V1Reward struct {
	To     string `json:"to"`
	Amount int64  `json:"amount"`
	Date   string `json:"date"` // dd-mm-yy HH:MM:SS GMT (D23)
}

// Time is the reward's date.
func (r V1Reward) Time() (time.Time, error) {
	return time.Parse("02-01-06 15:04:05 GMT", r.Date)
}

// V1Payouts are the faucet's latest payouts, newest first.
type V1Payouts struct {
	v1Envelope
	Rewards []V1Reward `json:"rewards"`
}

// Payouts lists the latest count payouts (1 to 100; 0: the server's
// default, 10) in currency ("" for every coin).
func (v *V1) Payouts(ctx context.Context, count int, currency string) (*V1Payouts, error) {
	form := url.Values{}
	if count != 0 {
		form.Set("count", strconv.Itoa(count))
	}
	if currency != "" {
		form.Set("currency", currency)
	}
	return v1Call[V1Payouts](ctx, v, "/payouts", form)
}

// V1CoinName is a coin's name and symbol.
type V1CoinName struct {
	Name    string `json:"name"`
	Acronym string `json:"acronym"`
}

// V1Currencies are the active coins.
type V1Currencies struct {
	v1Envelope
	Currencies      []string     `json:"currencies"`
	CurrenciesNames []V1CoinName `json:"currencies_names"`
}

// Currencies lists the active coins.
func (v *V1) Currencies(ctx context.Context) (*V1Currencies, error) {
	return v1Call[V1Currencies](ctx, v, "/currencies", url.Values{})
}

// v1Call is V1.call into a new T, nil on error.
func v1Call[T any](ctx context.Context, v *V1, method string, form url.Values) (*T, error) {
	var out T
	if err := v.call(ctx, method, form, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

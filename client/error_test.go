package client

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ratelimit"
)

// TestTypedErrors: drip's refusals reach the caller as *Error with the
// HTTP status, the v2 code, the v1 status and Retry-After, on v2 and v1.
func TestTypedErrors(t *testing.T) {
	eachEngine(t, apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 3}}, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		e.User(t, "bob")
		f, apiKey := e.Faucet(t, map[string]int64{"BTC": 5000})
		rec := newRecorder(t, nil)
		v2 := func(scopes ...drip.Scope) *Client { return newClient(t, e.Server.URL, e.Key(t, f, scopes...), rec) }
		sender := v2(drip.ScopeSend)
		if _, err := sender.Send(ctx, SendRequest{IdempotencyKey: "k1", To: "bob", Amount: 1000, Currency: "BTC"}); err != nil {
			t.Fatal(err)
		}
		v1 := newV1(t, e.Server.URL, apiKey)

		cases := []struct {
			name string
			call func() error
			want Error
		}{
			{"v2 409 insufficient_balance", func() error {
				_, err := sender.Send(ctx, SendRequest{To: "bob", Amount: 1_000_000, Currency: "BTC"})
				return err
			}, Error{HTTPStatus: 409, Code: CodeInsufficientBalance, V1Status: 402, Path: "/api/v2/send"}},
			{"v2 409 idempotency_key_reuse", func() error {
				_, err := sender.Send(ctx, SendRequest{IdempotencyKey: "k1", To: "bob", Amount: 2000, Currency: "BTC"})
				return err
			}, Error{HTTPStatus: 409, Code: CodeIdempotencyKeyReuse, Path: "/api/v2/send"}},
			{"v2 400 invalid_currency", func() error {
				_, err := v2(drip.ScopeRead).Balance(ctx, "XYZ")
				return err
			}, Error{HTTPStatus: 400, Code: CodeInvalidCurrency, V1Status: 410, Path: "/api/v2/balance"}},
			{"v2 400 recipient_not_payable", func() error {
				_, err := v2(drip.ScopeRead).CheckAddress(ctx, "nobody", "BTC")
				return err
			}, Error{HTTPStatus: 400, Code: CodeRecipientNotPayable, V1Status: 456, Path: "/api/v2/check-address"}},
			{"v2 401 unauthenticated", func() error {
				_, err := newClient(t, e.Server.URL, "not-a-key", rec).Faucet(ctx)
				return err
			}, Error{HTTPStatus: 401, Code: CodeUnauthenticated, V1Status: 403, Path: "/api/v2/faucet"}},
			{"v2 403 insufficient_scope", func() error {
				_, err := v2(drip.ScopeRead).Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC"})
				return err
			}, Error{HTTPStatus: 403, Code: CodeInsufficientScope, Path: "/api/v2/send"}},
			{"v2 429 rate_limited", func() error {
				c := v2(drip.ScopeRead)
				for range 3 { // the burst
					if _, err := c.Balances(ctx); err != nil {
						return err
					}
				}
				_, err := c.Balances(ctx)
				return err
			}, Error{HTTPStatus: 429, Code: CodeRateLimited, V1Status: 459, Path: "/api/v2/balances"}},
			{"v1 402", func() error {
				_, err := v1.Send(ctx, V1SendRequest{To: "bob", Amount: 1_000_000, Currency: "BTC"})
				return err
			}, Error{HTTPStatus: 200, V1Status: 402, Path: "/api/v1/send"}},
			{"v1 456", func() error {
				_, err := v1.CheckAddress(ctx, "nobody", "BTC")
				return err
			}, Error{HTTPStatus: 200, V1Status: 456, Path: "/api/v1/checkaddress"}},
			{"v1 403", func() error {
				_, err := newV1(t, e.Server.URL, "bad").GetBalance(ctx, "BTC")
				return err
			}, Error{HTTPStatus: 200, V1Status: 403, Path: "/api/v1/getbalance"}},
		}
		for _, tc := range cases {
			err := tc.call()
			var got *Error
			if !errors.As(err, &got) {
				t.Errorf("%s: %v (%T), want an *Error", tc.name, err, err)
				continue
			}
			if got.HTTPStatus != tc.want.HTTPStatus || got.Code != tc.want.Code || got.V1Status != tc.want.V1Status ||
				got.Path != tc.want.Path || got.Message == "" {
				t.Errorf("%s: %+v, want %+v and a message", tc.name, *got, tc.want)
			}
			if retry := tc.want.HTTPStatus == http.StatusTooManyRequests; (got.RetryAfter > 0) != retry {
				t.Errorf("%s: Retry-After %s", tc.name, got.RetryAfter)
			}
			if ErrorCode(err) != tc.want.Code {
				t.Errorf("%s: ErrorCode %q, want %q", tc.name, ErrorCode(err), tc.want.Code)
			}
		}
		// A refused send pays nothing, and was not retried.
		if got := e.Balance(t, f.AccountID, "BTC"); got != 4000 {
			t.Errorf("balance %d, want 4000 (the one payout)", got)
		}
	})
}

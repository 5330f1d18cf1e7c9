package webhook_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/webhook"
)

var created = time.Date(2026, 3, 14, 15, 9, 26, 500_000_000, time.UTC) // 1773500966.5

func event(typ, data string) drip.Event {
	return drip.Event{ID: "evt_0123456789abcdef01234567", FaucetID: 7, Type: typ, Data: []byte(data), CreatedAt: created}
}

// TestBodyGolden: each kind of event gives exactly the body of spec 2.8
// and D51, byte for byte (the signature covers these bytes).
func TestBodyGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ev   drip.Event
		want string
	}{
		{"payout.sent", event(drip.EventPayoutSent,
			`{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}`),
			`{"id":"evt_0123456789abcdef01234567","event":"payout.sent","faucet_id":7,"created_at":1773500966,` +
				`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}}`},
		{"payout.failed with a v1 status", event(drip.EventPayoutFailed,
			`{"to":"nobody@example.com","amount":1000,"currency":"BTC","status":456,"error":"recipient_not_payable","message":"No such user."}`),
			`{"id":"evt_0123456789abcdef01234567","event":"payout.failed","faucet_id":7,"created_at":1773500966,` +
				`"data":{"to":"nobody@example.com","amount":1000,"currency":"BTC","status":456,"error":"recipient_not_payable","message":"No such user."}}`},
		{"payout.failed that v1 has no status for", event(drip.EventPayoutFailed,
			`{"to":"bob","amount":1000,"currency":"BTC","status":null,"error":"daily_cap_reached","message":"Daily USD cap reached."}`),
			`{"id":"evt_0123456789abcdef01234567","event":"payout.failed","faucet_id":7,"created_at":1773500966,` +
				`"data":{"to":"bob","amount":1000,"currency":"BTC","status":null,"error":"daily_cap_reached","message":"Daily USD cap reached."}}`},
		{"faucet.low_balance", event(drip.EventLowBalance,
			`{"currency":"BTC","balance":400,"balance_bitcoin":0.000004,"threshold":500,"message":"Low."}`),
			`{"id":"evt_0123456789abcdef01234567","event":"faucet.low_balance","faucet_id":7,"created_at":1773500966,` +
				`"data":{"currency":"BTC","balance":400,"balance_bitcoin":0.000004,"threshold":500,"message":"Low."}}`},
		{"members stored in another order, with spaces", event(drip.EventPayoutSent,
			`{ "message":"Payout sent.", "payout_user_hash":"c54b46fd", "payout_id":"42", "currency":"BTC", "amount":1000, "to":"bob" }`),
			`{"id":"evt_0123456789abcdef01234567","event":"payout.sent","faucet_id":7,"created_at":1773500966,` +
				`"data":{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}}`},
	} {
		got, err := webhook.Body(tc.ev)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s: body (-want +got):\n%s", tc.name, diff)
		}
		again, _ := webhook.Body(tc.ev)
		if string(again) != string(got) {
			t.Errorf("%s: a second Body differs: %s", tc.name, again)
		}
	}
}

// TestBodyRefusesWhatIsNotTheDocumentedBody: a stored event whose data
// lacks a member, has one more, or has one of another type, or whose id,
// faucet, time or type is wrong, makes no body.
func TestBodyRefusesWhatIsNotTheDocumentedBody(t *testing.T) {
	t.Parallel()
	const sent = `{"to":"bob","amount":1000,"currency":"BTC","payout_id":"42","payout_user_hash":"c54b46fd","message":"Payout sent."}`
	withID := func(id string) drip.Event { ev := event(drip.EventPayoutSent, sent); ev.ID = id; return ev }
	noFaucet := event(drip.EventPayoutSent, sent)
	noFaucet.FaucetID = 0
	noTime := event(drip.EventPayoutSent, sent)
	noTime.CreatedAt = time.Time{}
	for _, tc := range []struct {
		name string
		ev   drip.Event
	}{
		{"payout_id a number (spec 2.8: a string)", event(drip.EventPayoutSent, strings.Replace(sent, `"42"`, `42`, 1))},
		{"amount not an integer", event(drip.EventPayoutSent, strings.Replace(sent, `1000`, `10.5`, 1))},
		{"amount a string", event(drip.EventPayoutSent, strings.Replace(sent, `1000`, `"1000"`, 1))},
		{"a member missing", event(drip.EventPayoutSent, strings.Replace(sent, `"payout_user_hash":"c54b46fd",`, ``, 1))},
		{"a member more", event(drip.EventPayoutSent, strings.Replace(sent, `"to":"bob",`, `"to":"bob","ip":"10.0.0.1",`, 1))},
		{"payout.sent data under payout.failed", event(drip.EventPayoutFailed, sent)},
		{"failed without its v2 error", event(drip.EventPayoutFailed, `{"to":"bob","amount":1,"currency":"BTC","status":402,"message":"m"}`)},
		{"low balance without its threshold", event(drip.EventLowBalance, `{"currency":"BTC","balance":400,"balance_bitcoin":0.000004,"message":"Low."}`)},
		{"data null", event(drip.EventPayoutSent, `null`)},
		{"data an array", event(drip.EventPayoutSent, `[]`)},
		{"data not JSON", event(drip.EventPayoutSent, `{"to":`)},
		{"trailing data", event(drip.EventPayoutSent, sent+` {}`)},
		{"unknown event type", event("payout.maybe", sent)},
		{"id without evt_", withID("0123456789abcdef01234567")},
		{"id only evt_", withID("evt_")},
		{"no faucet", noFaucet},
		{"no time", noTime},
	} {
		body, err := webhook.Body(tc.ev)
		if !errors.Is(err, webhook.ErrEvent) || body != nil {
			t.Errorf("%s: Body = %s, %v; want nothing and ErrEvent", tc.name, body, err)
		}
	}
}

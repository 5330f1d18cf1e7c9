package operation

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// SendParams are a v2 send (spec 4.2). No tool sends: this operation is
// v2's alone.
type SendParams struct {
	IdempotencyKey string `json:"idempotency_key" jsonschema:"one unique key per logical payout, reused on retries: 1 to 255 printable ASCII characters"`
	To             string `json:"to" jsonschema:"recipient: email, username, wallet address or payout_user_hash"`
	Amount         Amount `json:"amount"`
	Currency       string `json:"currency" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
	IPAddress      string `json:"ip_address,omitempty" jsonschema:"the claimer's IP address, recommended: it feeds anti-fraud and per-IP limits"`
	Referral       string `json:"referral,omitempty" jsonschema:"a tag kept for the owner's reports"`
	DryRun         bool   `json:"dry_run,omitempty" jsonschema:"true: run every check and answer what the send would do, paying nothing, binding no key and recording nothing (D62)"`
}

func (p SendParams) validate() error {
	if p.IdempotencyKey == "" {
		return drip.Errorf(drip.CodeInvalid, "Missing idempotency_key: one unique key per logical payout, reused on retries.")
	}
	return nil
}

func (SendParams) refine(s *jsonschema.Schema) {
	k := s.Properties["idempotency_key"]
	k.MinLength, k.MaxLength, k.Pattern = new(1), new(payout.MaxIdempotencyKey), `^[\x20-\x7e]+$`
	coinSchema(s.Properties["currency"])
	s.Properties["to"].MinLength = new(1)
	for _, text := range []string{"to", "ip_address", "referral"} {
		textSchema(s.Properties[text])
	}
}

// Amount is an amount as a JSON number or a string of digits; its text is
// judged by the payout pipeline as v1's is, in the order of D21 (D22,
// D27).
type Amount string

func (a *Amount) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*a = Amount(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &FieldError{Field: "amount", Problem: "expected a whole number in the smallest unit."}
	}
	*a = Amount(s)
	return nil
}

// SendData is the data of the send reply as spec 4.2 gives it, and
// whether it was a dry run (D62).
type SendData struct {
	RateLimitRemaining float64     `json:"rate_limit_remaining" jsonschema:"requests this key may still make before it is rate limited (D24)"`
	Currency           string      `json:"currency" jsonschema:"coin symbol"`
	Balance            int64       `json:"balance" jsonschema:"the faucet's balance of the coin after the payout, in smallest units (a dry run: what it would be)"`
	BalanceBitcoin     json.Number `json:"balance_bitcoin" jsonschema:"the same in whole coins"`
	PayoutID           int64       `json:"payout_id,omitempty" jsonschema:"payout identifier; absent from a dry run that would pay, as no payout was made (D62)"`
	PayoutUserHash     string      `json:"payout_user_hash" jsonschema:"the recipient's payout_user_hash"`
	DryRun             bool        `json:"dry_run" jsonschema:"true when nothing was paid: the reply of a dry run (D62)"`
	replayed           bool
}

// Replayed tells whether the send replays the payout its idempotency key
// bound before, paying nothing (D35).
func (d SendData) Replayed() bool { return d.replayed }

// send pays through the v1 pipeline, bound to an idempotency key (D35) and
// under the key's daily USD cap (D36), or judges the send without paying
// it (dry_run, D62).
func (r *runner) send(ctx context.Context, c *payout.Caller, p SendParams) (SendData, string, error) {
	req := payout.SendRequest{To: p.To, Amount: string(p.Amount), Currency: p.Currency, IPAddress: p.IPAddress, Referral: p.Referral}
	if p.DryRun {
		res, replayed, err := r.Payouts.SendDry(ctx, c, p.IdempotencyKey, req)
		if err != nil {
			return SendData{}, "", dryRefusal(err)
		}
		return sendData(res, replayed, true), dryMessage(replayed), nil
	}
	res, replayed, err := r.Payouts.SendIdempotent(ctx, c, p.IdempotencyKey, req)
	if err != nil {
		return SendData{}, "", err
	}
	return sendData(res, replayed, false), "Payout sent.", nil
}

// sendData is the reply data of a send's result; a dry run's payout that
// would be paid has no id, and payout_id is left out (D62).
func sendData(res *payout.SendResult, replayed, dry bool) SendData {
	return SendData{
		RateLimitRemaining: float64(int64(res.RateRemaining)), Currency: res.Currency, Balance: res.Balance,
		BalanceBitcoin: reply.Coins(res.Balance), PayoutID: res.PayoutID, PayoutUserHash: res.PayoutUserHash,
		DryRun: dry, replayed: replayed,
	}
}

// dryMessage is the message of a dry run that would succeed.
func dryMessage(replayed bool) string {
	if replayed {
		return "Dry run: this idempotency_key has paid already; the send would replay that payout. Nothing was done."
	}
	return "Dry run: the payout would be sent. Nothing was paid."
}

// dryRefusal is err, the refusal of a dry run, saying so: the same code
// and status as the send would get, and a message that begins "Dry run:".
func dryRefusal(err error) error {
	var e *drip.Error
	if !errors.As(err, &e) || e.Code.Fault() {
		return err // a fault is said as it is, with its cause for the log
	}
	dry := *e
	dry.Message = "Dry run: " + e.Message
	return &dry
}

// FieldError is a parameter whose JSON value a Params type refused while
// decoding; the interfaces say it as "Invalid <field>: <problem>".
type FieldError struct{ Field, Problem string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

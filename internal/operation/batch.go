package operation

import (
	"context"
	"fmt"
	"net/http"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
)

// SendBatchParams are a batch of v2 sends (D61). No tool sends: this
// operation is v2's alone, as Send is.
type SendBatchParams struct {
	Items  []SendItem `json:"items" jsonschema:"the sends, 1 to 500, each judged and answered on its own, in this order"`
	DryRun bool       `json:"dry_run,omitempty" jsonschema:"true: judge every item as it would be sent, paying nothing, binding no key and recording nothing (D62)"`
}

// SendItem is one send of a batch: the fields of /send.
type SendItem struct {
	IdempotencyKey string `json:"idempotency_key" jsonschema:"one unique key per logical payout, reused on retries: 1 to 255 printable ASCII characters"`
	To             string `json:"to" jsonschema:"recipient: email, username, wallet address or payout_user_hash"`
	Amount         Amount `json:"amount"`
	Currency       string `json:"currency" jsonschema:"coin symbol, upper-case (BTC, DOGE...)"`
	IPAddress      string `json:"ip_address,omitempty" jsonschema:"the claimer's IP address, recommended: it feeds anti-fraud and per-IP limits"`
	Referral       string `json:"referral,omitempty" jsonschema:"a tag kept for the owner's reports"`
}

func (p SendBatchParams) validate() error {
	if len(p.Items) == 0 {
		return drip.Errorf(drip.CodeInvalid, "Missing items: a batch is a list of 1 to %d sends.", payout.MaxBatch)
	}
	if len(p.Items) > payout.MaxBatch {
		return drip.Errorf(drip.CodeInvalid, "Invalid items: %d sends, more than the %d a batch may carry; split it.", len(p.Items), payout.MaxBatch)
	}
	for i, it := range p.Items {
		if err := it.validate(i); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the form of item i, as the schema states it: a batch
// with an item of the wrong form is malformed as a whole, and refused
// before anything is judged (D61). An item of the right form that a send
// would refuse (an inactive coin, an amount below the minimum, a
// recipient who cannot be paid) is refused on its own.
func (it SendItem) validate(i int) error {
	bad := func(field, problem string) error {
		return drip.Errorf(drip.CodeInvalid, "Invalid items[%d].%s: %s", i, field, problem)
	}
	if payout.ValidIdempotencyKey(it.IdempotencyKey) != nil {
		return bad("idempotency_key", "1 to 255 printable ASCII characters, one unique key per logical payout.")
	}
	if it.To == "" {
		return bad("to", "the recipient is required.")
	}
	if len(it.Amount) > 19 || !amountRE.MatchString(string(it.Amount)) {
		return bad("amount", "a positive whole number in the smallest unit is required.")
	}
	if !coinRE.MatchString(it.Currency) {
		return bad("currency", "a coin symbol is required.")
	}
	return nil
}

var (
	coinRE   = regexp.MustCompile(coinPattern)
	amountRE = regexp.MustCompile(amountPattern)
)

func (SendBatchParams) refine(s *jsonschema.Schema) {
	items := s.Properties["items"]
	items.MinItems, items.MaxItems = new(1), new(payout.MaxBatch)
	SendParams{}.refine(items.Items)
}

// SendBatchData is the reply of a batch: each item's outcome in the order
// given, and how many were paid, replayed and not paid.
type SendBatchData struct {
	DryRun             bool        `json:"dry_run" jsonschema:"true when the batch was a dry run: nothing was paid (D62)"`
	Paid               int         `json:"paid" jsonschema:"items paid by this request (a dry run: that would be paid)"`
	Replayed           int         `json:"replayed" jsonschema:"items whose idempotency_key had paid already, answered with that payout and paying nothing"`
	Failed             int         `json:"failed" jsonschema:"items not paid: refused, or answered unavailable or outcome_unknown"`
	RateLimitRemaining float64     `json:"rate_limit_remaining" jsonschema:"requests this key may still make before it is rate limited, after this batch's cost (D24, D61)"`
	Items              []BatchItem `json:"items" jsonschema:"one outcome per item, in the order of the request"`
}

// BatchItem is one item's outcome, with the members of a /send reply's
// envelope (D32): its HTTP status is the status /send would have answered.
type BatchItem struct {
	IdempotencyKey string     `json:"idempotency_key" jsonschema:"the item's idempotency_key, as given"`
	Success        bool       `json:"success" jsonschema:"true when the item was paid or replayed (a dry run: would be)"`
	Status         int        `json:"status" jsonschema:"the HTTP status /send would have answered this item with"`
	Message        string     `json:"message" jsonschema:"what became of the item, for people"`
	Replayed       bool       `json:"replayed" jsonschema:"true when the idempotency_key had paid already (earlier, or by an identical item before this one): nothing was paid now; /send says it with Idempotent-Replayed (D35)"`
	Data           *SendData  `json:"data" jsonschema:"the data of /send's reply when the item succeeded; null otherwise"`
	Error          *ItemError `json:"error" jsonschema:"why the item was not paid; null when it succeeded"`
	err            error
}

// Err is the error that refused the item (or left its outcome unknown),
// nil when it succeeded; the interface fills in Status, Message and Error
// from it as it would answer /send.
func (b *BatchItem) Err() error { return b.err }

// ItemError is an item's error, as a /send reply's error member (D32).
type ItemError struct {
	Code     drip.Code `json:"code" jsonschema:"stable, machine-readable error code, as /send's"`
	V1Status *int      `json:"v1_status" jsonschema:"the v1 status of the same condition, or null"`
}

// sendBatch sends or judges (dry_run) a batch's items (D61, D62). The
// batch costs its key one request per 10 items beside the request itself,
// taken before any item is judged: all of it, or the whole batch is
// refused.
func (r *runner) sendBatch(ctx context.Context, c *payout.Caller, p SendBatchParams) (SendBatchData, string, error) {
	if err := r.Payouts.ChargeBatch(ctx, c, len(p.Items)); err != nil {
		return SendBatchData{}, "", err
	}
	items := make([]payout.BatchItem, len(p.Items))
	for i, it := range p.Items {
		items[i] = payout.BatchItem{IdempotencyKey: it.IdempotencyKey, Request: payout.SendRequest{
			To: it.To, Amount: string(it.Amount), Currency: it.Currency, IPAddress: it.IPAddress, Referral: it.Referral,
		}}
	}
	outcomes := r.Payouts.SendBatch(ctx, c, items, p.DryRun)
	d := SendBatchData{DryRun: p.DryRun, RateLimitRemaining: float64(int64(c.RateRemaining)), Items: make([]BatchItem, len(outcomes))}
	for i, o := range outcomes {
		it := BatchItem{IdempotencyKey: p.Items[i].IdempotencyKey}
		switch {
		case o.Err != nil && p.DryRun:
			it.err = dryRefusal(o.Err)
			d.Failed++
		case o.Err != nil:
			it.err = o.Err
			d.Failed++
		default:
			data := sendData(o.Result, o.Replayed, p.DryRun)
			it.Success, it.Status, it.Replayed, it.Data = true, http.StatusOK, o.Replayed, &data
			it.Message = "Payout sent."
			if p.DryRun {
				it.Message = dryMessage(o.Replayed)
			}
			if o.Replayed {
				d.Replayed++
			} else {
				d.Paid++
			}
		}
		d.Items[i] = it
	}
	if p.DryRun {
		return d, fmt.Sprintf("Dry run of %d items: %d would be paid, %d would replay, %d would not be paid. Nothing was paid.",
			len(outcomes), d.Paid, d.Replayed, d.Failed), nil
	}
	return d, fmt.Sprintf("Batch of %d items: %d paid, %d replayed, %d not paid.", len(outcomes), d.Paid, d.Replayed, d.Failed), nil
}

package client

import (
	"context"
	"net/http"
)

// MaxBatch is the most sends one SendBatch may carry (D61).
const MaxBatch = 500

// BatchResult is the reply of a batch: each item's outcome in the order
// sent, and how many were paid, replayed and not paid.
type BatchResult struct {
	DryRun             bool           `json:"dry_run"`
	Paid               int            `json:"paid"`     // paid by this request (a dry run: would be)
	Replayed           int            `json:"replayed"` // keys that had paid already: nothing paid now
	Failed             int            `json:"failed"`   // not paid: refused, unavailable or outcome_unknown
	RateLimitRemaining float64        `json:"rate_limit_remaining"`
	Items              []BatchOutcome `json:"items"`

	// Attempts is how many requests the batch took.
	Attempts int `json:"-"`
}

// BatchOutcome is what became of one item, with the members of a /send
// reply: Status is the HTTP status /send would have answered it with.
type BatchOutcome struct {
	IdempotencyKey string      `json:"idempotency_key"`
	Success        bool        `json:"success"`
	Status         int         `json:"status"`
	Message        string      `json:"message"`
	Replayed       bool        `json:"replayed"`
	Data           *SendResult `json:"data"`
	Error          *struct {
		Code     string `json:"code"`
		V1Status *int   `json:"v1_status"`
	} `json:"error"`
}

// Err is the item's refusal as an *Error, as Send would have returned it,
// or nil when it succeeded. A 503 unavailable item was not paid, and an
// outcome_unknown one may have been: both are safe to send again with
// the same idempotency key (D35, D58).
func (o *BatchOutcome) Err() error {
	if o.Success {
		return nil
	}
	e := &Error{HTTPStatus: o.Status, Message: o.Message, Path: v2Prefix + "/send/batch"}
	if o.Error != nil {
		e.Code = o.Error.Code
		if o.Error.V1Status != nil {
			e.V1Status = *o.Error.V1Status
		}
	}
	return e
}

// batchItem is a SendRequest as a batch carries it: DryRun belongs to the
// whole batch.
type batchItem struct {
	IdempotencyKey string `json:"idempotency_key"`
	To             string `json:"to"`
	Amount         int64  `json:"amount"`
	Currency       string `json:"currency"`
	IPAddress      string `json:"ip_address,omitempty"`
	Referral       string `json:"referral,omitempty"`
}

// SendBatch sends up to MaxBatch payouts in one request (D61); with
// dryRun, it judges them without paying anything (D62). Each item is
// judged as Send would judge it alone, so the reply is 200 even when
// items are refused: look at each of Items, in the order of items, and
// its Err. An item without an IdempotencyKey is given a fresh one,
// written back into items so the caller can keep it for a retry.
//
// The request is retried as the RetryPolicy says, always with the same
// keys, so a retry pays nothing twice: items paid by an earlier attempt
// are answered as replayed. The error is a *SendError (naming the first
// item's key) when the batch as a whole was not processed.
func (c *Client) SendBatch(ctx context.Context, items []SendRequest, dryRun bool) (*BatchResult, error) {
	wire := struct {
		Items  []batchItem `json:"items"`
		DryRun bool        `json:"dry_run,omitempty"`
	}{Items: make([]batchItem, len(items)), DryRun: dryRun}
	for i := range items {
		r := &items[i]
		if r.IdempotencyKey == "" {
			r.IdempotencyKey = NewIdempotencyKey()
		}
		wire.Items[i] = batchItem{IdempotencyKey: r.IdempotencyKey, To: r.To, Amount: r.Amount, Currency: r.Currency,
			IPAddress: r.IPAddress, Referral: r.Referral}
	}
	body, err := marshal(wire)
	if err != nil {
		return nil, err
	}
	var out BatchResult
	_, attempts, err := c.retry.do(ctx, func() (http.Header, error) {
		out = BatchResult{}
		return c.once(ctx, "/send/batch", body, &out)
	})
	if err != nil {
		first := ""
		if len(items) > 0 {
			first = items[0].IdempotencyKey
		}
		return nil, &SendError{IdempotencyKey: first, Attempts: attempts, Err: err}
	}
	out.Attempts = attempts
	for i := range out.Items {
		if d := out.Items[i].Data; d != nil {
			d.IdempotencyKey, d.Replayed, d.Attempts = out.Items[i].IdempotencyKey, out.Items[i].Replayed, attempts
		}
	}
	return &out, nil
}

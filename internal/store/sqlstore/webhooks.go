package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// Webhook endpoints (issue 12, D53, D54). Events are stored as one
// comma-separated column; every statement names the faucet.

// scanWebhookEndpoint reads one row of WebhookEndpointColumns.
func scanWebhookEndpoint(scan func(dest ...any) error) (*store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	var events string
	var created, updated int64
	if err := scan(&e.ID, &e.FaucetID, &e.URL, &events, &e.SecretSealed, &e.Enabled, &e.DisabledReason, &created, &updated); err != nil {
		return nil, err
	}
	if events != "" {
		e.Events = strings.Split(events, ",")
	}
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}

func (q *querier) WebhookEndpointCreate(ctx context.Context, e *store.WebhookEndpoint) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.WebhookEndpointCreate, []any{e.FaucetID, e.URL, strings.Join(e.Events, ","), e.SecretSealed,
		e.Enabled, e.DisabledReason, micros(e.CreatedAt), micros(e.UpdatedAt)}, &id)
	return id, err
}

func (q *querier) WebhookEndpointList(ctx context.Context, faucetID int64) ([]store.WebhookEndpoint, error) {
	var out []store.WebhookEndpoint
	err := q.list(ctx, q.q.WebhookEndpointList, []any{faucetID}, func(r Rows) error {
		e, err := scanWebhookEndpoint(r.Scan)
		if err == nil {
			out = append(out, *e)
		}
		return err
	})
	return out, err
}

func (q *querier) WebhookEndpointGet(ctx context.Context, faucetID, id int64) (*store.WebhookEndpoint, error) {
	return scanWebhookEndpoint(func(dest ...any) error {
		return q.scanRow(ctx, q.q.WebhookEndpointGet, []any{faucetID, id}, dest...)
	})
}

func (q *querier) WebhookEndpointCount(ctx context.Context, faucetID int64) (int, error) {
	var n int
	err := q.scanRow(ctx, q.q.WebhookEndpointCount, []any{faucetID}, &n)
	return n, err
}

func (q *querier) WebhookEndpointSetSecret(ctx context.Context, faucetID, id int64, sealed string, at time.Time) error {
	return q.execOne(ctx, q.q.WebhookEndpointSetSecret, faucetID, id, sealed, micros(at))
}

func (q *querier) WebhookEndpointSetEnabled(ctx context.Context, e *store.WebhookEndpoint) error {
	return q.execOne(ctx, q.q.WebhookEndpointSetEnabled, e.FaucetID, e.ID, e.Enabled, e.DisabledReason, micros(e.UpdatedAt))
}

func (q *querier) WebhookEndpointDelete(ctx context.Context, faucetID, id int64) error {
	return q.execOne(ctx, q.q.WebhookEndpointDelete, faucetID, id)
}

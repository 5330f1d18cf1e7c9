package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// Webhook endpoints (issue 12, D53, D54). Events are stored as one
// comma-separated column; every statement names the faucet.

// scanWebhookEndpoint reads one row of WebhookEndpointColumns.
func scanWebhookEndpoint(scan func(dest ...any) error) (*store.WebhookEndpoint, error) {
	var e store.WebhookEndpoint
	var events string
	var created, updated int64
	var failing *int64
	if err := scan(&e.ID, &e.FaucetID, &e.URL, &events, &e.SecretSealed, &e.Enabled, &e.DisabledReason, &created, &updated, &failing); err != nil {
		return nil, err
	}
	if failing != nil {
		e.FailingSince = fromMicros(*failing)
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
	if err := q.execOne(ctx, q.q.WebhookEndpointSetEnabled, e.FaucetID, e.ID, e.Enabled, e.DisabledReason, micros(e.UpdatedAt)); err != nil {
		return err
	}
	_, err := q.exec(ctx, q.q.WebhookEndpointParkDeliveries, e.FaucetID, e.ID, e.Enabled, micros(e.UpdatedAt))
	return err
}

func (q *querier) WebhookEndpointDelete(ctx context.Context, faucetID, id int64) error {
	if _, err := q.exec(ctx, q.q.WebhookEndpointDeleteAttempts, faucetID, id); err != nil {
		return err
	}
	if _, err := q.exec(ctx, q.q.WebhookEndpointDeleteDeliveries, faucetID, id); err != nil {
		return err
	}
	return q.execOne(ctx, q.q.WebhookEndpointDelete, faucetID, id)
}

func (q *querier) WebhookEndpointsHealth(ctx context.Context, succeeded, failed []int64, at, disableBefore time.Time) ([]store.WebhookEndpoint, error) {
	if len(succeeded) > 0 {
		if err := q.execJSON(ctx, q.q.WebhookEndpointsHealthy, ids(succeeded), nil); err != nil {
			return nil, err
		}
	}
	if len(failed) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(ids(failed))
	if err != nil {
		return nil, err
	}
	var out []store.WebhookEndpoint
	err = q.list(ctx, q.q.WebhookEndpointsFailing, []any{string(body), micros(at)}, func(r Rows) error {
		e, err := scanWebhookEndpoint(r.Scan)
		if err == nil && e.Enabled && !e.FailingSince.After(disableBefore) {
			out = append(out, *e)
		}
		return err
	})
	return out, err
}

// ids is a set of ids in ascending order, as the JSON array parameters of
// the statements that change several rows take them (one order, so two
// transactions cannot deadlock on them).
func ids(in []int64) []int64 {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// Webhook deliveries (issue 12, D50, D52).

// scanWebhookDelivery reads one row of WebhookDeliveryColumns, then more.
func scanWebhookDelivery(scan func(dest ...any) error, more ...any) (*store.WebhookDelivery, error) {
	d := store.WebhookDelivery{Delivery: store.Delivery{Kind: store.DeliveryWebhook}}
	var next, created int64
	var done *int64
	dest := append([]any{&d.ID, &d.EndpointID, &d.FaucetID, &d.EventID, &d.State, &d.Attempts, &d.Tries, &next,
		&d.LastStatus, &d.LastError, &created, &done, &d.EventType}, more...)
	if err := scan(dest...); err != nil {
		return nil, err
	}
	d.NextAttemptAt, d.CreatedAt = fromMicros(next), fromMicros(created)
	if done != nil {
		d.DoneAt = fromMicros(*done)
	}
	return &d, nil
}

func (q *querier) WebhookDeliveryList(ctx context.Context, p *store.WebhookDeliveryListParams) ([]store.WebhookDelivery, error) {
	var out []store.WebhookDelivery
	err := q.list(ctx, q.q.WebhookDeliveryList, []any{p.FaucetID, p.EndpointID, p.State, p.BeforeID, p.Limit}, func(r Rows) error {
		d, err := scanWebhookDelivery(r.Scan)
		if err == nil {
			out = append(out, *d)
		}
		return err
	})
	return out, err
}

func (q *querier) WebhookDeliveryGet(ctx context.Context, faucetID, id int64) (*store.WebhookDelivery, error) {
	return scanWebhookDelivery(func(dest ...any) error {
		return q.scanRow(ctx, q.q.WebhookDeliveryGet, []any{faucetID, id}, dest...)
	})
}

func (q *querier) OutboxAttemptList(ctx context.Context, deliveryID int64) ([]store.OutboxAttempt, error) {
	var out []store.OutboxAttempt
	err := q.list(ctx, q.q.OutboxAttemptList, []any{deliveryID}, func(r Rows) error {
		var a store.OutboxAttempt
		var at, latency int64
		err := r.Scan(&a.DeliveryID, &a.N, &at, &a.Status, &latency, &a.Error, &a.Reply)
		a.At, a.Latency = fromMicros(at), time.Duration(latency)*time.Microsecond
		out = append(out, a)
		return err
	})
	return out, err
}

func (q *querier) WebhookDeliveryCount(ctx context.Context, endpointID int64) (map[string]int64, error) {
	out := map[string]int64{}
	err := q.list(ctx, q.q.WebhookDeliveryCount, []any{endpointID}, func(r Rows) error {
		var state string
		var n int64
		err := r.Scan(&state, &n)
		out[state] = n
		return err
	})
	return out, err
}

func (q *querier) OutboxBacklog(ctx context.Context, kind string) (int64, time.Time, error) {
	var pending int64
	var oldest *int64
	if err := q.scanRow(ctx, q.q.OutboxBacklog, []any{kind}, &pending, &oldest); err != nil || oldest == nil {
		return pending, time.Time{}, err
	}
	return pending, fromMicros(*oldest), nil
}

func (q *querier) WebhookDeliveryClaim(ctx context.Context, now, until time.Time, limit int) ([]store.WebhookDelivery, error) {
	body, err := q.claim(ctx, store.DeliveryWebhook, now, until, limit)
	if err != nil || body == "" {
		return nil, err
	}
	var out []store.WebhookDelivery
	err = q.list(ctx, q.q.WebhookDeliveryClaimed, []any{body}, func(r Rows) error {
		var url, sealed, data string
		var faucetID, evCreated int64
		d, err := scanWebhookDelivery(r.Scan, &url, &sealed, &faucetID, &data, &evCreated)
		if err != nil {
			return err
		}
		d.URL, d.SecretSealed = url, sealed
		d.Event = drip.Event{ID: d.EventID, FaucetID: faucetID, Type: d.EventType, Data: []byte(data), CreatedAt: fromMicros(evCreated)}
		out = append(out, *d)
		return nil
	})
	return out, err
}

// The rows of the attempt-recording statements, as their JSON array
// parameters carry them.
type (
	attemptRow struct {
		DeliveryID int64  `json:"delivery_id"`
		N          int    `json:"n"`
		At         int64  `json:"at"`
		Status     int    `json:"status"`
		LatencyUS  int64  `json:"latency_us"`
		Error      string `json:"error"`
		Reply      string `json:"reply"`
	}
	deliveryRow struct {
		ID            int64  `json:"id"`
		State         string `json:"state"`
		Attempts      int    `json:"attempts"`
		Tries         int    `json:"tries"`
		NextAttemptAt int64  `json:"next_attempt_at"`
		LastStatus    int    `json:"last_status"`
		LastError     string `json:"last_error"`
		DoneAt        *int64 `json:"done_at"`
	}
)

func (q *querier) OutboxRecordAttempts(ctx context.Context, records []store.OutboxRecord) error {
	if len(records) == 0 {
		return nil
	}
	attempts := make([]attemptRow, len(records))
	deliveries := make([]deliveryRow, len(records))
	for i, r := range records {
		a, d := &r.Attempt, r.Delivery
		attempts[i] = attemptRow{a.DeliveryID, a.N, micros(a.At), a.Status, a.Latency.Microseconds(), a.Error, a.Reply}
		row := deliveryRow{d.ID, d.State, d.Attempts, d.Tries, micros(d.NextAttemptAt), d.LastStatus, d.LastError, nil}
		if !d.DoneAt.IsZero() {
			done := micros(d.DoneAt)
			row.DoneAt = &done
		}
		deliveries[i] = row
	}
	// One order for the rows every recording transaction updates.
	slices.SortFunc(deliveries, func(a, b deliveryRow) int { return cmp.Compare(a.ID, b.ID) })
	if err := q.execJSON(ctx, q.q.OutboxAttemptsInsertJSON, attempts, nil); err != nil {
		return err
	}
	return q.execJSON(ctx, q.q.OutboxRecordJSON, deliveries, nil)
}

func (q *querier) OutboxRelease(ctx context.Context, claimed []store.Delivery, at time.Time) error {
	type row struct {
		ID    int64 `json:"id"`
		Tries int   `json:"tries"`
	}
	rows := make([]row, len(claimed))
	for i, d := range claimed {
		rows[i] = row{d.ID, d.Tries}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	return q.execJSON(ctx, q.q.OutboxReleaseJSON, rows, micros(at))
}

func (q *querier) WebhookDeliveryInsert(ctx context.Context, faucetID, endpointID int64, eventID string, at time.Time) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.WebhookDeliveryInsert, []any{faucetID, endpointID, eventID, micros(at)}, &id)
	return id, err
}

func (q *querier) WebhookDeliveriesResend(ctx context.Context, p *store.WebhookResendParams, at time.Time) (int64, error) {
	return q.exec(ctx, q.q.WebhookDeliveriesResend, p.FaucetID, p.ID, p.EndpointID, micros(p.From), micros(p.To), micros(at))
}

// claim leases up to limit due rows of kind and returns their ids as the
// JSON array the statements that load them take; "" when none is due.
func (q *querier) claim(ctx context.Context, kind string, now, until time.Time, limit int) (string, error) {
	var claimed []int64
	err := q.list(ctx, q.q.OutboxClaim, []any{micros(now), micros(until), limit, kind}, func(r Rows) error {
		var id int64
		err := r.Scan(&id)
		claimed = append(claimed, id)
		return err
	})
	if err != nil || len(claimed) == 0 {
		return "", err
	}
	body, err := json.Marshal(claimed)
	return string(body), err
}

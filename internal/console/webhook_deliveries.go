package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/webhook"
)

// An endpoint's deliveries (D50, D52): newest first, a page at a time;
// one delivery with every attempt made of it; and what the owner may do
// about them, behind D54's gate like every change (webhooks.go): resend
// one, or every failed one of a time range.

// deliveriesPageSize is how many deliveries a page shows.
const deliveriesPageSize = 25

// rangeLayout is how a datetime-local field sends a time (UTC here); a
// browser adds seconds when the value has them.
const (
	rangeLayout        = "2006-01-02T15:04"
	rangeLayoutSeconds = "2006-01-02T15:04:05"
)

// deliveriesData is the data of an endpoint's deliveries page.
type deliveriesData struct {
	Endpoint   endpointRow
	Deliveries []webhook.Delivery
	State      string   // the state shown, "" for all
	States     []string // the states to filter by
	Older      string   // the link to the next, older page; "" on the last
	First      bool     // the page starts at the newest delivery
	TOTP       bool
	Recent     bool
}

// deliveriesPage shows the endpoint's deliveries, newest first
// (?before=<delivery id> starts after that one; ?state= filters).
func (h *Handler) deliveriesPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	p := &page{}
	if q := r.URL.Query(); q.Get("done") == "webhook-resent-failed" {
		// Not one of flashes: its notice has a count, a number read
		// back, never text the URL carries.
		if n, err := strconv.ParseUint(q.Get("count"), 10, 31); err == nil {
			p.Flash = fmt.Sprintf("The failed deliveries of that time range are queued again: %d.", n)
		}
	}
	h.showDeliveries(w, r, sess, f, http.StatusOK, p)
}

// showDeliveries renders the deliveries page with p's errors and the
// resend form's values.
func (h *Handler) showDeliveries(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page) {
	ctx := r.Context()
	e, err := h.faucetEndpoint(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	switch state {
	case store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed:
	default:
		state = "" // only ever a link this page made
	}
	// A cursor that is not a positive id starts at the newest: it is only
	// ever a link this page made.
	before, err := strconv.ParseInt(q.Get("before"), 10, 64)
	if err != nil || before < 0 {
		before = 0
	}
	list, err := h.d.Webhooks.Deliveries(ctx, f.ID, e.ID, state, before, deliveriesPageSize+1)
	var counts map[string]int64
	if err == nil {
		counts, err = h.d.Store.WebhookDeliveryCount(ctx, e.ID)
	}
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &deliveriesData{
		Endpoint: endpointRow{Endpoint: *e, State: endpointState(e),
			Counts: deliveryCounts{Pending: counts[store.DeliveryPending], Delivered: counts[store.DeliveryDelivered], Failed: counts[store.DeliveryFailed]}},
		State: state, States: []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed},
		First: before == 0, TOTP: sess.User.TOTPEnabled, Recent: h.acc.RecentlyVerified(sess),
	}
	if len(list) > deliveriesPageSize {
		list = list[:deliveriesPageSize]
		older := url.Values{"before": {strconv.FormatInt(list[len(list)-1].ID, 10)}}
		if state != "" {
			older.Set("state", state)
		}
		d.Older = endpointPath(f, e.ID) + "?" + older.Encode()
	}
	d.Deliveries = list
	if p.Form == nil || p.Form["from"] == "" && p.Form["to"] == "" {
		// The last day, to the minute after now: the range is [from, to).
		now := h.d.Now().UTC().Truncate(time.Minute)
		p.Form = map[string]string{"from": now.Add(-24 * time.Hour).Format(rangeLayout), "to": now.Add(time.Minute).Format(rangeLayout)}
	}
	p.Wide = true
	h.showFaucet(w, r, sess, f, view{"webhooks", "manage_webhook_deliveries", "Webhook deliveries"}, status, p, d, "", nil)
}

// deliveryData is the data of one delivery's page.
type deliveryData struct {
	Endpoint webhook.Endpoint
	Delivery *webhook.Delivery
	Attempts []attemptRow
	TOTP     bool
	Recent   bool
}

// attemptRow is one attempt as the page shows it.
type attemptRow struct {
	webhook.Attempt
	Took       string // the latency, in ms below a second
	StatusText string // the reason phrase of Status, "" for none
	Why        string // the error, unless it only restates the status beside it
}

func newAttemptRow(a webhook.Attempt) attemptRow {
	row := attemptRow{Attempt: a, StatusText: http.StatusText(a.Status), Why: a.Error}
	if a.Status != 0 && a.Error == fmt.Sprintf("HTTP %d: %s", a.Status, row.StatusText) {
		row.Why = ""
	}
	if a.Latency < time.Second {
		row.Took = strconv.FormatInt(a.Latency.Milliseconds(), 10) + " ms"
	} else {
		row.Took = strconv.FormatFloat(a.Latency.Seconds(), 'f', 1, 64) + " s"
	}
	return row
}

// faucetDelivery is the delivery of the path's {d} with its attempts, when
// it is to the faucet's endpoint of the path's {ep}.
func (h *Handler) faucetDelivery(r *http.Request, f *drip.Faucet) (*webhook.Endpoint, *webhook.Delivery, []webhook.Attempt, error) {
	e, err := h.faucetEndpoint(r, f)
	if err != nil {
		return nil, nil, nil, err
	}
	id, err := strconv.ParseInt(r.PathValue("d"), 10, 64)
	if err != nil || id <= 0 {
		return nil, nil, nil, drip.Errorf(drip.CodeNotFound, "This faucet has no such webhook delivery.")
	}
	d, attempts, err := h.d.Webhooks.Delivery(r.Context(), f.ID, id)
	if err == nil && d.EndpointID != e.ID {
		err = drip.Errorf(drip.CodeNotFound, "This endpoint has no such webhook delivery.")
	}
	return e, d, attempts, err
}

// deliveryPage shows one delivery with every attempt made of it: when,
// the HTTP status, how long it took, the error and the first 1 KB of the
// reply, which the template escapes as it escapes everything.
func (h *Handler) deliveryPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showDelivery(w, r, sess, f, http.StatusOK, &page{})
}

// showDelivery renders one delivery's page with p's error.
func (h *Handler) showDelivery(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page) {
	e, d, attempts, err := h.faucetDelivery(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	data := &deliveryData{Endpoint: *e, Delivery: d, TOTP: sess.User.TOTPEnabled, Recent: h.acc.RecentlyVerified(sess)}
	for _, a := range attempts {
		data.Attempts = append(data.Attempts, newAttemptRow(a))
	}
	p.Wide = true
	h.showFaucet(w, r, sess, f, view{"webhooks", "manage_webhook_delivery", "Webhook delivery"}, status, p, data, "", nil)
}

// resendDelivery starts a delivered or failed delivery's schedule again
// (D52), and shows it.
func (h *Handler) resendDelivery(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	back := func(f *drip.Faucet) string {
		return webhooksPath(f) + "/" + r.PathValue("ep") + "/deliveries/" + r.PathValue("d")
	}
	f, ok := h.webhookFaucet(w, r, sess, back)
	if !ok {
		return
	}
	e, d, _, err := h.faucetDelivery(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	err = h.d.Webhooks.Resend(r.Context(), f.ID, d.ID)
	h.recordChange(r, sess, f, "resend_webhook_delivery",
		map[string]any{"endpoint": e.ID, "delivery": d.ID, "event": d.EventID}, flashes["webhook-resent"], err)
	if err != nil {
		p := &page{}
		h.showDelivery(w, r, sess, f, h.failure(r, p, err), p)
		return
	}
	redirect(w, r, back(f)+"?done=webhook-resent")
}

// parseRange reads the resend form's from and to (UTC), with what is
// wrong by field. The service checks the range itself.
func parseRange(r *http.Request) (from, to time.Time, bad map[string]string) {
	bad = map[string]string{}
	read := func(field, name string) time.Time {
		s := strings.TrimSpace(r.PostFormValue(field))
		for _, layout := range []string{rangeLayout, rangeLayoutSeconds} {
			if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
				return t
			}
		}
		bad[field] = fmt.Sprintf("Invalid %s: a date and time (UTC) such as 2026-03-14T15:00.", name)
		return time.Time{}
	}
	return read("from", "start"), read("to", "end"), bad
}

// resendFailed starts again the schedule of every failed delivery to the
// endpoint whose event happened in the form's time range.
func (h *Handler) resendFailed(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	back := func(f *drip.Faucet) string { return webhooksPath(f) + "/" + r.PathValue("ep") }
	f, ok := h.webhookFaucet(w, r, sess, back)
	if !ok {
		return
	}
	e, err := h.faucetEndpoint(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	from, to, bad := parseRange(r)
	form := map[string]string{"from": r.PostFormValue("from"), "to": r.PostFormValue("to")}
	if len(bad) > 0 {
		h.showDeliveries(w, r, sess, f, http.StatusUnprocessableEntity, &page{Fields: bad, Form: form})
		return
	}
	n, err := h.d.Webhooks.ResendFailed(r.Context(), f.ID, e.ID, from, to)
	h.recordChange(r, sess, f, "resend_failed_webhook_deliveries",
		map[string]any{"endpoint": e.ID, "from": from.Format(time.RFC3339), "to": to.Format(time.RFC3339)},
		fmt.Sprintf("%d failed deliveries queued again.", n), err)
	if err != nil {
		p := &page{Form: form}
		h.showDeliveries(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	redirect(w, r, back(f)+"?done=webhook-resent-failed&count="+strconv.FormatInt(n, 10))
}

package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/webhook"
)

// A faucet's webhooks page (issue 12): its endpoints (D53, D54), each
// with its deliveries and their attempts (webhook_deliveries.go, D50,
// D52). The page calls internal/webhook, which holds every rule (the URL
// checks of D53, at most MaxEndpoints, the events); this file adds what
// belongs to the web: D54's gate, where an error is shown, the secret
// shown once, and the audit entries.
//
// D54: an endpoint is registered, and changed in any way, only from these
// pages, by a user with two-factor authentication on whose session passed
// it within the last 15 minutes: a signing secret lets its holder forge
// the faucet's events, and an endpoint receives every payout's details.
// Viewing the list and the deliveries asks only for the owner's session,
// as the API keys page does: nothing on them is secret (a signing secret
// is shown once, and kept only sealed), and asking for a code at every
// look would teach owners to type codes without reading why.

func (h *Handler) webhooksRoutes(mux *http.ServeMux) {
	mux.Handle("GET /manage/{id}/webhooks", h.auth(h.webhooksPage))
	mux.Handle("POST /manage/{id}/webhooks", h.auth(h.addEndpoint))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/rotate", h.auth(h.rotateEndpointSecret))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/disable", h.auth(h.setEndpointEnabled(false)))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/enable", h.auth(h.setEndpointEnabled(true)))
	mux.Handle("GET /manage/{id}/webhooks/{ep}/delete", h.auth(h.deleteEndpointPage))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/delete", h.auth(h.deleteEndpoint))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/test", h.auth(h.testEndpoint))
	mux.Handle("GET /manage/{id}/webhooks/{ep}", h.auth(h.deliveriesPage))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/resend-failed", h.auth(h.resendFailed))
	mux.Handle("GET /manage/{id}/webhooks/{ep}/deliveries/{d}", h.auth(h.deliveryPage))
	mux.Handle("POST /manage/{id}/webhooks/{ep}/deliveries/{d}/resend", h.auth(h.resendDelivery))
}

func webhooksPath(f *drip.Faucet) string {
	return "/manage/" + strconv.FormatInt(f.ID, 10) + "/webhooks"
}

func endpointPath(f *drip.Faucet, endpointID int64) string {
	return webhooksPath(f) + "/" + strconv.FormatInt(endpointID, 10)
}

// errNeed2FA refuses a change to a user without two-factor
// authentication (D54); the page says how to turn it on.
var errNeed2FA = drip.Errorf(drip.CodeForbidden, "Webhooks need two-factor authentication: turn it on under Account security, then come back.")

// webhookFaucet is the owned faucet of a change on its webhooks pages,
// when D54 allows it: a user without two-factor authentication gets the
// page that explains it (403), and a session that did not pass it within
// 15 minutes is sent to enter a code, then back to back (a path under
// the faucet's webhooks).
func (h *Handler) webhookFaucet(w http.ResponseWriter, r *http.Request, sess *account.Session, back func(*drip.Faucet) string) (*drip.Faucet, bool) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return nil, false
	}
	if !sess.User.TOTPEnabled {
		p := &page{}
		h.showWebhooks(w, r, sess, f, h.failure(r, p, errNeed2FA), p)
		return nil, false
	}
	// With the second factor on, the session's last verification was a
	// code (a login, a confirmation, or turning the factor on), with one
	// exception account.Session cannot tell: a session that logged in
	// with the password alone before the factor was turned on from
	// another session, for the rest of its 15 minutes.
	if !h.acc.RecentlyVerified(sess) {
		h.reverify(w, r, back(f))
		return nil, false
	}
	return f, true
}

// toList is the way back to the list after confirming it is you.
func toList(f *drip.Faucet) string { return webhooksPath(f) }

// faucetEndpoint is the faucet's endpoint of the path's {ep}: another
// faucet's is as unknown as none.
func (h *Handler) faucetEndpoint(r *http.Request, f *drip.Faucet) (*webhook.Endpoint, error) {
	id, err := strconv.ParseInt(r.PathValue("ep"), 10, 64)
	if err != nil || id <= 0 {
		return nil, drip.Errorf(drip.CodeNotFound, "There is no such webhook endpoint among this faucet's.")
	}
	return h.d.Webhooks.Get(r.Context(), f.ID, id)
}

// webhookFields tells which field an error of the webhook service is
// about, by the start of its message.
var webhookFields = []fieldPrefix{
	{webhook.URLName, "url"},
	{"Choose at least one event", "event"},
	{"Unknown event", "event"},
	{"Event ", "event"},
	{"The time range", "to"},
}

// webhookFailure puts err on p, next to its field when it is about one,
// and returns the page's status.
func (h *Handler) webhookFailure(r *http.Request, p *page, err error) int {
	status := h.failure(r, p, err)
	toField(p, webhookFields)
	return status
}

// webhooksData is the data of the webhooks page.
type webhooksData struct {
	TOTP      bool // two-factor authentication is on: the forms are shown (D54)
	Recent    bool // a change needs no code first
	Endpoints []endpointRow
	Events    []choice // the add form's checkboxes
	Full      bool     // the faucet has MaxEndpoints
	Max       int
}

// endpointRow is one endpoint as the list shows it.
type endpointRow struct {
	webhook.Endpoint
	State  string // what the badge says
	Counts deliveryCounts
}

// deliveryCounts are an endpoint's deliveries in each state.
type deliveryCounts struct{ Pending, Delivered, Failed int64 }

// eventLabels say what each event is, for the add form.
var eventLabels = map[string]string{
	drip.EventPayoutSent:   "a payout completed",
	drip.EventPayoutFailed: "a payout failed",
	drip.EventLowBalance:   "a payout took a balance below its low-balance alert's threshold",
}

// endpointState is an endpoint's state in words, with why it is off.
func endpointState(e *webhook.Endpoint) string {
	switch {
	case e.Enabled:
		return "enabled"
	case e.DisabledReason == webhook.DisabledFailing:
		return "disabled after failing every attempt for 3 days"
	default:
		return "disabled by you"
	}
}

func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showWebhooks(w, r, sess, f, http.StatusOK, &page{})
}

// showWebhooks renders the webhooks page with p's errors and form; the
// events ticked are the form's sent back, or both payout events on a
// fresh form.
func (h *Handler) showWebhooks(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page) {
	ctx := r.Context()
	list, err := h.d.Webhooks.List(ctx, f.ID)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &webhooksData{TOTP: sess.User.TOTPEnabled, Recent: h.acc.RecentlyVerified(sess), Full: len(list) >= webhook.MaxEndpoints, Max: webhook.MaxEndpoints}
	for _, e := range list {
		// The endpoint is the faucet's (List), so its counts are too.
		n, err := h.d.Store.WebhookDeliveryCount(ctx, e.ID)
		if err != nil {
			h.problem(w, r, sess, err)
			return
		}
		d.Endpoints = append(d.Endpoints, endpointRow{Endpoint: e, State: endpointState(&e),
			Counts: deliveryCounts{Pending: n[store.DeliveryPending], Delivered: n[store.DeliveryDelivered], Failed: n[store.DeliveryFailed]}})
	}
	ticked := []string{drip.EventPayoutSent, drip.EventPayoutFailed}
	if r.Method == http.MethodPost {
		ticked = r.PostForm["event"]
	}
	for _, ev := range webhook.Events {
		d.Events = append(d.Events, choice{Value: ev, Label: eventLabels[ev], Checked: slices.Contains(ticked, ev)})
	}
	p.Wide = true
	h.showFaucet(w, r, sess, f, view{"webhooks", "manage_webhooks", "Webhooks"}, status, p, d, "", nil)
}

// secretShown is the data of the page that shows a signing secret, the
// one time it is shown.
type secretShown struct {
	Endpoint webhook.Endpoint
	Secret   string
	Rotated  bool // a new secret of an endpoint, not a new endpoint
}

// showSecret renders a signing secret this once (D54): the page is not
// cached (render's no-store), and the secret is in no log, no audit entry
// and no redirect.
func (h *Handler) showSecret(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, d secretShown) {
	title := "Your webhook signing secret"
	if d.Rotated {
		title = "Your new webhook signing secret"
	}
	h.showFaucet(w, r, sess, f, view{"webhooks", "manage_webhook_secret", title}, http.StatusOK, &page{Wide: true}, d, "", nil)
}

// endpointArgs is what the audit log keeps of a change to an endpoint:
// which one, never its secret.
func endpointArgs(e *webhook.Endpoint) map[string]any {
	return map[string]any{"endpoint": e.ID, "url": e.URL}
}

// addEndpoint registers an endpoint and shows its signing secret.
func (h *Handler) addEndpoint(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.webhookFaucet(w, r, sess, toList)
	if !ok {
		return
	}
	_ = r.ParseForm() // a body it cannot read leaves the form empty: no URL, said next to its field
	url := strings.TrimSpace(r.PostFormValue("url"))
	events := r.PostForm["event"]
	args := map[string]any{"url": url, "events": nonNil(events)}
	e, secret, err := h.d.Webhooks.Create(r.Context(), f.ID, url, events)
	if err != nil {
		h.recordChange(r, sess, f, "create_webhook_endpoint", args, "", err)
		p := &page{Form: map[string]string{"url": url}}
		h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	args["events"] = e.Events
	h.recordChange(r, sess, f, "create_webhook_endpoint", args,
		fmt.Sprintf("Endpoint %d created, receiving %s.", e.ID, strings.Join(e.Events, ", ")), nil)
	h.showSecret(w, r, sess, f, secretShown{Endpoint: *e, Secret: secret})
}

// rotateEndpointSecret gives an endpoint a new signing secret and shows
// it; the old one signs nothing more.
func (h *Handler) rotateEndpointSecret(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.webhookFaucet(w, r, sess, toList)
	if !ok {
		return
	}
	e, err := h.faucetEndpoint(r, f)
	var secret string
	if err == nil {
		secret, err = h.d.Webhooks.RotateSecret(r.Context(), f.ID, e.ID)
		h.recordChange(r, sess, f, "rotate_webhook_secret", endpointArgs(e), "The endpoint has a new signing secret; the old one signs nothing more.", err)
	}
	if err != nil {
		p := &page{}
		h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	h.showSecret(w, r, sess, f, secretShown{Endpoint: *e, Secret: secret, Rotated: true})
}

// setEndpointEnabled enables or disables an endpoint. A disabled one
// receives nothing: no delivery is queued for it, and those still
// pending wait until it is enabled again.
func (h *Handler) setEndpointEnabled(enabled bool) func(http.ResponseWriter, *http.Request, *account.Session) {
	action, reason, notice := "disable_webhook_endpoint", webhook.DisabledByOwner, "webhook-disabled"
	if enabled {
		action, reason, notice = "enable_webhook_endpoint", "", "webhook-enabled"
	}
	return func(w http.ResponseWriter, r *http.Request, sess *account.Session) {
		f, ok := h.webhookFaucet(w, r, sess, toList)
		if !ok {
			return
		}
		e, err := h.faucetEndpoint(r, f)
		if err == nil {
			err = h.d.Webhooks.SetEnabled(r.Context(), f.ID, e.ID, enabled, reason)
			h.recordChange(r, sess, f, action, endpointArgs(e), flashes[notice], err)
		}
		if err != nil {
			p := &page{}
			h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
			return
		}
		redirect(w, r, webhooksPath(f)+"?done="+notice)
	}
}

// deleteEndpointPage asks to confirm a deletion: a form with one button,
// so that no script is needed. It is behind D54's gate too, so the code
// is asked before the question, and the answer goes straight through.
func (h *Handler) deleteEndpointPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.webhookFaucet(w, r, sess, func(f *drip.Faucet) string { return webhooksPath(f) + "/" + r.PathValue("ep") + "/delete" })
	if !ok {
		return
	}
	e, err := h.faucetEndpoint(r, f)
	if err != nil {
		p := &page{}
		h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	h.showFaucet(w, r, sess, f, view{"webhooks", "manage_webhook_delete", "Delete a webhook endpoint"}, http.StatusOK, &page{}, e, "", nil)
}

// deleteEndpoint deletes an endpoint with its deliveries.
func (h *Handler) deleteEndpoint(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.webhookFaucet(w, r, sess, toList)
	if !ok {
		return
	}
	e, err := h.faucetEndpoint(r, f)
	if err == nil {
		err = h.d.Webhooks.Delete(r.Context(), f.ID, e.ID)
		h.recordChange(r, sess, f, "delete_webhook_endpoint", endpointArgs(e), "The endpoint is deleted.", err)
	}
	if err != nil {
		p := &page{}
		h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	redirect(w, r, webhooksPath(f)+"?done=webhook-deleted")
}

// testEndpoint sends a webhook.test event to one endpoint, and shows its
// deliveries, where the test's comes first.
func (h *Handler) testEndpoint(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.webhookFaucet(w, r, sess, toList)
	if !ok {
		return
	}
	e, err := h.faucetEndpoint(r, f)
	if err == nil {
		var id int64
		id, err = h.d.Webhooks.SendTest(r.Context(), f.ID, e.ID)
		h.recordChange(r, sess, f, "send_webhook_test", endpointArgs(e), fmt.Sprintf("Test delivery %d queued.", id), err)
	}
	if err != nil {
		p := &page{}
		h.showWebhooks(w, r, sess, f, h.webhookFailure(r, p, err), p)
		return
	}
	redirect(w, r, endpointPath(f, e.ID)+"?done=webhook-test")
}

package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
)

// auditPageSize is how many entries a page of the audit log shows.
const auditPageSize = 50

// auditLog is the data of the audit log page.
type auditLog struct {
	Tabs    faucetTabs
	Entries []auditRow
	Older   string // the link to the next, older page; "" on the last
	First   bool   // the page starts at the newest entry
}

// auditRow is one entry as the page shows it.
type auditRow struct {
	drip.AuditEntry
	Console bool   // made on the console by a user, not by a key through the tool server
	Args    string // the arguments as compact JSON
}

// auditPage shows the faucet's audit log, newest first, a page at a time
// (?before=<entry id> starts after that entry): the tool server's manage
// calls, by key, and the changes made on the console, by user.
func (h *Handler) auditPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	// A cursor that is not a positive id starts at the newest entry: it
	// is only ever a link this page made.
	before, err := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	if err != nil || before < 0 {
		before = 0
	}
	list, err := h.d.Audit.Page(r.Context(), f.ID, auditPageSize+1, before)
	if err != nil {
		p := &page{Title: "Error", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	d := &auditLog{Tabs: faucetTabs{Faucet: f, Current: "audit"}, First: before == 0}
	if len(list) > auditPageSize {
		list = list[:auditPageSize]
		d.Older = "/manage/" + strconv.FormatInt(f.ID, 10) + "/audit?before=" + strconv.FormatInt(list[len(list)-1].ID, 10)
	}
	for _, e := range list {
		d.Entries = append(d.Entries, auditRow{AuditEntry: e, Console: e.KeyID == 0, Args: compactJSON(e.Arguments)})
	}
	h.render(w, r, http.StatusOK, "audit", &page{Title: "Audit log", User: sess.User, Wide: true, Data: d}, nil)
}

// compactJSON is raw JSON without spaces, or the text as it is when it is
// not JSON.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

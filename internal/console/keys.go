package console

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
)

// keysRoutes serves a faucet's API keys page (the v1 key, D13, and the v2
// keys, D14) and its audit log (auditlog.go).
func (h *Handler) keysRoutes(mux *http.ServeMux) {
	mux.Handle("GET /manage/{id}/keys", h.auth(h.keysPage))
	mux.Handle("POST /manage/{id}/keys", h.auth(h.mintKey))
	mux.Handle("POST /manage/{id}/keys/{key}/revoke", h.auth(h.revokeKey))
	mux.Handle("POST /manage/{id}/keys/v1/rotate", h.auth(h.rotateV1Key))
	mux.Handle("POST /manage/{id}/keys/v1/confirm", h.auth(h.confirmV1Key))
	mux.Handle("GET /manage/{id}/audit", h.auth(h.auditPage))
}

func keysPath(f *drip.Faucet) string { return "/manage/" + strconv.FormatInt(f.ID, 10) + "/keys" }

// keys is the data of the API keys page.
type keys struct {
	Tabs    faucetTabs
	Pending bool // a v1 key rotation waits for its confirmation
	Keys    []keyRow
	Scopes  []drip.Scope
	Checked map[drip.Scope]bool // the scopes ticked on a form sent back
	Recent  bool                // the session may mint, revoke and rotate without confirming first
	MinDay  string              // the earliest expiry day the form takes
}

// keyRow is one v2 key as the list shows it.
type keyRow struct {
	drip.Key
	State  string // live, expired or revoked
	Scopes string
	IPs    string
	Cap    string // the daily USD cap, "" for none
}

func newKeyRow(k drip.Key, now time.Time) keyRow {
	row := keyRow{Key: k, State: "live", IPs: strings.Join(drip.PrefixStrings(k.IPWhitelist), ", ")}
	switch {
	case k.RevokedAt != nil:
		row.State = "revoked"
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		row.State = "expired"
	}
	row.Scopes = scopeList(k.Scopes)
	if k.DailyUSDCapMicros > 0 {
		row.Cap = key.FormatUSD(k.DailyUSDCapMicros)
	}
	return row
}

func scopeList(scopes []drip.Scope) string {
	s := make([]string, len(scopes))
	for i, sc := range scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	h.showKeys(w, r, sess, f, http.StatusOK, &page{Flash: flash(r)})
}

// showKeys renders the API keys page with p's errors and form.
func (h *Handler) showKeys(w http.ResponseWriter, r *http.Request, sess *account.Session, f *drip.Faucet, status int, p *page) {
	now := h.d.Now()
	d := &keys{Tabs: faucetTabs{Faucet: f, Current: "keys"}, Scopes: drip.Scopes, Checked: map[drip.Scope]bool{},
		Recent: h.acc.RecentlyVerified(sess), MinDay: now.UTC().AddDate(0, 0, 1).Format(time.DateOnly)}
	for _, s := range r.PostForm["scope"] {
		d.Checked[drip.Scope(s)] = true
	}
	list, err := h.d.Keys.List(r.Context(), f.ID)
	if err == nil {
		d.Pending, err = h.d.Store.FaucetKeyPending(r.Context(), f.ID)
	}
	if err != nil {
		p := &page{Title: "Error", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	// Newest first: the key just minted is the one an owner looks for.
	for i := len(list) - 1; i >= 0; i-- {
		d.Keys = append(d.Keys, newKeyRow(list[i], now))
	}
	p.Title, p.User, p.Wide, p.Data = "API keys", sess.User, true, d
	h.render(w, r, status, "keys", p, nil)
}

// keyFields tells which field of the mint form an error of the key
// service is about, by the start of its message.
var keyFields = []fieldPrefix{
	{"A key needs at least one scope", "scope"},
	{"Unknown scope", "scope"},
	{"Invalid expiry", "expires"},
	{"Invalid IP whitelist", "ips"},
	{"Invalid CIDR", "ips"},
	{"Invalid IP address", "ips"},
	{"Invalid USD amount", "cap"},
	{"A daily USD cap", "cap"},
}

// keyFailure puts err on p, next to its field of the mint form when it
// is about one, and returns the page's status.
func (h *Handler) keyFailure(r *http.Request, p *page, err error) int {
	status := h.failure(r, p, err)
	toField(p, keyFields)
	return status
}

// decodeMint reads the mint form into the key service's parameters, with
// what is wrong by field. The service checks its own rules again (at
// least one scope, the cap only for send keys, the longest lifetime).
func decodeMint(r *http.Request, faucetID int64, now time.Time) (key.MintParams, map[string]string) {
	p := key.MintParams{FaucetID: faucetID}
	bad := map[string]string{}
	_ = r.ParseForm() // a body it cannot read leaves the form empty: no scope, said next to its field
	put := func(field string, err error) {
		var de *drip.Error
		if errors.As(err, &de) {
			bad[field] = de.Message
		}
	}
	var err error
	if p.Scopes, err = drip.ParseScopes(strings.Join(r.PostForm["scope"], ",")); err != nil {
		put("scope", err)
	}
	if s := strings.TrimSpace(r.PostFormValue("expires")); s != "" {
		// The key stops working at the start of that day, UTC.
		day, err := time.Parse(time.DateOnly, s)
		switch {
		case err != nil:
			bad["expires"] = "Invalid expiry: a day such as 2030-12-31, or leave it empty for none."
		case !day.After(now):
			bad["expires"] = "Invalid expiry: a day after today (UTC), or leave it empty for none."
		default:
			p.ExpiresIn = day.Sub(now)
		}
	}
	// A textarea sends its lines with CRLF.
	if p.IPWhitelist, err = faucet.ParseIPList(strings.ReplaceAll(r.PostFormValue("ips"), "\r", "")); err != nil {
		put("ips", err)
	}
	if s := strings.TrimSpace(r.PostFormValue("cap")); s != "" {
		if p.DailyUSDCapMicros, err = key.ParseUSD(s); err != nil {
			put("cap", err)
		}
	}
	return p, bad
}

// mintArgs is what the audit log keeps of a mint: the key's limits, never
// its secret.
func mintArgs(p key.MintParams) map[string]any {
	args := map[string]any{"scopes": p.Scopes, "ip_whitelist": drip.PrefixStrings(p.IPWhitelist)}
	if p.ExpiresIn > 0 {
		args["expires_in_seconds"] = int64(p.ExpiresIn / time.Second)
	}
	if p.DailyUSDCapMicros > 0 {
		args["daily_usd_cap"] = key.FormatUSD(p.DailyUSDCapMicros)
	}
	return args
}

// keysFaucet is the owned faucet of a change on its keys page, a
// sensitive action (issue 11, D15): a session not confirmed within 15
// minutes is sent to confirm it is you, then back to the keys page.
func (h *Handler) keysFaucet(w http.ResponseWriter, r *http.Request, sess *account.Session) (*drip.Faucet, bool) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return nil, false
	}
	if !h.acc.RecentlyVerified(sess) {
		h.reverify(w, r, keysPath(f))
		return nil, false
	}
	return f, true
}

// minted is the data of the page that shows a new key, this once.
type minted struct {
	Tabs   faucetTabs
	Key    keyRow
	Secret string
}

// mintKey mints a v2 key and shows its secret on the answer page, the
// one time it is shown (D14): the page is not cached (render's no-store),
// and the secret is in no log and no redirect.
func (h *Handler) mintKey(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.keysFaucet(w, r, sess)
	if !ok {
		return
	}
	params, bad := decodeMint(r, f.ID, h.d.Now())
	form := map[string]string{"expires": r.PostFormValue("expires"), "ips": r.PostFormValue("ips"), "cap": r.PostFormValue("cap")}
	if len(bad) > 0 {
		h.showKeys(w, r, sess, f, http.StatusUnprocessableEntity, &page{Fields: bad, Form: form})
		return
	}
	k, secret, err := h.d.Keys.Mint(r.Context(), params)
	if err != nil {
		h.recordChange(r, sess, f, "mint_key", mintArgs(params), "", err)
		p := &page{Form: form}
		h.showKeys(w, r, sess, f, h.keyFailure(r, p, err), p)
		return
	}
	detail := fmt.Sprintf("%s, scopes %s, of faucet %d (%s)", k.Prefix, scopeList(k.Scopes), f.ID, f.Name)
	h.keyChanged(r, sess, account.KeyMinted, detail)
	h.recordChange(r, sess, f, "mint_key", mintArgs(params), "Key "+k.Prefix+" minted.", nil)
	h.render(w, r, http.StatusOK, "keys_minted", &page{Title: "Your new API key", User: sess.User, Wide: true,
		Data: minted{Tabs: faucetTabs{Faucet: f, Current: "keys"}, Key: newKeyRow(*k, h.d.Now()), Secret: secret}}, nil)
}

// keyChanged records a key change in the user's security log (issue 11
// item 3). The change is made already, so a failure to record is logged,
// not shown: the page must still show a key it will never show again.
func (h *Handler) keyChanged(r *http.Request, sess *account.Session, kind, detail string) {
	if err := h.acc.RecordKeyChange(r.Context(), sess, kind, h.ip(r), detail); err != nil {
		h.log.ErrorContext(r.Context(), "console: recording a key change in the security log failed", "kind", kind, "err", err)
	}
}

// revokeKey revokes one of the faucet's v2 keys, at once on every node
// (D14: keys are never cached).
func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.keysFaucet(w, r, sess)
	if !ok {
		return
	}
	k, err := h.faucetKey(r, f)
	if err == nil {
		k, err = h.d.Keys.Revoke(r.Context(), k.ID)
	}
	if err != nil {
		if k != nil {
			h.recordChange(r, sess, f, "revoke_key", map[string]string{"key": k.Prefix}, "", err)
		}
		p := &page{}
		h.showKeys(w, r, sess, f, h.failure(r, p, err), p)
		return
	}
	h.keyChanged(r, sess, account.KeyRevoked, fmt.Sprintf("%s, scopes %s, of faucet %d (%s)", k.Prefix, scopeList(k.Scopes), f.ID, f.Name))
	h.recordChange(r, sess, f, "revoke_key", map[string]string{"key": k.Prefix}, "Key "+k.Prefix+" revoked.", nil)
	redirect(w, r, keysPath(f)+"?done=key-revoked")
}

// faucetKey is the v2 key of the path's {key} when it is the faucet's:
// another faucet's key is as unknown as none.
func (h *Handler) faucetKey(r *http.Request, f *drip.Faucet) (*drip.Key, error) {
	id, err := strconv.ParseInt(r.PathValue("key"), 10, 64)
	if err != nil {
		return nil, drip.Errorf(drip.CodeNotFound, "There is no such key among this faucet's.")
	}
	list, err := h.d.Keys.List(r.Context(), f.ID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].ID == id {
			if list[i].RevokedAt != nil {
				return &list[i], drip.Errorf(drip.CodeConflict, "Key %s is revoked already.", list[i].Prefix)
			}
			return &list[i], nil
		}
	}
	return nil, drip.Errorf(drip.CodeNotFound, "There is no such key among this faucet's.")
}

// rotated is the data of the page that shows a new v1 key, this once.
type rotated struct {
	Tabs   faucetTabs
	Secret string
}

// rotateV1Key issues a new v1 key beside the current one and shows it
// this once; both work until the rotation is confirmed (D13).
func (h *Handler) rotateV1Key(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.keysFaucet(w, r, sess)
	if !ok {
		return
	}
	secret, err := h.d.Faucets.RotateKey(r.Context(), f.ID)
	if err != nil {
		h.recordChange(r, sess, f, "rotate_v1_key", struct{}{}, "", err)
		p := &page{}
		h.showKeys(w, r, sess, f, h.failure(r, p, err), p)
		return
	}
	h.keyChanged(r, sess, account.V1KeyRotated, fmt.Sprintf("a new v1 key beside the current one, of faucet %d (%s)", f.ID, f.Name))
	h.recordChange(r, sess, f, "rotate_v1_key", struct{}{}, "A new v1 key works beside the current one until the rotation is confirmed.", nil)
	h.render(w, r, http.StatusOK, "keys_rotated", &page{Title: "Your new v1 key", User: sess.User, Wide: true,
		Data: rotated{Tabs: faucetTabs{Faucet: f, Current: "keys"}, Secret: secret}}, nil)
}

// confirmV1Key makes the new v1 key the only one: the old key is refused
// from that moment, on every node (D13).
func (h *Handler) confirmV1Key(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.keysFaucet(w, r, sess)
	if !ok {
		return
	}
	if err := h.d.Faucets.ConfirmRotation(r.Context(), f.ID); err != nil {
		h.recordChange(r, sess, f, "confirm_v1_key_rotation", struct{}{}, "", err)
		p := &page{}
		h.showKeys(w, r, sess, f, h.failure(r, p, err), p)
		return
	}
	h.keyChanged(r, sess, account.V1KeyRotationConfirmed, fmt.Sprintf("the new v1 key is the only one, of faucet %d (%s)", f.ID, f.Name))
	h.recordChange(r, sess, f, "confirm_v1_key_rotation", struct{}{}, "The new v1 key is the only one; the old one is refused.", nil)
	redirect(w, r, keysPath(f)+"?done=v1-confirmed")
}

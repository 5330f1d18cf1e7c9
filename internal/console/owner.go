package console

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
)

// tabs are the sections of one faucet's management pages, in the order
// the faucet's header lists them; each is /manage/{id}/<path> ("" is the
// overview).
var tabs = []struct{ Name, Path, Label string }{
	{"overview", "", "Overview"},
	{"payouts", "payouts", "Payouts"},
	{"settings", "settings", "Settings"},
	{"limits", "limits", "Send limits"},
	{"whitelist", "ip-whitelist", "IP whitelist"},
	{"rules", "anti-fraud", "Anti-fraud"},
	{"alerts", "alerts", "Low-balance alerts"},
	{"listing", "listing", "Listing"},
	{"keys", "keys", "API keys"},
	{"webhooks", "webhooks", "Webhooks"},
	{"audit", "audit", "Audit log"},
}

// faucetTabs is what the "faucettabs" template draws: the faucet's name
// and its sections, the current one marked.
type faucetTabs struct {
	Faucet  *drip.Faucet
	Current string
}

// Tabs lists the sections with their paths.
func (t faucetTabs) Tabs() []tab {
	base := "/manage/" + strconv.FormatInt(t.Faucet.ID, 10)
	out := make([]tab, len(tabs))
	for i, s := range tabs {
		href := base
		if s.Path != "" {
			href += "/" + s.Path
		}
		out[i] = tab{Href: href, Label: s.Label, Current: s.Name == t.Current}
	}
	return out
}

type tab struct {
	Href, Label string
	Current     bool
}

// ownedFaucet is the faucet of the path's {id} when the session's user
// owns it. Anyone else's faucet, or none, answers 404 (the page does not
// say whether a faucet exists), and ok is false.
func (h *Handler) ownedFaucet(w http.ResponseWriter, r *http.Request, sess *account.Session) (f *drip.Faucet, ok bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err == nil && id > 0 {
		f, err = h.d.Faucets.Get(r.Context(), id)
	} else {
		err = drip.Errorf(drip.CodeNotFound, "There is no such faucet.")
	}
	if err == nil && f.OwnerID != sess.User.ID {
		err = drip.Errorf(drip.CodeNotFound, "There is no such faucet.")
	}
	if err != nil {
		var de *drip.Error
		if errors.As(err, &de) && de.Code == drip.CodeNotFound {
			err = drip.Errorf(drip.CodeNotFound, "There is no such faucet among yours.")
		}
		p := &page{Title: "Not found", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return nil, false
	}
	return f, true
}

// ownerCaller is how a faucet's owner calls the operations from its pages:
// as the faucet, with no key (the session stands for every scope; issue 7:
// the pages run the operations v2 and the tool server run).
func ownerCaller(f *drip.Faucet) *payout.Caller { return &payout.Caller{Faucet: f} }

package console

import (
	"errors"
	"net/http"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
)

// recordChange writes a change made on a faucet's pages to the faucet's
// audit log, the log the tool server's manage calls go to, naming the
// user who made it (issue 11). action is the operation's name
// ("set_ip_whitelist"), args what was asked (never a secret), result what
// came of it; failed, when not nil, is why it was refused. A failure to
// record is logged, not shown: the change itself is already made.
func (h *Handler) recordChange(r *http.Request, sess *account.Session, f *drip.Faucet, action string, args any, result string, failed error) {
	if failed != nil {
		result = failed.Error()
		var de *drip.Error
		if errors.As(failed, &de) {
			result = de.Message
		}
	}
	if err := h.d.Audit.RecordByUser(r.Context(), f.ID, sess.User.ID, action, args, result, failed != nil); err != nil {
		h.log.ErrorContext(r.Context(), "console: recording a change in the audit log failed", "faucet", f.ID, "action", action, "err", err)
	}
}

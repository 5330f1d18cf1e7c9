package console

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// A faucet's payouts: the filtered list, 50 a page (keyset: ?before=<id>,
// D37's page size), and its CSV export, all the rows of the same filter.
// One store query (PayoutSearch) serves both.

// payoutsPerPage is D37's page size.
const payoutsPerPage = 50

// csvChunk is how many rows the export reads at a time: the file is
// streamed page by page, never held whole, and no read holds a database
// connection while the client is slow to take the rows.
const csvChunk = 500

// payoutsData is the data of the payouts page.
type payoutsData struct {
	Coins []string // every coin, for the filter
	Rows  []payoutRow
	Next  string // the next page's URL, "" on the last
	CSV   string // the export of the same filter
	Any   bool   // a filter is set
}

type payoutRow struct {
	ID             int64
	Time           string
	Coin           string
	Amount         string
	To             string
	PayoutUserHash string
	IPAddress      string
	Referral       string
}

// payoutFilter reads the filter of the payouts page and its export:
// coin, recipient (a username, email, payout_user_hash or address,
// resolved as a send resolves it, D11), recipient_id, referral and
// before. It returns the search, the form to fill in again, and the
// query that repeats the filter.
func (h *Handler) payoutFilter(r *http.Request, f *drip.Faucet) (*store.PayoutSearchParams, map[string]string, url.Values, error) {
	q := r.URL.Query()
	form := map[string]string{
		"coin": drip.Symbol(strings.TrimSpace(q.Get("coin"))), "recipient": strings.TrimSpace(q.Get("recipient")),
		"recipient_id": strings.TrimSpace(q.Get("recipient_id")), "referral": q.Get("referral"),
	}
	keep := url.Values{}
	for k, v := range form {
		if v != "" {
			keep.Set(k, v)
		}
	}
	s := &store.PayoutSearchParams{FaucetID: f.ID, Coin: form["coin"], Referral: form["referral"]}
	if s.Coin != "" {
		coins, err := h.d.Coins.List(r.Context())
		if err != nil {
			return nil, form, keep, err
		}
		if !drip.HasCoin(coins, s.Coin) {
			return nil, form, keep, drip.Errorf(drip.CodeInvalidCurrency, "Invalid coin: not a supported coin.")
		}
	}
	if id := form["recipient_id"]; id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 1 {
			return nil, form, keep, drip.Errorf(drip.CodeInvalid, "Invalid recipient id: a whole number.")
		}
		s.RecipientID = n
	}
	if to := form["recipient"]; to != "" {
		var u *drip.User
		var err error
		if s.Coin != "" {
			u, err = h.d.Users.Resolve(r.Context(), to, s.Coin)
		} else {
			u, _, err = h.d.Users.ResolveAnyCoin(r.Context(), to)
		}
		if drip.ErrorCode(err) == drip.CodeRecipientUnknown {
			err = drip.Errorf(drip.CodeInvalid, "Invalid recipient: no user has this username, email, payout_user_hash or address.")
		}
		if err != nil {
			return nil, form, keep, err
		}
		if s.RecipientID != 0 && s.RecipientID != u.ID {
			return nil, form, keep, drip.Errorf(drip.CodeInvalid, "Invalid recipient: the recipient and the recipient id name different users.")
		}
		s.RecipientID = u.ID
	}
	if b := q.Get("before"); b != "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 1 {
			return nil, form, keep, drip.Errorf(drip.CodeInvalid, "Invalid page: follow the page links.")
		}
		s.BeforeID = n
	}
	return s, form, keep, nil
}

func (h *Handler) payoutsPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	v := view{"payouts", "manage_payouts", "Payouts · " + f.Name}
	coins, err := h.d.Coins.List(r.Context())
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	d := &payoutsData{}
	for _, c := range coins {
		d.Coins = append(d.Coins, c.Symbol)
	}
	base := "/manage/" + strconv.FormatInt(f.ID, 10) + "/payouts"
	s, form, keep, err := h.payoutFilter(r, f)
	p := &page{Wide: true, Form: form}
	d.Any = len(keep) > 0
	d.CSV = base + ".csv"
	if d.Any {
		d.CSV += "?" + keep.Encode()
	}
	if err != nil {
		h.showFaucet(w, r, sess, f, v, h.manageFailure(r, p, err), p, d, "", err)
		return
	}
	s.Limit = payoutsPerPage + 1 // one more tells whether a next page exists
	found, err := h.d.Store.PayoutSearch(r.Context(), s)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	if len(found) > payoutsPerPage {
		found = found[:payoutsPerPage]
		next := url.Values{}
		for k := range keep {
			next.Set(k, keep.Get(k))
		}
		next.Set("before", strconv.FormatInt(found[len(found)-1].ID, 10))
		d.Next = base + "?" + next.Encode()
	}
	for _, p := range found {
		d.Rows = append(d.Rows, payoutRow{ID: p.ID, Time: p.CreatedAt.UTC().Format("2006-01-02 15:04:05"), Coin: p.Coin,
			Amount: drip.FormatCoinsFixed(p.Amount), To: p.To, PayoutUserHash: p.PayoutUserHash, IPAddress: p.IPAddress, Referral: p.Referral})
	}
	h.showFaucet(w, r, sess, f, v, http.StatusOK, p, d, "", nil)
}

// payoutsCSV exports every payout the filter matches, newest first, as a
// CSV file with a header row. A cell a spreadsheet would read as a
// formula is neutralised (csvCell).
func (h *Handler) payoutsCSV(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	f, ok := h.ownedFaucet(w, r, sess)
	if !ok {
		return
	}
	s, _, _, err := h.payoutFilter(r, f)
	if err != nil {
		h.problem(w, r, sess, err)
		return
	}
	s.BeforeID, s.Limit = 0, csvChunk // the export is always whole
	found, err := h.d.Store.PayoutSearch(r.Context(), s)
	if err != nil { // before the first byte: an error page can still be sent
		h.problem(w, r, sess, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/csv; charset=utf-8")
	hd.Set("Content-Disposition", `attachment; filename="faucet-`+strconv.FormatInt(f.ID, 10)+`-payouts.csv"`)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	out := csv.NewWriter(w)
	_ = out.Write([]string{"payout_id", "created_at", "currency", "amount", "to", "payout_user_hash", "ip_address", "referral"})
	for {
		for _, p := range found {
			_ = out.Write([]string{strconv.FormatInt(p.ID, 10), p.CreatedAt.UTC().Format(time.RFC3339Nano), p.Coin,
				drip.FormatCoinsFixed(p.Amount), csvCell(p.To), csvCell(p.PayoutUserHash), csvCell(p.IPAddress), csvCell(p.Referral)})
		}
		out.Flush()
		if err := out.Error(); err != nil {
			return // the client went away
		}
		if len(found) < csvChunk {
			return
		}
		s.BeforeID = found[len(found)-1].ID
		if found, err = h.d.Store.PayoutSearch(r.Context(), s); err != nil {
			// The file is cut short; the client sees it end without its
			// last rows, and the log says why.
			h.log.ErrorContext(r.Context(), "console: payouts export failed", "faucet", f.ID, "err", err)
			return
		}
	}
}

// csvCell neutralises a cell a spreadsheet would run as a formula: one
// that starts with = + - @, a tab or a carriage return gets a leading
// apostrophe (OWASP's advice on CSV injection). The text is a faucet's
// or its visitors', so it may be anything.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

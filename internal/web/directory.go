// Package web serves drip's HTML pages and the public JSON that goes with
// them. Pages are html/template files embedded in the binary; handlers
// decode, call a service and render, as the API handlers do.
package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/dripfaucet/drip/internal/listing"
)

// Paths of the faucet directory (D44). The JSON list answers at two paths
// because existing faucet-list clients call both.
const (
	DirectoryPath = "/faucets"
	ListPath      = "/api/listv1/faucetlist"
	ListPathV1    = "/api/v1/faucetlist"
)

//go:embed templates
var templateFS embed.FS

// Directory serves the public faucet list: the faucets whose listing the
// operator approved, as a page and as JSON.
type Directory struct {
	listing *listing.Service
	log     *slog.Logger
	page    *template.Template
	mux     *http.ServeMux
}

// NewDirectory returns the handler of DirectoryPath, ListPath and ListPathV1.
func NewDirectory(svc *listing.Service, log *slog.Logger) *Directory {
	d := &Directory{
		listing: svc,
		log:     log,
		page: template.Must(template.New("faucets.html").Funcs(template.FuncMap{
			"timer": timerText,
			"join":  func(list []string) string { return strings.Join(list, ", ") },
		}).ParseFS(templateFS, "templates/faucets.html")),
		mux: http.NewServeMux(),
	}
	d.mux.HandleFunc("GET "+DirectoryPath, d.servePage)
	d.mux.HandleFunc(ListPath, d.serveList)
	d.mux.HandleFunc(ListPathV1, d.serveList)
	return d
}

func (d *Directory) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.mux.ServeHTTP(w, r) }

// Entry is one listed faucet, as the page shows it and the JSON lists it.
type Entry struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	URL          string   `json:"url"`
	Domain       string   `json:"domain"`
	Description  string   `json:"description"`
	TimerMinutes int      `json:"timer_minutes"`
	Currencies   []string `json:"currencies"`
	Categories   []string `json:"categories"`
}

// entries reads the listed faucets; lists are never nil, so JSON has [].
func (d *Directory) entries(r *http.Request) ([]Entry, error) {
	faucets, err := d.listing.Listed(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(faucets))
	for _, f := range faucets {
		out = append(out, Entry{
			ID: f.ID, Name: f.Name, URL: f.URL, Domain: f.Domain,
			Description: f.Settings.Description, TimerMinutes: f.Settings.TimerMinutes,
			Currencies: nonNil(f.Settings.Currencies), Categories: nonNil(f.Settings.Categories),
		})
	}
	return out, nil
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// pageCSP allows the page nothing but its own inline style: no script runs
// even if a hostile name slipped past escaping.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (d *Directory) servePage(w http.ResponseWriter, r *http.Request) {
	entries, err := d.entries(r)
	var body bytes.Buffer
	if err == nil {
		// Rendered whole before anything is sent, so a failure is a clean 500.
		err = d.page.Execute(&body, struct{ Faucets []Entry }{entries})
	}
	if err != nil {
		d.log.ErrorContext(r.Context(), "faucet list page failed", "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "public, max-age=60")
	_, _ = w.Write(body.Bytes())
}

// listReply is the JSON faucet list, in the v1 envelope existing clients read.
type listReply struct {
	Status  int     `json:"status"`
	Message string  `json:"message"`
	Faucets []Entry `json:"faucets"`
}

// errorReply is a refused or failed list request, in the same envelope.
type errorReply struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// listMethods are what the JSON list answers; clients use GET or POST, and
// HEAD comes with GET.
const listMethods = "GET, HEAD, POST"

func (d *Directory) serveList(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		w.Header().Set("Allow", listMethods)
		writeJSON(w, http.StatusMethodNotAllowed, errorReply{http.StatusMethodNotAllowed, "Method not allowed: use GET or POST."})
		return
	}
	// A POST's body (clients send their api_key) is not read: the list is public.
	entries, err := d.entries(r)
	if err != nil {
		d.log.ErrorContext(r.Context(), "faucet list failed", "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorReply{http.StatusInternalServerError, "Internal error."})
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeJSON(w, http.StatusOK, listReply{Status: http.StatusOK, Message: "OK", Faucets: entries})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// timerText says how often a faucet lets a visitor claim: "every 5
// minutes", "every hour", "every 1 h 30 min".
func timerText(minutes int) string {
	switch {
	case minutes <= 0:
		return "not stated"
	case minutes == 1:
		return "every minute"
	case minutes < 60:
		return "every " + strconv.Itoa(minutes) + " minutes"
	case minutes == 60:
		return "every hour"
	case minutes%60 == 0:
		return "every " + strconv.Itoa(minutes/60) + " hours"
	default:
		return "every " + strconv.Itoa(minutes/60) + " h " + strconv.Itoa(minutes%60) + " min"
	}
}

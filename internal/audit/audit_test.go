package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// newLog is an audit log over a fresh application, with a faucet and a
// manage key of it to record entries for.
func newLog(t *testing.T, eng storetest.Engine) (log *audit.Service, faucetID, keyID int64) {
	t.Helper()
	e := apptest.New(t, eng.Open(t), apptest.Options{})
	f, _ := e.Faucet(t, nil)
	k, _, err := e.App.Keys.Mint(context.Background(), key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeManage}})
	if err != nil {
		t.Fatal(err)
	}
	return e.App.Audit, f.ID, k.ID
}

// TestRecordTruncates: arguments whose JSON is longer than MaxText are kept
// as {"truncated": "<their JSON, clipped>"}, no longer than MaxText bytes
// however much JSON escapes lengthen the text, and the longest such
// prefix; a result is clipped to MaxText bytes, on a character boundary.
func TestRecordTruncates(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			log, faucetID, keyID := newLog(t, eng)
			ctx := context.Background()
			for _, c := range []struct {
				name string
				args any
			}{
				{"plain text", map[string]string{"note": strings.Repeat("a", 3*audit.MaxText)}},
				{"text JSON escapes lengthen", map[string]string{"note": strings.Repeat(`<"&>`, audit.MaxText)}},
				{"a list", map[string][]string{"whitelist": strings.Split(strings.Repeat("user,", 3000), ",")}},
			} {
				t.Run(c.name, func(t *testing.T) {
					if err := log.Record(ctx, faucetID, keyID, "tool", c.args, strings.Repeat("é", audit.MaxText), true); err != nil {
						t.Fatal(err)
					}
					list, err := log.List(ctx, faucetID, 1)
					if err != nil || len(list) != 1 {
						t.Fatalf("List: %v, %v", list, err)
					}
					e := list[0]
					full, _ := json.Marshal(c.args)
					var kept struct {
						Truncated string `json:"truncated"`
					}
					if err := json.Unmarshal(e.Arguments, &kept); err != nil || !strings.HasPrefix(string(full), kept.Truncated) {
						t.Fatalf("arguments %.80s...: want {\"truncated\": a prefix of their JSON} (%v)", e.Arguments, err)
					}
					if n := len(e.Arguments); n > audit.MaxText || n < audit.MaxText-6 { // an escape is at most 6 bytes
						t.Errorf("arguments kept in %d bytes, want at most %d and no fewer than %d", n, audit.MaxText, audit.MaxText-6)
					}
					if len(e.Result) != audit.MaxText || !strings.HasPrefix(strings.Repeat("é", audit.MaxText), e.Result) {
						t.Errorf("result kept in %d bytes, want the first %d of it", len(e.Result), audit.MaxText)
					}
				})
			}
		})
	}
}

// TestListClampsItsLimit: List gives the newest entries first, at least 1
// and at most 200 of them whatever limit it is asked for.
func TestListClampsItsLimit(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			log, faucetID, keyID := newLog(t, eng)
			ctx := context.Background()
			for i := range 205 {
				if err := log.Record(ctx, faucetID, keyID, "tool", map[string]int{"n": i}, "OK", false); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct{ limit, want int }{{-5, 1}, {0, 1}, {1, 1}, {50, 50}, {200, 200}, {201, 200}, {1000, 200}} {
				list, err := log.List(ctx, faucetID, c.limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(list) != c.want || string(list[0].Arguments) != `{"n":204}` {
					t.Errorf("List(limit %d): %d entries from %s, want %d from the newest", c.limit, len(list), list[0].Arguments, c.want)
				}
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// runAdminList runs a drip admin command with --json whose output is a list.
func runAdminList(t *testing.T, dbArgs []string, args ...string) []map[string]any {
	t.Helper()
	out, err := exec.Command(dripBin, append(append([]string{"admin"}, args...), append(dbArgs, "--json")...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("drip admin %v: %v\n%s", args, err, stderr)
	}
	var v []map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("drip admin %v: output is not a JSON list: %v\n%s", args, err, out)
	}
	return v
}

// runAdminFailing runs a drip admin command that must fail, and returns
// its exit code and what it wrote to stderr.
func runAdminFailing(t *testing.T, dbArgs []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(dripBin, append(append([]string{"admin"}, args...), dbArgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() == 0 {
		t.Fatalf("drip admin %v: %v, want a non-zero exit", args, err)
	}
	if strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("drip admin %v printed a stack trace:\n%s", args, stderr.String())
	}
	return ee.ExitCode(), stderr.String()
}

// listingDBs are the databases the listing commands are tried on: each
// returns the command line's database flags and the same database opened
// in this process, where the listing service makes the requests the v2
// interface will make.
func listingDBs(t *testing.T) map[string]func(t *testing.T) ([]string, store.Store) {
	dbs := map[string]func(t *testing.T) ([]string, store.Store){
		"sqlite": func(t *testing.T) ([]string, store.Store) {
			dir := t.TempDir()
			st, err := sqlite.Open(context.Background(), filepath.Join(dir, "drip.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return []string{"--data-dir", dir}, st
		},
	}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbs["postgres"] = func(t *testing.T) ([]string, store.Store) {
			st, u := storetest.OpenPostgresURL(t)
			return []string{"--database-url", u}, st
		}
	} else {
		t.Logf("%s not set: the listing commands run on SQLite only", storetest.PostgresEnv)
	}
	return dbs
}

// TestAdminListing: the operator prices listing, sees the requests faucets
// made, approves one and rejects another (which refunds it), and the ledger
// reconciles (D44, D3).
func TestAdminListing(t *testing.T) {
	t.Parallel()
	for name, open := range listingDBs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, st := open(t)
			runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com", "--verified")
			for _, n := range []string{"a", "b"} {
				runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", strings.ToUpper(n), "--domain", n+".example.com", "--url", "https://"+n+".example.com/")
			}
			runAdmin(t, db, "deposit", "--faucet", "1", "--coin", "BTC", "--amount", "150000")
			runAdmin(t, db, "deposit", "--faucet", "2", "--coin", "BTC", "--amount", "150000")

			set := runAdmin(t, db, "listing", "set-cost", "--coin", "btc", "--amount", "100000")
			if diff := cmp.Diff(map[string]any{"coin": "BTC", "amount": 100000.0, "offered": true}, set); diff != "" {
				t.Errorf("set-cost (-want +got):\n%s", diff)
			}
			runAdmin(t, db, "listing", "set-cost", "--coin", "DOGE", "--amount", "5")
			withdrawn := runAdmin(t, db, "listing", "set-cost", "--coin", "DOGE", "--amount", "0")
			if withdrawn["offered"] != false {
				t.Errorf("set-cost --amount 0: %v, want the offer withdrawn", withdrawn)
			}
			costs := runAdminList(t, db, "listing", "costs")
			if diff := cmp.Diff([]map[string]any{{"coin": "BTC", "amount": 100000.0}}, costs); diff != "" {
				t.Errorf("costs (-want +got):\n%s", diff)
			}

			// The faucets ask, as the v2 interface will, through the service.
			svc := listing.NewService(st, coin.NewCatalog(st, time.Now), time.Now)
			var ids []string
			for _, id := range []int64{1, 2} {
				f, err := st.FaucetGetByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				r, err := svc.Request(ctx, f, "BTC")
				if err != nil {
					t.Fatalf("request of faucet %d: %v", id, err)
				}
				ids = append(ids, strconv.FormatInt(r.ID, 10))
			}

			pending := runAdminList(t, db, "listing", "requests")
			if len(pending) != 2 || pending[0]["status"] != "pending" || pending[0]["faucet_name"] != "A" ||
				pending[1]["faucet_url"] != "https://b.example.com/" || pending[0]["amount"] != 100000.0 || pending[0]["decided_at"] != nil {
				t.Errorf("pending requests: %v", pending)
			}

			approved := runAdmin(t, db, "listing", "approve", "--request", ids[0])
			if approved["status"] != "approved" || approved["faucet_id"] != 1.0 || approved["decided_at"] == nil {
				t.Errorf("approve: %v", approved)
			}
			rejected := runAdmin(t, db, "listing", "reject", "--request", ids[1])
			if rejected["status"] != "rejected" || rejected["faucet_id"] != 2.0 {
				t.Errorf("reject: %v", rejected)
			}

			// A decided request cannot be decided again, and the refund is not paid twice.
			for _, c := range []struct{ verb, id, want string }{
				{"reject", ids[0], "is approved already"},
				{"approve", ids[0], "is approved already"},
				{"reject", ids[1], "is rejected already"},
				{"approve", "999", "No listing request 999"},
			} {
				code, stderr := runAdminFailing(t, db, "listing", c.verb, "--request", c.id)
				if code != 1 || !strings.Contains(stderr, c.want) {
					t.Errorf("listing %s --request %s: exit %d %q, want exit 1 mentioning %q", c.verb, c.id, code, stderr, c.want)
				}
			}

			for status, want := range map[string]string{"approved": ids[0], "rejected": ids[1]} {
				list := runAdminList(t, db, "listing", "requests", "--status", status)
				if len(list) != 1 || strconv.Itoa(int(list[0]["id"].(float64))) != want {
					t.Errorf("requests --status %s: %v, want request %s", status, list, want)
				}
			}
			if got := runAdminList(t, db, "listing", "requests"); len(got) != 0 {
				t.Errorf("pending requests after deciding both: %v", got)
			}
			listed, err := svc.Listed(ctx)
			if err != nil || len(listed) != 1 || listed[0].ID != 1 {
				t.Errorf("listed faucets: %+v, %v; want faucet 1", listed, err)
			}
			for faucetID, want := range map[string]float64{"1": 50000, "2": 150000} {
				show := runAdmin(t, db, "faucet", "show", "--faucet", faucetID)
				if got := show["balances"].(map[string]any)["BTC"]; got != want {
					t.Errorf("faucet %s BTC balance %v, want %v", faucetID, got, want)
				}
			}
			if got, err := st.BalanceGet(ctx, drip.AccountListing, "BTC"); err != nil || got != 100000 {
				t.Errorf("system:listing BTC balance %d, %v; want the approved fee, 100000", got, err)
			}
			if rec := runAdmin(t, db, "reconcile"); rec["ok"] != true {
				t.Errorf("reconcile: %v", rec)
			}
		})
	}
}

// TestAdminListingErrors: operator mistakes get a message and a non-zero
// exit (2 for a command line that cannot run as written).
func TestAdminListingErrors(t *testing.T) {
	t.Parallel()
	db := []string{"--data-dir", t.TempDir()}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"set-cost without a coin", []string{"listing", "set-cost", "--amount", "5"}, 2, "--coin is required"},
		{"set-cost without an amount", []string{"listing", "set-cost", "--coin", "BTC"}, 2, "--amount is required"},
		{"set-cost of a fraction", []string{"listing", "set-cost", "--coin", "BTC", "--amount", "1.5"}, 2, "--amount must be a positive integer"},
		{"set-cost below zero", []string{"listing", "set-cost", "--coin", "BTC", "--amount", "-5"}, 2, "--amount must be a positive integer"},
		{"set-cost of an unknown coin", []string{"listing", "set-cost", "--coin", "NOPE", "--amount", "5"}, 1, `No coin "NOPE"`},
		{"requests of an unknown status", []string{"listing", "requests", "--status", "open"}, 2, "--status must be pending, approved or rejected"},
		{"approve without a request", []string{"listing", "approve"}, 2, "--request is required"},
		{"reject without a request", []string{"listing", "reject"}, 2, "--request is required"},
		{"approve an unknown request", []string{"listing", "approve", "--request", "7"}, 1, "No listing request 7"},
		{"reject an unknown request", []string{"listing", "reject", "--request", "7"}, 1, "No listing request 7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := runAdminFailing(t, db, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d %q, want exit %d mentioning %q", code, stderr, c.code, c.want)
			}
		})
	}
	if costs := runAdminList(t, db, "listing", "costs"); len(costs) != 0 {
		t.Errorf("a refused set-cost left a cost: %v", costs)
	}
}

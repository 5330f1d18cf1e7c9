package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the audit log of the tool server's manage calls
// (issue 4).

// testAuditInsertAndList: entries are stored as given, arguments byte for
// byte (JSON text, not re-encoded), and listed per faucet, newest first,
// at most limit of them.
func testAuditInsertAndList(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f, other := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2")
	k1 := newKey(t, st, &drip.Key{FaucetID: f.ID, Prefix: "drip_aaaaaaaa", Scopes: []drip.Scope{drip.ScopeManage}, CreatedAt: t0}, "hash1")
	k2 := newKey(t, st, &drip.Key{FaucetID: other.ID, Prefix: "drip_bbbbbbbb", Scopes: []drip.Scope{drip.ScopeManage}, CreatedAt: t0}, "hash2")
	if got, err := st.AuditList(ctx, f.ID, 10, 0); err != nil || got == nil || len(got) != 0 {
		t.Errorf("AuditList with no entries = %#v, %v; want an empty list", got, err)
	}

	entries := []*drip.AuditEntry{
		{FaucetID: f.ID, KeyID: k1, Tool: "set_ip_whitelist", Arguments: []byte(`{"ip_whitelist": ["127.0.0.1"]}`),
			Result: "IP whitelist updated.", CreatedAt: t0},
		{FaucetID: other.ID, KeyID: k2, Tool: "toggle_anti_fraud", Arguments: []byte(`{}`), Result: "OK", CreatedAt: t0.Add(time.Second)},
		{FaucetID: f.ID, KeyID: k1, Tool: "update_anti_fraud_rules", Arguments: []byte(`{"trust_rank":101}`),
			Result: "Invalid arguments: trust_rank must be at most 100 — «réessayez» 💧", IsError: true, CreatedAt: t0.Add(2 * time.Second)},
		{FaucetID: f.ID, KeyID: k1, Tool: "set_ratelimits", Arguments: []byte(`{"ratelimits":[]}`), Result: "Rate limits updated.",
			CreatedAt: t0.Add(3 * time.Second)},
		// A change made on the console names its user instead of a key.
		{FaucetID: f.ID, UserID: owner.ID, Tool: "set_ip_whitelist", Arguments: []byte(`{"ip_whitelist":[]}`),
			Result: "IP whitelist updated.", CreatedAt: t0.Add(4 * time.Second)},
	}
	var last int64
	for _, e := range entries {
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			e.ID, err = tx.AuditInsert(ctx, e)
			return err
		})
		if e.ID <= last {
			t.Errorf("AuditInsert returned id %d after %d: want increasing ids", e.ID, last)
		}
		last = e.ID
		// Read back with the entry: the key's prefix or the user's name.
		switch e.KeyID {
		case k1:
			e.KeyPrefix = "drip_aaaaaaaa"
		case k2:
			e.KeyPrefix = "drip_bbbbbbbb"
		case 0:
			e.Username = owner.Username
		}
	}
	// An entry names exactly one actor.
	for _, bad := range []*drip.AuditEntry{
		{FaucetID: f.ID, Tool: "x", Arguments: []byte(`{}`), CreatedAt: t0},
		{FaucetID: f.ID, KeyID: k1, UserID: owner.ID, Tool: "x", Arguments: []byte(`{}`), CreatedAt: t0},
	} {
		if err := try(st, func(ctx context.Context, tx store.Tx) error { _, err := tx.AuditInsert(ctx, bad); return err }); err == nil {
			t.Errorf("AuditInsert with key %d and user %d: stored, want refused", bad.KeyID, bad.UserID)
		}
	}

	for _, c := range []struct {
		faucet int64
		limit  int
		before int64
		want   []drip.AuditEntry
	}{
		{f.ID, 10, 0, []drip.AuditEntry{*entries[4], *entries[3], *entries[2], *entries[0]}},
		{f.ID, 2, 0, []drip.AuditEntry{*entries[4], *entries[3]}},
		{f.ID, 2, entries[3].ID, []drip.AuditEntry{*entries[2], *entries[0]}},
		{f.ID, 2, entries[0].ID, []drip.AuditEntry{}},
		{other.ID, 10, 0, []drip.AuditEntry{*entries[1]}},
	} {
		got, err := st.AuditList(ctx, c.faucet, c.limit, c.before)
		if err != nil {
			t.Fatalf("AuditList(%d, %d, %d): %v", c.faucet, c.limit, c.before, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("AuditList(%d, %d, %d) (-want +got):\n%s", c.faucet, c.limit, c.before, diff)
		}
	}
}

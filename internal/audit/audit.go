// Package audit records the changes made to a faucet, through the tool
// server's manage calls (issue 4) or the faucet's console pages (issue 11),
// and lets the faucet's owner read them back: which key or user called
// which operation with which arguments, and what came of it.
package audit

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// Service keeps the audit log.
type Service struct {
	store store.Store
	now   func() time.Time
}

func NewService(st store.Store, now func() time.Time) *Service {
	return &Service{store: st, now: now}
}

// maxText bounds what one entry keeps of its arguments and result, in
// bytes.
const maxText = 8 << 10

// Record writes one entry of a call made with the key keyID. args are
// what the log keeps of the call's arguments, and the owner's read keys
// read it back: the caller decides what they hold, and must leave out
// anything secret. Raw arguments are not fit for it, since a client may
// put anything in them; the tool server records the arguments as the tool
// decoded them, or only the fields the tool knows. Arguments longer than
// maxText are kept as {"truncated": "<their JSON, clipped>"}, itself no
// longer than maxText.
func (s *Service) Record(ctx context.Context, faucetID, keyID int64, tool string, args any, result string, isError bool) error {
	return s.insert(ctx, &drip.AuditEntry{FaucetID: faucetID, KeyID: keyID, Tool: tool}, args, result, isError)
}

// RecordByUser writes one entry of a change the user userID made on the
// faucet's console pages; action is the operation's name, as the tool
// server records it. args are as Record's.
func (s *Service) RecordByUser(ctx context.Context, faucetID, userID int64, action string, args any, result string, isError bool) error {
	return s.insert(ctx, &drip.AuditEntry{FaucetID: faucetID, UserID: userID, Tool: action}, args, result, isError)
}

func (s *Service) insert(ctx context.Context, e *drip.AuditEntry, args any, result string, isError bool) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if len(raw) > maxText {
		raw = truncated(string(raw))
	}
	e.Arguments, e.Result, e.IsError, e.CreatedAt = raw, drip.Clip(result, maxText), isError, s.now()
	return s.store.Transact(ctx, func(tx store.Tx) error {
		_, err := tx.AuditInsert(ctx, e)
		return err
	})
}

// truncated is {"truncated": text clipped}, at most maxText bytes long.
// JSON escapes lengthen the text by how much depends on it, so the longest
// prefix that fits is searched for.
func truncated(text string) []byte {
	marshal := func(n int) []byte {
		b, _ := json.Marshal(map[string]string{"truncated": drip.Clip(text, n)})
		return b
	}
	n := sort.Search(len(text), func(n int) bool { return len(marshal(n+1)) > maxText })
	return marshal(n)
}

// List returns the faucet's latest entries, newest first (limit 1-200).
func (s *Service) List(ctx context.Context, faucetID int64, limit int) ([]drip.AuditEntry, error) {
	return s.Page(ctx, faucetID, limit, 0)
}

// Page returns the faucet's entries older than the entry beforeID (0: from
// the newest), newest first (limit 1-200): a page of the console's log.
func (s *Service) Page(ctx context.Context, faucetID int64, limit int, beforeID int64) ([]drip.AuditEntry, error) {
	return s.store.AuditList(ctx, faucetID, min(max(limit, 1), 200), max(beforeID, 0))
}

// Package audit records the manage calls made through the tool server and
// lets the faucet's owner read them back (issue 4): which key called which
// tool with which arguments, and what came of it.
package audit

import (
	"context"
	"encoding/json"
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

// maxText bounds what one entry keeps of its arguments and result.
const maxText = 8 << 10

// Record writes one entry. args are the call's arguments, which must carry
// no secret (the tool server has none to take: it never takes keys).
func (s *Service) Record(ctx context.Context, faucetID, keyID int64, tool string, args any, result string, isError bool) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	if len(raw) > maxText {
		raw, _ = json.Marshal(map[string]string{"truncated": drip.Clip(string(raw), maxText)})
	}
	e := &drip.AuditEntry{FaucetID: faucetID, KeyID: keyID, Tool: tool, Arguments: raw,
		Result: drip.Clip(result, maxText), IsError: isError, CreatedAt: s.now()}
	return s.store.Transact(ctx, func(tx store.Tx) error {
		_, err := tx.AuditInsert(ctx, e)
		return err
	})
}

// List returns the faucet's latest entries, newest first (limit 1-200).
func (s *Service) List(ctx context.Context, faucetID int64, limit int) ([]drip.AuditEntry, error) {
	return s.store.AuditList(ctx, faucetID, min(max(limit, 1), 200))
}

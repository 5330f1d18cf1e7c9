package operation

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

// AuditParams count the entries of the audit log.
type AuditParams struct {
	Count *int `json:"count,omitempty" jsonschema:"how many entries, 1 to 200"`
}

// defaultAudit and maxAudit bound a read of the audit log.
const defaultAudit, maxAudit = 50, 200

func (p AuditParams) validate() error {
	if p.Count != nil && (*p.Count < 1 || *p.Count > maxAudit) {
		return drip.Errorf(drip.CodeInvalid, "Invalid count: 1 to 200.")
	}
	return nil
}

func (AuditParams) refine(s *jsonschema.Schema) {
	count := s.Properties["count"]
	count.Minimum, count.Maximum, count.Default = new(1.0), new(float64(maxAudit)), json.RawMessage("50")
}

// AuditEntry is one manage call made through the tool server.
type AuditEntry struct {
	ID        int64           `json:"id" jsonschema:"entry identifier"`
	KeyID     int64           `json:"key_id" jsonschema:"the key that made the call"`
	Tool      string          `json:"tool" jsonschema:"the tool called"`
	Arguments json.RawMessage `json:"arguments" jsonschema:"its arguments, those the tool takes"`
	Result    string          `json:"result" jsonschema:"what the call did, or why it failed"`
	IsError   bool            `json:"is_error" jsonschema:"whether the call failed"`
	CreatedAt string          `json:"created_at" jsonschema:"when (RFC 3339, UTC)"`
}

// AuditLog is the latest entries of the audit log, newest first.
type AuditLog struct {
	Entries []AuditEntry `json:"entries" jsonschema:"newest first"`
}

// audit lists the manage calls made through the tool server, newest first.
func (r *runner) audit(ctx context.Context, c *payout.Caller, p AuditParams) (AuditLog, string, error) {
	count := defaultAudit
	if p.Count != nil {
		count = *p.Count
	}
	list, err := r.Audit.List(ctx, c.Faucet.ID, count)
	if err != nil {
		return AuditLog{}, "", err
	}
	data := AuditLog{Entries: make([]AuditEntry, len(list))}
	for i, e := range list {
		data.Entries[i] = AuditEntry{ID: e.ID, KeyID: e.KeyID, Tool: e.Tool, Arguments: e.Arguments,
			Result: e.Result, IsError: e.IsError, CreatedAt: reply.Timestamp(e.CreatedAt)}
	}
	return data, ok, nil
}

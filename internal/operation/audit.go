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

// AuditEntry is one change to the faucet: a manage call made through the
// tool server, or a change made on the faucet's console pages.
type AuditEntry struct {
	ID        int64           `json:"id" jsonschema:"entry identifier"`
	Via       string          `json:"via" jsonschema:"where the change was made: tool_server or console"`
	By        string          `json:"by" jsonschema:"who made it: the key's prefix (tool_server) or the user's name (console)"`
	KeyID     int64           `json:"key_id" jsonschema:"the key that made the call; 0 for a change made on the console"`
	Tool      string          `json:"tool" jsonschema:"the operation called, by its tool's name"`
	Arguments json.RawMessage `json:"arguments" jsonschema:"its arguments, those the tool takes"`
	Result    string          `json:"result" jsonschema:"what the call did, or why it failed"`
	IsError   bool            `json:"is_error" jsonschema:"whether the call failed"`
	CreatedAt string          `json:"created_at" jsonschema:"when (RFC 3339, UTC)"`
}

// AuditLog is the latest entries of the audit log, newest first.
type AuditLog struct {
	Entries []AuditEntry `json:"entries" jsonschema:"newest first"`
}

// audit lists the faucet's changes, newest first.
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
		via, by := "tool_server", e.KeyPrefix
		if e.KeyID == 0 {
			via, by = "console", e.Username
		}
		data.Entries[i] = AuditEntry{ID: e.ID, Via: via, By: by, KeyID: e.KeyID, Tool: e.Tool, Arguments: e.Arguments,
			Result: e.Result, IsError: e.IsError, CreatedAt: reply.Timestamp(e.CreatedAt)}
	}
	return data, ok, nil
}

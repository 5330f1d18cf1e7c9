package sqlstore

import (
	"context"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The store's part for accounts, sessions and the security log (D10, D15).

// microsOrZero stores an unset time as 0, which reads back as the zero time.
func microsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

func fromMicrosOrZero(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return fromMicros(us)
}

func (q *querier) UserSetPassword(ctx context.Context, p *store.UserSetPasswordParams) error {
	return q.execOne(ctx, q.q.UserSetPassword, p.ID, p.PasswordHash)
}

func (q *querier) UserSetEmail(ctx context.Context, p *store.UserSetEmailParams) error {
	return q.execOne(ctx, q.q.UserSetEmail, p.ID, p.Email, p.Verified)
}

func (q *querier) UserSetOperator(ctx context.Context, p *store.UserSetOperatorParams) error {
	return q.execOne(ctx, q.q.UserSetOperator, p.ID, p.Operator)
}

func (q *querier) UserSetTOTP(ctx context.Context, p *store.UserSetTOTPParams) error {
	return q.execOne(ctx, q.q.UserSetTOTP, p.ID, p.Secret, p.Enabled)
}

func (q *querier) UserAcceptTOTPStep(ctx context.Context, p *store.UserAcceptTOTPStepParams) error {
	return q.execOne(ctx, q.q.UserAcceptTOTPStep, p.ID, p.Step)
}

func scanSession(scan func(dest ...any) error) (*drip.Session, error) {
	var s drip.Session
	var created, seen, expires, verified, revoked int64
	if err := scan(&s.ID, &s.UserID, &created, &seen, &expires, &verified, &s.IP, &s.UserAgent, &revoked); err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	s.VerifiedAt, s.RevokedAt = fromMicrosOrZero(verified), fromMicrosOrZero(revoked)
	return &s, nil
}

func (q *querier) SessionGet(ctx context.Context, tokenHash string) (*drip.Session, error) {
	s, err := scanSession(q.c.QueryRow(ctx, q.q.SessionGet.sql, tokenHash).Scan)
	return s, q.fail(q.q.SessionGet, err)
}

func (q *querier) SessionListByUser(ctx context.Context, p *store.SessionListByUserParams) ([]drip.Session, error) {
	var out []drip.Session
	err := q.list(ctx, q.q.SessionListByUser, []any{p.UserID, micros(p.At)}, func(r Rows) error {
		s, err := scanSession(r.Scan)
		if err != nil {
			return err
		}
		out = append(out, *s)
		return nil
	})
	return out, err
}

func (q *querier) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.SessionCreate, []any{p.TokenHash, p.UserID, micros(p.CreatedAt), micros(p.ExpiresAt),
		microsOrZero(p.VerifiedAt), p.IP, p.UserAgent}, &id)
	return id, err
}

func (q *querier) SessionTouch(ctx context.Context, p *store.SessionTouchParams) error {
	_, err := q.exec(ctx, q.q.SessionTouch, p.ID, micros(p.At))
	return err
}

func (q *querier) SessionRenew(ctx context.Context, p *store.SessionRenewParams) error {
	return q.execOne(ctx, q.q.SessionRenew, p.ID, p.NewTokenHash, microsOrZero(p.VerifiedAt))
}

func (q *querier) SessionRevoke(ctx context.Context, p *store.SessionRevokeParams) error {
	return q.execOne(ctx, q.q.SessionRevoke, p.UserID, p.ID, micros(p.At))
}

func (q *querier) SessionRevokeByUser(ctx context.Context, p *store.SessionRevokeByUserParams) (int64, error) {
	return q.exec(ctx, q.q.SessionRevokeByUser, p.UserID, p.ExceptID, micros(p.At))
}

func (q *querier) AccountTokenCreate(ctx context.Context, p *store.AccountTokenCreateParams) error {
	_, err := q.exec(ctx, q.q.AccountTokenCreate, p.TokenHash, p.UserID, string(p.Kind), p.NewEmail,
		micros(p.CreatedAt), micros(p.ExpiresAt))
	return err
}

func (q *querier) AccountTokenUse(ctx context.Context, p *store.AccountTokenUseParams) (*drip.AccountToken, error) {
	var t drip.AccountToken
	var kind string
	var created, expires, used int64
	err := q.scanRow(ctx, q.q.AccountTokenUse, []any{p.TokenHash, string(p.Kind), micros(p.At)},
		&t.UserID, &kind, &t.NewEmail, &created, &expires, &used)
	if err != nil {
		return nil, err
	}
	t.Kind = drip.AccountTokenKind(kind)
	t.CreatedAt, t.ExpiresAt, t.UsedAt = fromMicros(created), fromMicros(expires), fromMicros(used)
	return &t, nil
}

func (q *querier) RecoveryCodesReplace(ctx context.Context, p *store.RecoveryCodesReplaceParams) error {
	if _, err := q.exec(ctx, q.q.RecoveryCodesDelete, p.UserID); err != nil {
		return err
	}
	for _, h := range p.Hashes {
		if _, err := q.exec(ctx, q.q.RecoveryCodeInsert, p.UserID, h); err != nil {
			return err
		}
	}
	return nil
}

func (q *querier) RecoveryCodeUse(ctx context.Context, p *store.RecoveryCodeUseParams) error {
	return q.execOne(ctx, q.q.RecoveryCodeUse, p.UserID, p.Hash, micros(p.At))
}

func (q *querier) RecoveryCodesRemaining(ctx context.Context, userID int64) (int64, error) {
	var n int64
	err := q.scanRow(ctx, q.q.RecoveryCodesRemaining, []any{userID}, &n)
	return n, err
}

func (q *querier) SecurityLogAdd(ctx context.Context, e *drip.SecurityEvent) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.SecurityLogAdd, []any{e.UserID, e.Kind, e.IP, e.Detail, micros(e.CreatedAt)}, &id)
	return id, err
}

func (q *querier) SecurityLogList(ctx context.Context, p *store.SecurityLogListParams) ([]drip.SecurityEvent, error) {
	var out []drip.SecurityEvent
	err := q.list(ctx, q.q.SecurityLogList, []any{p.UserID, p.Limit}, func(r Rows) error {
		var e drip.SecurityEvent
		var created int64
		if err := r.Scan(&e.ID, &e.UserID, &e.Kind, &e.IP, &e.Detail, &created); err != nil {
			return err
		}
		e.CreatedAt = fromMicros(created)
		out = append(out, e)
		return nil
	})
	return out, err
}

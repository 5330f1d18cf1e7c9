package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

func (q *querier) KeyCreate(ctx context.Context, k *drip.Key, hash string) (int64, error) {
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	ipJSON, err := json.Marshal(drip.PrefixStrings(k.IPWhitelist))
	if err != nil {
		return 0, err
	}
	var expires any
	if k.ExpiresAt != nil {
		expires = micros(*k.ExpiresAt)
	}
	var id int64
	err = q.scanRow(ctx, q.q.KeyCreate, []any{k.FaucetID, k.Prefix, hash, strings.Join(scopes, ","), expires,
		string(ipJSON), k.DailyUSDCapMicros, micros(k.CreatedAt)}, &id)
	return id, err
}

// scanKey reads one row of KeyColumns.
func scanKey(scan func(dest ...any) error) (*drip.Key, error) {
	var k drip.Key
	var scopes, ips string
	var expires, revoked, lastUsed *int64
	var created int64
	if err := scan(&k.ID, &k.FaucetID, &k.Prefix, &scopes, &expires, &ips, &k.DailyUSDCapMicros, &revoked, &created, &lastUsed); err != nil {
		return nil, err
	}
	for _, s := range strings.Split(scopes, ",") {
		k.Scopes = append(k.Scopes, drip.Scope(s))
	}
	var ipList []string
	if err := json.Unmarshal([]byte(ips), &ipList); err != nil {
		return nil, fmt.Errorf("key %d: ip_whitelist: %w", k.ID, err)
	}
	for _, s := range ipList {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("key %d: ip_whitelist: %w", k.ID, err)
		}
		k.IPWhitelist = append(k.IPWhitelist, p)
	}
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = optionalTime(expires), optionalTime(revoked), optionalTime(lastUsed)
	k.CreatedAt = fromMicros(created)
	return &k, nil
}

func optionalTime(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := fromMicros(*us)
	return &t
}

func (q *querier) getKey(ctx context.Context, sql stmt, args ...any) (*drip.Key, error) {
	return scanKey(func(dest ...any) error { return q.scanRow(ctx, sql, args, dest...) })
}

func (q *querier) KeyGetByID(ctx context.Context, id int64) (*drip.Key, error) {
	return q.getKey(ctx, q.q.KeyGetByID, id)
}

func (q *querier) KeyGetByHash(ctx context.Context, hash string) (*drip.Key, error) {
	return q.getKey(ctx, q.q.KeyGetByHash, hash)
}

func (q *querier) KeyListByFaucet(ctx context.Context, faucetID int64) ([]drip.Key, error) {
	var out []drip.Key
	err := q.list(ctx, q.q.KeyListByFaucet, []any{faucetID}, func(r Rows) error {
		k, err := scanKey(r.Scan)
		if err == nil {
			out = append(out, *k)
		}
		return err
	})
	return out, err
}

func (q *querier) KeyRevoke(ctx context.Context, id int64, at time.Time) error {
	return q.execOne(ctx, q.q.KeyRevoke, id, micros(at))
}

// Package key mints, lists, revokes and authenticates v2 API keys (D14):
// scoped, optionally expiring, optionally IP-restricted, and for send keys
// optionally capped in USD per day. A key is shown once and stored as a
// hash; keys are never cached, so a revocation holds at once on every node.
package key

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/store"
)

// Service manages v2 keys.
type Service struct {
	store store.Store
	now   func() time.Time
	// byHash serves Authenticate from memory (D63); nil until UseCache.
	byHash *gencache.Cache[string, *drip.Key]
	// touched is when this node last wrote each key's last use, which a
	// cached key does not show.
	mu      sync.Mutex
	touched map[int64]time.Time
}

// UseCache serves Authenticate's key from memory while gen says no key
// has changed (D63).
func (s *Service) UseCache(gen *gencache.Generation) {
	s.byHash = gencache.New[string, *drip.Key](gen, gencache.Keys, 10000)
}

func NewService(st store.Store, now func() time.Time) *Service {
	return &Service{store: st, now: now}
}

// MintParams describe a new key.
type MintParams struct {
	FaucetID    int64
	Scopes      []drip.Scope
	ExpiresIn   time.Duration // 0: never expires
	IPWhitelist []netip.Prefix
	// DailyUSDCapMicros caps a send key's paid sends per UTC day, in
	// millionths of a dollar (D36); 0: no cap. Only send keys take one.
	DailyUSDCapMicros int64
}

// maxLifetime bounds an expiry, so a mistyped duration cannot mint a key
// that effectively never expires while looking as if it did.
const maxLifetime = 10 * 365 * 24 * time.Hour

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// random returns n characters of lower-case base32 (5 random bits each).
func random(n int) string {
	b := make([]byte, (n*5+7)/8)
	_, _ = rand.Read(b)
	return strings.ToLower(b32.EncodeToString(b))[:n]
}

// Mint creates a key and returns it with its secret, "drip_<8>_<32>":
// the prefix identifies the key, the 160 random bits after it are the
// secret. The secret is shown this once and stored only as a hash.
func (s *Service) Mint(ctx context.Context, p MintParams) (*drip.Key, string, error) {
	if len(p.Scopes) == 0 {
		return nil, "", drip.Errorf(drip.CodeInvalid, "A key needs at least one scope: read, send, manage or admin.")
	}
	if p.ExpiresIn < 0 || p.ExpiresIn > maxLifetime {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid expiry: between 1 second and 10 years, or none.")
	}
	if len(p.IPWhitelist) > 100 {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Invalid IP whitelist: at most 100 entries.")
	}
	k := &drip.Key{FaucetID: p.FaucetID, Scopes: p.Scopes, IPWhitelist: p.IPWhitelist,
		DailyUSDCapMicros: p.DailyUSDCapMicros, CreatedAt: s.now()}
	if p.DailyUSDCapMicros < 0 || (p.DailyUSDCapMicros > 0 && !k.Has(drip.ScopeSend)) {
		return nil, "", drip.Errorf(drip.CodeInvalid, "A daily USD cap is positive and only for keys with the send scope.")
	}
	if _, err := s.store.FaucetGetByID(ctx, p.FaucetID); errors.Is(err, store.ErrNotFound) {
		return nil, "", drip.Errorf(drip.CodeNotFound, "No faucet %d.", p.FaucetID)
	} else if err != nil {
		return nil, "", err
	}
	if p.ExpiresIn > 0 {
		at := k.CreatedAt.Add(p.ExpiresIn)
		k.ExpiresAt = &at
	}
	for attempt := 0; ; attempt++ {
		k.Prefix = "drip_" + random(8)
		secret := k.Prefix + "_" + random(32)
		err := s.store.Transact(ctx, func(tx store.Tx) error {
			var err error
			k.ID, err = tx.KeyCreate(ctx, k, faucet.HashKey(secret))
			return err
		})
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			continue // a prefix taken already: 40 bits rarely collide, but can
		}
		if err != nil {
			return nil, "", err
		}
		return k, secret, nil
	}
}

// List returns the faucet's keys, revoked ones included, oldest first.
func (s *Service) List(ctx context.Context, faucetID int64) ([]drip.Key, error) {
	return s.store.KeyListByFaucet(ctx, faucetID)
}

// Revoke kills a key at once and returns it as revoked.
func (s *Service) Revoke(ctx context.Context, id int64) (*drip.Key, error) {
	err := s.store.Transact(ctx, func(tx store.Tx) error { return tx.KeyRevoke(ctx, id, s.now()) })
	if errors.Is(err, store.ErrNotFound) {
		return nil, drip.Errorf(drip.CodeNotFound, "No live key %d.", id)
	}
	if err != nil {
		return nil, err
	}
	return s.store.KeyGetByID(ctx, id)
}

// Authenticate returns the key of a Bearer secret used from callerIP:
// unknown, revoked or expired keys are CodeUnauthenticated, a caller outside
// the key's IP whitelist CodeForbidden. Scopes are the caller's to check.
func (s *Service) Authenticate(ctx context.Context, secret string, callerIP netip.Addr) (*drip.Key, error) {
	if secret == "" {
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Missing key: send Authorization: Bearer <key>.")
	}
	if len(secret) > 128 {
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Invalid key.")
	}
	k, err := s.byHashOrStore(ctx, faucet.HashKey(secret))
	now := s.now()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Invalid key.")
	case err != nil:
		return nil, err
	case k.RevokedAt != nil:
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Key revoked.")
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Key expired.")
	case !k.AllowsIP(callerIP):
		return nil, drip.Errorf(drip.CodeForbidden, "Your IP address is not whitelisted for this key.")
	}
	if s.touch(k, now) {
		if err := s.store.Transact(ctx, func(tx store.Tx) error { return tx.KeyTouch(ctx, k.ID, now) }); err != nil {
			return nil, err
		}
		k.LastUsedAt = &now
	}
	return k, nil
}

// byHashOrStore is the key of hash, from memory when cached, as a copy the
// caller may change.
func (s *Service) byHashOrStore(ctx context.Context, hash string) (*drip.Key, error) {
	load := func(ctx context.Context) (*drip.Key, error) { return s.store.KeyGetByHash(ctx, hash) }
	if s.byHash == nil {
		return load(ctx)
	}
	k, err := s.byHash.Get(ctx, hash, load)
	if err != nil {
		return nil, err
	}
	cp := *k
	return &cp, nil
}

// touch reports whether k's last use is due to be written at now, and if
// so counts it written: the stored last use, or this node's later write.
func (s *Service) touch(k *drip.Key, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, ok := s.touched[k.ID]
	if k.LastUsedAt != nil && (!ok || k.LastUsedAt.After(last)) {
		last, ok = *k.LastUsedAt, true
	}
	if ok && now.Sub(last) < TouchEvery {
		k.LastUsedAt = &last
		return false
	}
	if s.touched == nil || len(s.touched) >= 10000 {
		s.touched = map[int64]time.Time{}
	}
	s.touched[k.ID] = now
	return true
}

// TouchEvery is how often a key's last use is written: the owner's list
// shows it to the minute, and a busy key then adds at most one write a
// minute, not one per request.
const TouchEvery = time.Minute

// Bearer is the key of an "Authorization: Bearer <key>" header (the scheme
// in any case), or "" when there is none: how v2 and the tool server take
// their key (spec 5).
func Bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// ParseUSD reads a dollar amount ("25", "25.00", "0.000001") as millionths
// of a dollar, exactly: at most 6 decimals, positive, no sign or exponent.
func ParseUSD(s string) (int64, error) {
	bad := drip.Errorf(drip.CodeInvalid, "Invalid USD amount %q: a positive number with at most 6 decimals, such as 25.00.", s)
	whole, frac, _ := strings.Cut(strings.TrimSpace(s), ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, bad
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/1_000_000-1 {
		return 0, bad
	}
	f, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	micros := w*1_000_000 + f
	if micros <= 0 {
		return 0, bad
	}
	return micros, nil
}

// FormatUSD writes millionths of a dollar as a decimal ("25.5").
func FormatUSD(micros int64) string {
	s := strconv.FormatInt(micros/1_000_000, 10)
	if f := micros % 1_000_000; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(f+1_000_000, 10)[1:], "0")
	}
	return s
}

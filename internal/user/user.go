// Package user is the registry of users: creation (D10), wallet addresses,
// suspension, the payout_user_hash (D12) and the resolution of a payout
// destination to a user (D11).
package user

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/store"
)

// hashSecretName names the server secret keying payout_user_hash. It lives
// in the database so every node and every admin command derives the same hash.
const hashSecretName = "payout_user_hash_key"

// Registry creates, finds and resolves users.
type Registry struct {
	store  store.Store
	secret []byte
	now    func() time.Time
	// resolved serves Resolve from memory (D63); nil until UseCache.
	resolved *gencache.Cache[destination, *drip.User]
}

// destination is what Resolve is asked.
type destination struct{ to, coin string }

// UseCache serves Resolve from memory while gen says no user and no
// linked address has changed (D63).
func (r *Registry) UseCache(gen *gencache.Generation) {
	r.resolved = gencache.New[destination, *drip.User](gen, gencache.Recipients, 100000)
}

// NewRegistry loads (creating on first use) the payout-hash secret.
func NewRegistry(ctx context.Context, st store.Store, now func() time.Time) (*Registry, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	err := st.Transact(ctx, func(tx store.Tx) error { return tx.SecretInit(ctx, hashSecretName, fresh) })
	if err != nil {
		return nil, err
	}
	secret, err := st.SecretGet(ctx, hashSecretName)
	if err != nil {
		return nil, err
	}
	return &Registry{store: st, secret: secret, now: now}, nil
}

// PayoutHash is D12: the first 20 bytes of HMAC-SHA256(server secret, user
// id), in lowercase hex. Stable per user, not reversible without the secret.
func (r *Registry) PayoutHash(userID int64) string {
	m := hmac.New(sha256.New, r.secret)
	m.Write([]byte(itoa(userID)))
	return hex.EncodeToString(m.Sum(nil)[:20])
}

var usernameRE = regexp.MustCompile(`^[a-z0-9_]{3,32}$`)

// ValidUsername reports whether s is a username D10 allows.
func ValidUsername(s string) bool { return usernameRE.MatchString(s) }

// CreateParams are a new user's details.
type CreateParams struct {
	Username string
	Email    string
	Password string // optional; stored as argon2id
	Verified bool   // email already verified
	Operator bool   // may use the operator pages
}

// Create registers a user with a wallet account and a payout hash.
func (r *Registry) Create(ctx context.Context, p CreateParams) (*drip.User, error) {
	username := strings.TrimSpace(p.Username)
	if !usernameRE.MatchString(username) {
		return nil, drip.Errorf(drip.CodeInvalid, "Invalid username: 3-32 characters of a-z, 0-9 and _.")
	}
	email, err := NormalizeEmail(p.Email)
	if err != nil {
		return nil, err
	}
	var hash string
	if p.Password != "" {
		if len(p.Password) < 8 {
			return nil, drip.Errorf(drip.CodeInvalid, "Invalid password: at least 8 characters.")
		}
		hash = HashPassword(p.Password)
	}
	var id int64
	now := r.now()
	err = r.store.Transact(ctx, func(tx store.Tx) error {
		account, err := tx.AccountCreate(ctx, "user", now)
		if err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{
			AccountID: account, Username: username, Email: email, PasswordHash: hash,
			EmailVerified: p.Verified, CreatedAt: now,
		})
		if err != nil {
			return err
		}
		if err := tx.UserSetPayoutHash(ctx, id, r.PayoutHash(id)); err != nil {
			return err
		}
		if !p.Operator {
			return nil
		}
		return setOperator(ctx, tx, id, true, now)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, drip.Errorf(drip.CodeConflict, "A user with this username or email already exists.")
	}
	if err != nil {
		return nil, err
	}
	return r.store.UserGetByID(ctx, id)
}

// NormalizeEmail checks an email address and returns it lower-cased, the
// form in which emails are stored and looked up.
func NormalizeEmail(s string) (string, error) {
	if len(strings.TrimSpace(s)) > 254 { // RFC 5321's limit on a forward path
		return "", drip.Errorf(drip.CodeInvalid, "Invalid email address: at most 254 characters.")
	}
	a, err := mail.ParseAddress(strings.TrimSpace(s))
	if err != nil || a.Address != strings.TrimSpace(s) || !strings.Contains(a.Address, "@") {
		return "", drip.Errorf(drip.CodeInvalid, "Invalid email address.")
	}
	return strings.ToLower(a.Address), nil
}

// ByUsername finds a user by username.
func (r *Registry) ByUsername(ctx context.Context, username string) (*drip.User, error) {
	u, err := r.store.UserGetByUsername(ctx, strings.ToLower(strings.TrimSpace(username)))
	if errors.Is(err, store.ErrNotFound) {
		return nil, drip.Errorf(drip.CodeNotFound, "No user named %q.", username)
	}
	return u, err
}

// LinkAddress records a wallet address of the user for coin; a payout to
// that address for that coin goes to the user (D11).
func (r *Registry) LinkAddress(ctx context.Context, u *drip.User, coin, address string) error {
	address = strings.TrimSpace(address)
	if address == "" || len(address) > 128 || strings.ContainsAny(address, " \t\r\n@") {
		return drip.Errorf(drip.CodeInvalid, "Invalid address: 1-128 characters, no spaces or @.")
	}
	err := r.store.Transact(ctx, func(tx store.Tx) error {
		return tx.UserAddressAdd(ctx, u.ID, coin, address, r.now())
	})
	if errors.Is(err, store.ErrConflict) {
		return drip.Errorf(drip.CodeConflict, "This %s address is already linked to a user.", coin)
	}
	return err
}

// UnlinkAddress removes a wallet address the user linked for coin: payouts
// to it no longer reach the user (D11), and another user may link it.
func (r *Registry) UnlinkAddress(ctx context.Context, u *drip.User, coin, address string) error {
	err := r.store.Transact(ctx, func(tx store.Tx) error { return tx.UserAddressRemove(ctx, u.ID, coin, address) })
	if errors.Is(err, store.ErrNotFound) {
		return drip.Errorf(drip.CodeNotFound, "This %s address is not linked to your account.", coin)
	}
	return err
}

// SetStatus suspends or reactivates a user.
func (r *Registry) SetStatus(ctx context.Context, u *drip.User, status drip.UserStatus) error {
	return r.store.Transact(ctx, func(tx store.Tx) error { return tx.UserSetStatus(ctx, u.ID, status) })
}

// MarkVerified marks the user's current email verified, as an operator
// may when the emailed link cannot reach them.
func (r *Registry) MarkVerified(ctx context.Context, u *drip.User) error {
	return r.store.Transact(ctx, func(tx store.Tx) error { return tx.UserSetEmailVerified(ctx, u.ID) })
}

// MaxSearch is the most users one page of Search returns.
const MaxSearch = 100

// Search returns a page of the users whose username, email or
// payout_user_hash contains query, in any case (every user when it is
// empty), in the order they signed up: limit (1 to MaxSearch) from the
// offset-th.
func (r *Registry) Search(ctx context.Context, query string, limit, offset int) ([]drip.User, error) {
	query = strings.TrimSpace(query)
	if len(query) > 320 {
		return nil, drip.Errorf(drip.CodeInvalid, "Invalid search: at most 320 characters.")
	}
	return r.store.UserSearch(ctx, &store.UserSearchParams{Query: query, Limit: min(max(limit, 1), MaxSearch), Offset: max(offset, 0)})
}

// SetOperator grants or withdraws the operator role, and records it in
// the user's security log.
func (r *Registry) SetOperator(ctx context.Context, u *drip.User, operator bool) error {
	return r.store.Transact(ctx, func(tx store.Tx) error { return setOperator(ctx, tx, u.ID, operator, r.now()) })
}

func setOperator(ctx context.Context, tx store.Tx, id int64, operator bool, at time.Time) error {
	if err := tx.UserSetOperator(ctx, &store.UserSetOperatorParams{ID: id, Operator: operator}); err != nil {
		return err
	}
	kind := "operator_granted"
	if !operator {
		kind = "operator_withdrawn"
	}
	_, err := tx.SecurityLogAdd(ctx, &drip.SecurityEvent{UserID: id, Kind: kind, Detail: "by drip admin", CreatedAt: at})
	return err
}

var payoutHashRE = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// Resolve finds the user a destination names (D11), trying in order a
// payout_user_hash, an email, a username, and a wallet address linked for
// coin. It returns a CodeRecipientUnknown error when no user matches.
// Whether the user may be paid is the caller's question (drip.User.Payable).
// The user comes without credentials (password hash, TOTP) or operator
// flag: ask UserGetByID for those.
func (r *Registry) Resolve(ctx context.Context, to, coin string) (*drip.User, error) {
	to = strings.TrimSpace(to)
	if r.resolved == nil {
		return r.resolve(ctx, to, coin)
	}
	u, err := r.resolved.Get(ctx, destination{to, coin}, func(ctx context.Context) (*drip.User, error) { return r.resolve(ctx, to, coin) })
	if err != nil {
		return nil, err
	}
	cp := *u
	return &cp, nil
}

// resolve is Resolve from the database, without the user's credentials:
// a destination is no login, and what the cache keeps must not go stale
// when they change (their columns do not raise the generation, D63).
func (r *Registry) resolve(ctx context.Context, to, coin string) (*drip.User, error) {
	u, err := r.resolveWithCredentials(ctx, to, coin)
	if err != nil {
		return nil, err
	}
	u.PasswordHash, u.TOTPSecret, u.TOTPLastStep, u.Operator = "", "", 0, false
	return u, nil
}

func (r *Registry) resolveWithCredentials(ctx context.Context, to, coin string) (*drip.User, error) {
	u, err := r.byIdentity(ctx, to)
	if !errors.Is(err, store.ErrNotFound) {
		return u, err
	}
	u, err = r.store.UserGetByAddress(ctx, coin, to)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notPayable()
	}
	return u, err
}

// ResolveAnyCoin is Resolve for a destination given without a coin (a v2
// address check that names none, issue 14): a wallet address then matches
// in whichever coin it is linked for, which it returns ("" for the other
// kinds of destination). An address that different users linked for
// different coins is ambiguous: CodeInvalid, asking for the currency.
func (r *Registry) ResolveAnyCoin(ctx context.Context, to string) (*drip.User, string, error) {
	to = strings.TrimSpace(to)
	u, err := r.byIdentity(ctx, to)
	if !errors.Is(err, store.ErrNotFound) {
		return u, "", err
	}
	owners, err := r.store.UserAddressOwners(ctx, to)
	if err != nil {
		return nil, "", err
	}
	if len(owners) == 0 {
		return nil, "", notPayable()
	}
	for _, o := range owners[1:] {
		if o.UserID != owners[0].UserID {
			return nil, "", drip.Errorf(drip.CodeInvalid, "This address is linked for several coins by different users: give the currency.").WithV1Status(456)
		}
	}
	u, err = r.store.UserGetByID(ctx, owners[0].UserID)
	return u, owners[0].Coin, err
}

// byIdentity finds the user a payout_user_hash, an email or a username
// names: store.ErrNotFound when none does (a wallet address may still).
func (r *Registry) byIdentity(ctx context.Context, to string) (*drip.User, error) {
	if to == "" || len(to) > 320 {
		return nil, notPayable()
	}
	lookups := make([]func() (*drip.User, error), 0, 3)
	if payoutHashRE.MatchString(to) {
		lookups = append(lookups, func() (*drip.User, error) { return r.store.UserGetByPayoutHash(ctx, strings.ToLower(to)) })
	}
	if strings.Contains(to, "@") {
		lookups = append(lookups, func() (*drip.User, error) { return r.store.UserGetByEmail(ctx, strings.ToLower(to)) })
	} else if usernameRE.MatchString(strings.ToLower(to)) {
		lookups = append(lookups, func() (*drip.User, error) { return r.store.UserGetByUsername(ctx, strings.ToLower(to)) })
	}
	for _, lookup := range lookups {
		u, err := lookup()
		if !errors.Is(err, store.ErrNotFound) {
			return u, err
		}
	}
	return nil, store.ErrNotFound
}

func notPayable() error {
	return drip.Errorf(drip.CodeRecipientUnknown, "Recipient not payable: no user owns this destination.")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

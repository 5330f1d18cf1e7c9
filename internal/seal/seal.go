// Package seal encrypts the secrets drip must read back in the clear to
// use them, and so cannot store hashed: TOTP secrets (D10), which the
// second factor recomputes codes from, and webhook signing secrets (D51),
// which sign every delivery.
//
// A sealed value is AES-256-GCM under a key derived (HKDF-SHA256) from a
// root secret kept in the database, one root per Purpose, created on
// first use. The purpose is also in the derivation, so a value sealed for
// one purpose never opens as another's, and each value is bound to the
// row it belongs to (a user, an endpoint): copied to another row, it does
// not open. The database alone, without the roots' table, gives nothing
// away; neither does a log, since nothing here logs.
package seal

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/dripfaucet/drip/internal/store"
)

// Purpose says what a Key seals; keys of different purposes never open
// each other's values.
type Purpose string

// The purposes drip seals secrets for.
const (
	TOTP     Purpose = "totp"     // TOTP secrets, bound to "user:<id>" (D10)
	Webhook  Purpose = "webhook"  // webhook signing secrets, bound to the endpoint (D51)
	Merchant Purpose = "merchant" // merchant payment tokens, bound to the checkout (D56)
)

// ErrOpen is wrapped by Open when a value does not open: another key,
// another purpose, another binding, or altered bytes.
var ErrOpen = errors.New("seal: sealed value does not open")

// rootName is the name of the purpose's root secret in the database
// ("totp_seal_key" for TOTP, as account stored it before this package).
func (p Purpose) rootName() string { return string(p) + "_seal_key" }

// info is the HKDF info of the purpose's key; TOTP's is the one account
// derived its key with before this package, so stored secrets still open.
func (p Purpose) info() string { return "drip " + string(p) + " secret seal v1" }

// Key seals and opens the values of one purpose. It is safe for
// concurrent use.
type Key struct {
	purpose Purpose
	aead    cipher.AEAD
}

// Load returns the purpose's key, creating its root secret (32 random
// bytes) in st on first use. Every node of one database loads the same key.
func Load(ctx context.Context, st store.Store, p Purpose) (*Key, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	name := p.rootName()
	if err := st.Transact(ctx, func(tx store.Tx) error { return tx.SecretInit(ctx, name, fresh) }); err != nil {
		return nil, fmt.Errorf("seal: create the %s root secret: %w", p, err)
	}
	root, err := st.SecretGet(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("seal: read the %s root secret: %w", p, err)
	}
	return NewKey(root, p)
}

// NewKey derives the purpose's key from root. Load is the way to get one
// in the service; NewKey is for tests and tools holding the root.
func NewKey(root []byte, p Purpose) (*Key, error) {
	if len(root) < 16 {
		return nil, fmt.Errorf("seal: the %s root secret has %d bytes, want at least 16", p, len(root))
	}
	if p == "" {
		return nil, errors.New("seal: a purpose is required")
	}
	k, err := hkdf.Key(sha256.New, root, nil, p.info(), 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Key{purpose: p, aead: aead}, nil
}

// Purpose is what k seals.
func (k *Key) Purpose() Purpose { return k.purpose }

// Seal encrypts plain for the row named by binding ("user:7",
// "endpoint:12"), under a fresh random nonce, as base64 text for a column.
func (k *Key) Seal(plain []byte, binding string) (string, error) {
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.aead.Seal(nonce, nonce, plain, []byte(binding))
	return base64.StdEncoding.EncodeToString(out), nil
}

// Open decrypts what Seal returned for the same binding. Any other key,
// purpose or binding, or an altered value, is an error wrapping ErrOpen
// that says nothing of the value.
func (k *Key) Open(sealed, binding string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("%w: %s value for %s is not base64", ErrOpen, k.purpose, binding)
	}
	n := k.aead.NonceSize()
	if len(raw) < n+k.aead.Overhead() {
		return nil, fmt.Errorf("%w: %s value for %s is too short", ErrOpen, k.purpose, binding)
	}
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], []byte(binding))
	if err != nil {
		return nil, fmt.Errorf("%w: %s value for %s", ErrOpen, k.purpose, binding)
	}
	return plain, nil
}

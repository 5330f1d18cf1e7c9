package seal_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/seal"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

var root = []byte("0123456789abcdef0123456789abcdef")

func newKey(t *testing.T, root []byte, p seal.Purpose) *seal.Key {
	t.Helper()
	k, err := seal.NewKey(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSealRoundTrip: a value opens under its key and binding, each
// sealing uses a fresh nonce, and the plain value is not in the sealed one.
func TestSealRoundTrip(t *testing.T) {
	t.Parallel()
	k := newKey(t, root, seal.Webhook)
	secret := []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	sealed, err := k.Seal(secret, "endpoint:12")
	if err != nil {
		t.Fatal(err)
	}
	again, err := k.Seal(secret, "endpoint:12")
	if err != nil {
		t.Fatal(err)
	}
	if sealed == again {
		t.Error("two sealings of one value are equal; want a fresh nonce each time")
	}
	if strings.Contains(sealed, string(secret)) || strings.Contains(sealed, "MfKQ9r8G") {
		t.Errorf("sealed value %q shows the secret", sealed)
	}
	for _, s := range []string{sealed, again} {
		got, err := k.Open(s, "endpoint:12")
		if err != nil || !bytes.Equal(got, secret) {
			t.Errorf("Open = %q, %v; want the secret", got, err)
		}
	}
	// Another Key from the same root and purpose (another node) opens it.
	if got, err := newKey(t, root, seal.Webhook).Open(sealed, "endpoint:12"); err != nil || !bytes.Equal(got, secret) {
		t.Errorf("Open on another node = %q, %v", got, err)
	}
}

// TestSealRefusals: another purpose, root or binding, or altered bytes
// do not open, and the error tells nothing of the value.
func TestSealRefusals(t *testing.T) {
	t.Parallel()
	totp := newKey(t, root, seal.TOTP)
	webhook := newKey(t, root, seal.Webhook)
	secret := []byte("JBSWY3DPEHPK3PXP")
	sealed, err := totp.Seal(secret, "user:7")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1 // a bit of the ciphertext, the value still well-formed base64
	altered := base64.StdEncoding.EncodeToString(raw)

	for _, tc := range []struct {
		name    string
		key     *seal.Key
		sealed  string
		binding string
	}{
		{"a TOTP secret opened as a webhook secret", webhook, sealed, "user:7"},
		{"another root secret", newKey(t, []byte("another root secret, 32 bytes..."), seal.TOTP), sealed, "user:7"},
		{"another user", totp, sealed, "user:8"},
		{"no binding", totp, sealed, ""},
		{"a bit flipped", totp, altered, "user:7"},
		{"truncated", totp, sealed[:20], "user:7"},
		{"not base64", totp, "!!" + sealed, "user:7"},
		{"empty", totp, "", "user:7"},
	} {
		got, err := tc.key.Open(tc.sealed, tc.binding)
		if !errors.Is(err, seal.ErrOpen) || got != nil {
			t.Errorf("%s: Open = %q, %v; want nothing and ErrOpen", tc.name, got, err)
			continue
		}
		if strings.Contains(err.Error(), string(secret)) {
			t.Errorf("%s: error %q shows the secret", tc.name, err)
		}
	}
	if got, err := totp.Open(sealed, "user:7"); err != nil || !bytes.Equal(got, secret) {
		t.Errorf("the untouched value: Open = %q, %v", got, err)
	}
}

// TestSealOpensWhatAccountSealedBefore: a TOTP secret sealed by
// account's own code before this package existed (the value below was
// made by it, root = the test root, user 7) still opens, so no stored
// secret is lost to the move.
func TestSealOpensWhatAccountSealedBefore(t *testing.T) {
	t.Parallel()
	const before = "kmR0+96SKPcT5HfQYqfH9FORC1DJO34OP+7iGdBgjXd0u6GNfNuDbpITT+4="
	got, err := newKey(t, root, seal.TOTP).Open(before, "user:7")
	if err != nil || string(got) != "JBSWY3DPEHPK3PXP" {
		t.Errorf("Open = %q, %v; want JBSWY3DPEHPK3PXP", got, err)
	}
}

// TestSealNewKeyRefusesWeakInput: a short root or no purpose is refused.
func TestSealNewKeyRefusesWeakInput(t *testing.T) {
	t.Parallel()
	if _, err := seal.NewKey([]byte("short"), seal.TOTP); err == nil {
		t.Error("NewKey with a 5-byte root: no error")
	}
	if _, err := seal.NewKey(root, ""); err == nil {
		t.Error("NewKey without a purpose: no error")
	}
}

// TestSealLoad: the root secret is created once per purpose and database,
// so two loads (two nodes) agree, and the purposes' keys differ.
func TestSealLoad(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			st := eng.Open(t)
			ctx := t.Context()
			first, err := seal.Load(ctx, st, seal.Webhook)
			if err != nil {
				t.Fatal(err)
			}
			sealed, err := first.Seal([]byte("whsec_x"), "endpoint:1")
			if err != nil {
				t.Fatal(err)
			}
			second, err := seal.Load(ctx, st, seal.Webhook)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := second.Open(sealed, "endpoint:1"); err != nil || string(got) != "whsec_x" {
				t.Errorf("a second Load opens %q, %v; want whsec_x", got, err)
			}
			totp, err := seal.Load(ctx, st, seal.TOTP)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := totp.Open(sealed, "endpoint:1"); !errors.Is(err, seal.ErrOpen) {
				t.Errorf("the TOTP key opened a webhook secret: %v", err)
			}
			if r, err := st.SecretGet(ctx, "totp_seal_key"); err != nil || len(r) != 32 {
				t.Errorf("TOTP root: %d bytes, %v; want 32 under its old name", len(r), err)
			}
			w, err := st.SecretGet(ctx, "webhook_seal_key")
			if err != nil || len(w) != 32 {
				t.Errorf("webhook root: %d bytes, %v; want 32", len(w), err)
			}
		})
	}
}

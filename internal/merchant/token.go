package merchant

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// tokenBytes is a payment token's randomness: 256 bits (D56).
const tokenBytes = 32

// NewToken makes a payment's single-use verification token (D56) and the
// hash drip stores of it. The token goes to the merchant in the callback
// only; drip keeps nothing that could give it back.
func NewToken() (token, hash string) {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is the stored form of a token: the hex SHA-256 of its text. A
// token has 256 random bits, so a fast hash is enough: nothing can be
// guessed from it, and looking a token up by its hash needs no salt.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// validToken reports whether s has the shape of a token, so that a
// malformed one is answered valid: false without a lookup.
func validToken(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

package user

import (
	"strings"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	valid := map[string]string{"Ann@Example.COM": "ann@example.com", " bob@example.com ": "bob@example.com"}
	for in, want := range valid {
		if got, err := NormalizeEmail(in); err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	long := strings.Repeat("a", 250) + "@example.com"
	for _, in := range []string{"", "ann", "ann@", "Ann <ann@example.com>", "a b@example.com", long} {
		if got, err := NormalizeEmail(in); err == nil {
			t.Errorf("NormalizeEmail(%q) = %q; want an error", in, got)
		}
	}
}

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h := HashPassword("correct horse")
	if !strings.HasPrefix(h, "$argon2id$v=19$") {
		t.Fatalf("hash %q is not PHC argon2id", h)
	}
	if !CheckPassword(h, "correct horse") {
		t.Error("the right password does not check")
	}
	if CheckPassword(h, "correct horse!") || CheckPassword("garbage", "correct horse") {
		t.Error("a wrong password or hash checks")
	}
	if HashPassword("correct horse") == h {
		t.Error("two hashes of one password are equal: no salt")
	}
}

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

// The dummy hash a missed login checks must cost what a real hash costs:
// the same parameters as HashPassword's, or a miss would be told from a
// hit by its time.
func TestDummyHashParameters(t *testing.T) {
	t.Parallel()
	params := func(h string) string {
		parts := strings.Split(h, "$")
		if len(parts) != 6 {
			t.Fatalf("hash %q is not PHC", h)
		}
		return strings.Join(parts[:4], "$")
	}
	if got, want := params(DummyHash), params(HashPassword("x")); got != want {
		t.Errorf("DummyHash has parameters %q, HashPassword %q: regenerate DummyHash", got, want)
	}
	if CheckPassword(DummyHash, "") {
		t.Error("the empty password checks against DummyHash")
	}
}

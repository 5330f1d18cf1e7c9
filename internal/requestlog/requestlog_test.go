package requestlog

import (
	"strings"
	"testing"
)

// TestKeyPrefix: a v2 key's visible prefix, six characters of a long
// key, nothing of a short one, never the whole key.
func TestKeyPrefix(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ key, want string }{
		{"drip_abcdefgh_" + strings.Repeat("x", 32), "drip_abcdefgh"},
		{strings.Repeat("0123456789abcdef", 3), "012345"},
		{"drip_abcdefgh_", ""}, // not a key's shape, and short
		{"drip_abcdefgh", ""},
		{"hunter2", ""},
		{strings.Repeat("k", 23), ""},
		{strings.Repeat("k", 24), "kkkkkk"},
		{"", ""},
	} {
		if got := KeyPrefix(tt.key); got != tt.want {
			t.Errorf("KeyPrefix(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

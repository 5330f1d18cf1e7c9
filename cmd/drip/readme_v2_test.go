package main

import (
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeV2Walkthrough runs the README's v2 curl lines against a real
// drip serve --demo with a key minted by drip admin key mint, as the README
// tells a newcomer to do, and checks each promised status.
func TestReadmeV2Walkthrough(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	mintLine := regexp.MustCompile(`(?m)^go run \./cmd/drip admin (key mint --faucet 1 --scopes [a-z,]+)`).FindStringSubmatch(string(readme))
	if mintLine == nil {
		t.Fatal("README has no key mint line in its v2 walk-through")
	}
	steps := regexp.MustCompile(`(?m)^curl -s "?http://127\.0\.0\.1:8080(/api/v2/[^" ]+)"? -H "Authorization: Bearer \$KEY2"(?: -d '([^']*)')?\s+# status (\d+)\s*$`).
		FindAllStringSubmatch(string(readme), -1)
	if len(steps) < 8 {
		t.Fatalf("README v2 walk-through has %d curl lines; the pattern no longer matches it", len(steps))
	}
	db := []string{"--data-dir", t.TempDir()}
	s := startDemo(t, db...)
	minted := runAdmin(t, db, strings.Fields(mintLine[1])...)
	key, _ := minted["key"].(string)
	if key == "" {
		t.Fatalf("key mint printed no key: %v", minted)
	}
	for _, step := range steps {
		method, body := http.MethodGet, step[2]
		if body != "" {
			method = http.MethodPost
		}
		req, err := http.NewRequest(method, s.base+step[1], strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want, _ := strconv.Atoi(step[3]); resp.StatusCode != want {
			t.Errorf("%s\n  status %d, README promises %d", step[0], resp.StatusCode, want)
		}
	}
	s.stop(t)
}

package console

import (
	"testing"
)

// New recovery codes replace the old ones, with an authenticator code;
// a recovery code, or a wrong code, shows its error next to this form's
// field and changes nothing.
func TestNewRecoveryCodes(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.browser()
	b.post("/login", "identifier", "alice", "password", password)
	secret, old := f.enrol(b)
	page := b.get("/account").want(t, 200, "")
	contains(t, "security page", page.body, `<label for="regen-code">`, `action="/account/recovery-codes"`)

	refused := b.post("/account/recovery-codes", "code", old[0]).want(t, 422, "")
	contains(t, "new codes with a recovery code", refused.body, `id="regen-error">Wrong code: enter a code from your authenticator app`)
	lacks(t, "the other form's field", refused.body, `id="code-error"`)
	contains(t, "after a refusal", b.get("/account").body, "Recovery codes left: <strong>10</strong>")

	fresh := b.post("/account/recovery-codes", "code", f.code(secret)).want(t, 200, "")
	contains(t, "the new codes' page", fresh.body, "New recovery codes: the old ones no longer work.")
	var codes []string
	for _, m := range codesRE.FindAllStringSubmatch(fresh.body, -1) {
		codes = append(codes, m[1])
		f.secret("a recovery code", m[1])
	}
	if len(codes) != 10 {
		t.Fatalf("%d new codes shown, want 10", len(codes))
	}
	lacks(t, "the security page after", b.get("/account").body, codes...)

	b.post("/logout")
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/login/code")
	contains(t, "an old code", b.post("/login/code", "code", old[1]).want(t, 422, "").body, "Wrong code")
	if r := b.post("/login/code", "code", codes[1]); r.StatusCode != 303 {
		t.Errorf("a new code: status %d\n%s", r.StatusCode, r.body)
	}
}

package drip

import "time"

// Session is a web session (D15), found by the SHA-256 of the token in
// its cookie; the token itself is never stored.
type Session struct {
	ID         int64
	UserID     int64
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time // the absolute timeout
	// VerifiedAt is when the second factor was last passed, or, for a user
	// without one, when the password was; zero while a login still waits
	// for its second factor.
	VerifiedAt time.Time
	IP         string
	UserAgent  string
	RevokedAt  time.Time // zero while the session is live
}

// AccountTokenKind is what an emailed single-use link does.
type AccountTokenKind string

const (
	TokenVerifyEmail   AccountTokenKind = "verify_email"
	TokenResetPassword AccountTokenKind = "reset_password"
	TokenChangeEmail   AccountTokenKind = "change_email"
)

// AccountToken is an emailed single-use link, stored by the SHA-256 of
// its token.
type AccountToken struct {
	UserID    int64
	Kind      AccountTokenKind
	NewEmail  string // TokenChangeEmail: the address the link verifies
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero until used
}

// SecurityEvent is one entry of a user's security log, which the user can
// read: logins, failed logins, second-factor and password changes. Its
// Detail never holds a secret.
type SecurityEvent struct {
	ID        int64
	UserID    int64
	Kind      string
	IP        string
	Detail    string
	CreatedAt time.Time
}

package user

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// argon2id parameters (RFC 9106's second recommended option, memory-bound).
const (
	argonTime    = 3
	argonMemory  = 64 * 1024 // KiB
	argonThreads = 2
	argonKeyLen  = 32
)

// DummyHash is an argon2id hash, with HashPassword's parameters, of a
// random password nobody knows. A login that matches no account checks
// its password against it, so a miss takes a hit's time. It is a constant,
// not hashed at start: one hash holds 64 MiB, which the process would keep
// resident long after (issue 16's memory goal).
const DummyHash = "$argon2id$v=19$m=65536,t=3,p=2$5xUz1Zh/6NQBmL2ZtGOjIA$agxLc7Mtq/ekTDD3fSLLBBPcUpV58ZD2oCu9zENOK74"

// hashing bounds how many argon2 computations run at once. Each holds its
// memory parameter (64 MiB) and keeps argonThreads cores busy, so more at
// once than the cores can run only adds memory: a burst of logins queues
// here instead of growing the process by 64 MiB a login.
var hashing = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/argonThreads))

// idKey is argon2.IDKey under the hashing bound.
func idKey(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	hashing <- struct{}{}
	defer func() { <-hashing }()
	return argon2.IDKey(password, salt, time, memory, threads, keyLen)
}

// HashPassword returns the PHC-format argon2id hash of password (D10).
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := idKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches a HashPassword hash.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var mem uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return false
	}
	got := idKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

package account

import (
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// PasswordRules are the rules a new password must meet, worded for the
// sign-up and change-password pages to show before the user submits.
var PasswordRules = []string{
	"At least 10 characters, at most 128.",
	"Not your username or your email address.",
	"Not one of the most common passwords (such as 1234567890 or password123).",
}

// commonPasswords are the most common passwords of 10 or more characters
// in public breach lists; shorter ones fail the length rule already.
var commonPasswords = map[string]bool{}

func init() {
	for _, p := range strings.Fields(`
		1234567890 0987654321 12345678910 123456789a 1234567890a 123123123123
		1111111111 0000000000 11111111111 1q2w3e4r5t 1q2w3e4r5t6y 1qaz2wsx3edc
		qwertyuiop qwerty1234 qwerty12345 qwerty123456 asdfghjkl1 zxcvbnm123
		qazwsxedc123 password12 password123 password1234 passw0rd123 password!!
		iloveyou12 iloveyou123 letmein123 welcome123 welcome1234 administrator
		football123 baseball123 sunshine123 princess123 superman123 trustno1234
		dragon1234 monkey1234 michael123 charlie123 changeme123 abc1234567
		abcdefghij abcd123456 aaaaaaaaaa 1234qwerty qwertyuiop1 starwars123`) {
		commonPasswords[p] = true
	}
}

// CheckPassword applies PasswordRules to a new password of the user with
// this username and email, and says which rule it breaks.
func CheckPassword(password, username, email string) error {
	n := len([]rune(password))
	if n < 10 || n > 128 {
		return drip.Errorf(drip.CodeInvalid, "Invalid password: at least 10 characters, at most 128.")
	}
	lower := strings.ToLower(password)
	if lower == strings.ToLower(username) || lower == strings.ToLower(email) ||
		(email != "" && lower == strings.ToLower(strings.SplitN(email, "@", 2)[0])) {
		return drip.Errorf(drip.CodeInvalid, "Invalid password: it must not be your username or email address.")
	}
	if commonPasswords[lower] || strings.Count(lower, lower[:1]) == len(lower) {
		return drip.Errorf(drip.CodeInvalid, "Invalid password: it is one of the most common passwords; choose another.")
	}
	return nil
}

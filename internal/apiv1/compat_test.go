package apiv1_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestClientsInTheWild drives v1 as the FaucetPay client libraries in use
// send it, changed only in their base URL (issue 14): the PHP class and
// faucetpayjs send the currency in lower case by default, omit it on
// getbalance and checkaddress, send referral as "true" or "false", an
// empty ip_address, multipart bodies, and call /balance. Each behaviour
// gets the reply a FaucetPay client expects: status 200, the coin in upper
// case (D28). scripts/faucetpay-clients runs faucetpayjs itself.
func TestClientsInTheWild(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := apptest.New(t, eng.Open(t), apptest.Options{})
		alice := env.User(t, "alice")
		_, key := env.Faucet(t, map[string]int64{"BTC": 1_000_000, "DOGE": 5_000_000})
		form := func(kv ...string) url.Values { return keyForm(key, kv...) }
		var paid int64
		for _, c := range []struct {
			name, path string
			form       url.Values
			want       map[string]string // members of the reply, as JSON text
			pays       int64             // what alice is paid in BTC
		}{
			{"send with currency=btc", "/send", form("to", "alice", "amount", "1000", "currency", "btc"),
				map[string]string{"status": "200", "currency": `"BTC"`}, 1000},
			{"send with referral=false and no ip_address (faucetpayjs)", "/send",
				form("to", "alice", "amount", "1000", "currency", "btc", "referral", "false"),
				map[string]string{"status": "200", "currency": `"BTC"`}, 1000},
			{"send with referral=true and an empty ip_address", "/send",
				form("to", "alice", "amount", "1000", "currency", "BTC", "referral", "true", "ip_address", ""),
				map[string]string{"status": "200"}, 1000},
			{"send without currency is still refused", "/send", form("to", "alice", "amount", "1000"),
				map[string]string{"status": "410"}, 0},
			{"getbalance with currency=btc", "/getbalance", form("currency", "btc"),
				map[string]string{"status": "200", "currency": `"BTC"`}, 0},
			{"getbalance without currency: the default coin", "/getbalance", form(),
				map[string]string{"status": "200", "currency": `"BTC"`}, 0},
			{"balance (the alias) with currency=doge", "/balance", form("currency", "doge"),
				map[string]string{"status": "200", "currency": `"DOGE"`, "balance": "5000000", "balance_bitcoin": "0.05"}, 0},
			{"balance without currency", "/balance", form(), map[string]string{"status": "200", "currency": `"BTC"`}, 0},
			{"checkaddress with currency=btc", "/checkaddress", form("address", "alice", "currency", "btc"),
				map[string]string{"status": "200", "payout_user_hash": `"` + alice.PayoutUserHash + `"`}, 0},
			{"checkaddress without currency", "/checkaddress", form("address", "alice"),
				map[string]string{"status": "200", "payout_user_hash": `"` + alice.PayoutUserHash + `"`}, 0},
			{"checkaddress of nobody without currency", "/checkaddress", form("address", "nobody"),
				map[string]string{"status": "456"}, 0},
			{"payouts with currency=btc and count=100 (faucetpayjs)", "/payouts", form("currency", "btc", "count", "100"),
				map[string]string{"status": "200"}, 0},
		} {
			r := env.Post(t, c.path, c.form)
			for member, want := range c.want {
				if got := string(r.Body[member]); got != want {
					t.Errorf("%s: %s is %s, want %s: %s", c.name, member, got, want, r.Raw)
				}
			}
			paid += c.pays
			t.Logf("%s -> %s", c.name, r.Raw)
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != paid {
			t.Errorf("alice holds %d BTC units, want %d", got, paid)
		}
		// The three sends above are listed, newest first, whatever case
		// the filter is in.
		r := env.Post(t, "/payouts", form("currency", "btc"))
		var rewards []map[string]any
		if err := json.Unmarshal(r.Body["rewards"], &rewards); err != nil || len(rewards) != 3 {
			t.Errorf("payouts: %v, %d rewards, want 3: %s", err, len(rewards), r.Raw)
		}

		t.Run("multipart with every field", func(t *testing.T) {
			body, contentType := multipartBody(t, "api_key", key, "to", alice.Email, "amount", "777", "currency", "doge",
				"ip_address", "203.0.113.5", "referral", "true")
			r := env.DoWithHeader(t, "/send", strings.NewReader(body), map[string]string{"Content-Type": contentType})
			if r.Status() != 200 || string(r.Body["currency"]) != `"DOGE"` {
				t.Errorf("multipart send: %s", r.Raw)
			}
			if got := env.Balance(t, alice.AccountID, "DOGE"); got != 777 {
				t.Errorf("alice holds %d DOGE units, want 777", got)
			}
		})
		t.Run("a JSON body in lower case", func(t *testing.T) {
			r := env.DoWithHeader(t, "/getbalance", strings.NewReader(`{"api_key":"`+key+`","currency":"ltc"}`),
				map[string]string{"Content-Type": "application/json"})
			if r.Status() != 200 || string(r.Body["currency"]) != `"LTC"` {
				t.Errorf("JSON getbalance: %s", r.Raw)
			}
		})
		env.Reconcile(t)
	})
}

// TestDefaultCurrency: --default-currency names the coin of a read without
// one (D28); a default coin that is not active is 410, as any other.
func TestDefaultCurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ coin, wantStatus, wantCurrency string }{
		{"DOGE", "200", `"DOGE"`},
		{"doge", "200", `"DOGE"`},
		{"XYZ", "410", ""},
	} {
		env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{DefaultCoin: c.coin})
		_, key := env.Faucet(t, map[string]int64{"DOGE": 42})
		r := env.Post(t, "/getbalance", url.Values{"api_key": {key}})
		if string(r.Body["status"]) != c.wantStatus || string(r.Body["currency"]) != c.wantCurrency {
			t.Errorf("default %s: %s, want status %s currency %s", c.coin, r.Raw, c.wantStatus, c.wantCurrency)
		}
	}
}

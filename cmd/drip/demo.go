package main

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

const (
	demoOwner       = "demo_owner"
	demoFaucetName  = "Demo Faucet"
	demoDogeAddress = "DCaro1DemoAddressForDripFaucet1111"
)

// demoFunding is what the demo faucet starts with, in smallest units.
var demoFunding = []drip.Balance{
	{Coin: "BTC", Amount: 10_000_000},       // 0.1 BTC
	{Coin: "DOGE", Amount: 100_000_000_000}, // 1000 DOGE
	{Coin: "LTC", Amount: 500_000_000},      // 5 LTC
	{Coin: "ETH", Amount: 200_000_000},      // 2 ETH
}

// demoKeyFile is where --demo keeps the demo faucet's v1 key between
// starts, in the data directory, readable by its owner only: keys are
// stored hashed (D13), so the database cannot tell it again.
const demoKeyFile = "demo-api-key"

// runDemo creates, the first time, a demo owner, a funded faucet and three
// recipients (one reached by email, one by username, one by a linked DOGE
// address), and prints the faucet's v1 key with a curl line to try. The key
// is kept in dataDir/demo-api-key (0600), so a later start prints the same
// key; when that file is missing or no longer holds the faucet's key, the
// key is rotated and the printout says that it changed.
func runDemo(ctx context.Context, svc *app.App, baseURL, dataDir string, stdout io.Writer) error {
	keyPath := filepath.Join(dataDir, demoKeyFile)
	owner, err := svc.Users.ByUsername(ctx, demoOwner)
	var f *drip.Faucet
	var key, note string
	switch {
	case err == nil:
		if f, err = demoFaucet(ctx, svc, owner); err != nil {
			return err
		}
		if key = keptDemoKey(ctx, svc, keyPath, f); key != "" {
			note = "the same key as the last start, kept in " + keyPath
			break
		}
		if key, err = svc.Faucets.RotateKey(ctx, f.ID); err != nil {
			return err
		}
		if err := svc.Faucets.ConfirmRotation(ctx, f.ID); err != nil {
			return err
		}
		note = "a NEW key: " + keyPath + " was missing or held another key, so the old key was replaced and no longer works"
	case drip.ErrorCode(err) == drip.CodeNotFound:
		if f, key, err = createDemo(ctx, svc); err != nil {
			return err
		}
		note = "kept in " + keyPath + " for the next --demo start"
	default:
		return err
	}
	if err := writePrivate(keyPath, key); err != nil {
		return fmt.Errorf("keeping the demo key: %w", err)
	}
	loginsPath := filepath.Join(dataDir, demoLoginsFile)
	logins, err := demoLogins(ctx, svc, loginsPath)
	if err != nil {
		return fmt.Errorf("demo logins: %w", err)
	}
	fmt.Fprintf(stdout, `
drip demo is ready (faucet %d, %q)

  v1 api_key:  %s
               (%s)
  recipients:  alice@example.com (by email), bob (by username), %s (DOGE address of carol)

Web console:  %s/login
  owner:       %s  password %s
  recipient:   %s  password %s
               (kept in %s)

Try:
  curl -s %s/api/v1/send -d api_key=%s -d to=bob -d amount=1000 -d currency=BTC
  curl -s %s/api/v1/getbalance -d api_key=%s -d currency=BTC

`, f.ID, f.Name, key, note, demoDogeAddress, baseURL, logins[0].username, logins[0].password, logins[1].username, logins[1].password,
		loginsPath, baseURL, key, baseURL, key)
	return nil
}

// demoLoginsFile keeps the demo owner's and a recipient's console
// passwords between starts, beside the demo key and like it (0600):
// passwords are stored hashed, so the database cannot tell them again.
const demoLoginsFile = "demo-logins"

type demoLogin struct{ username, password string }

// demoLogins gives the demo owner and alice passwords for the console:
// the ones kept in path while they still work, else new ones, set and
// kept there.
func demoLogins(ctx context.Context, svc *app.App, path string) ([]demoLogin, error) {
	kept := map[string]string{}
	if b, err := os.ReadFile(path); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, pw, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
				kept[name] = pw
			}
		}
	}
	var out []demoLogin
	var text []string
	for _, name := range []string{demoOwner, "alice"} {
		u, err := svc.Users.ByUsername(ctx, name)
		if err != nil {
			return nil, err
		}
		pw := kept[name]
		if pw == "" || u.PasswordHash == "" || !user.CheckPassword(u.PasswordHash, pw) {
			pw = newDemoPassword()
			hash := user.HashPassword(pw)
			if err := svc.Store.Transact(ctx, func(tx store.Tx) error {
				return tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: u.ID, PasswordHash: hash})
			}); err != nil {
				return nil, err
			}
		}
		out = append(out, demoLogin{name, pw})
		text = append(text, name+" "+pw)
	}
	if err := writePrivate(path, strings.Join(text, "\n")); err != nil {
		return nil, err
	}
	return out, nil
}

// newDemoPassword is 80 random bits as four groups of letters and digits.
func newDemoPassword() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	s := strings.ToLower(base32.StdEncoding.EncodeToString(b))
	return s[0:4] + "-" + s[4:8] + "-" + s[8:12] + "-" + s[12:16]
}

// keptDemoKey is the key kept at path if it is still f's, else "".
func keptDemoKey(ctx context.Context, svc *app.App, path string, f *drip.Faucet) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	key := strings.TrimSpace(string(b))
	if got, err := svc.Faucets.Authenticate(ctx, key); err != nil || got.ID != f.ID {
		return ""
	}
	return key
}

// writePrivate writes text to path, readable and writable by its owner
// only, its directory made if missing (0700), replacing the file whole.
func writePrivate(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".demo-key-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(text + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func createDemo(ctx context.Context, svc *app.App) (*drip.Faucet, string, error) {
	owner, err := svc.Users.Create(ctx, user.CreateParams{Username: demoOwner, Email: "owner@example.com", Verified: true})
	if err != nil {
		return nil, "", err
	}
	f, key, err := svc.Faucets.Create(ctx, faucet.CreateParams{
		OwnerID: owner.ID, Name: demoFaucetName, Domain: "faucet.example.com", URL: "https://faucet.example.com/",
	})
	if err != nil {
		return nil, "", err
	}
	for _, b := range demoFunding {
		if _, err := svc.Ledger.Deposit(ctx, f, b.Coin, b.Amount); err != nil {
			return nil, "", err
		}
	}
	for _, r := range []user.CreateParams{
		{Username: "alice", Email: "alice@example.com", Verified: true},
		{Username: "bob", Email: "bob@example.com", Verified: true},
		{Username: "carol", Email: "carol@example.com", Verified: true},
	} {
		u, err := svc.Users.Create(ctx, r)
		if err != nil {
			return nil, "", err
		}
		if u.Username == "carol" {
			if err := svc.Users.LinkAddress(ctx, u, "DOGE", demoDogeAddress); err != nil {
				return nil, "", err
			}
		}
	}
	return f, key, nil
}

// demoFaucet finds the demo owner's faucet.
func demoFaucet(ctx context.Context, svc *app.App, owner *drip.User) (*drip.Faucet, error) {
	fs, err := svc.Store.FaucetListByOwner(ctx, owner.ID)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, errors.New("the demo owner exists but has no faucet; use a fresh --data-dir")
	}
	return &fs[0], nil
}

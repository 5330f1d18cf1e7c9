package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
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
	fmt.Fprintf(stdout, `
drip demo is ready (faucet %d, %q)

  v1 api_key:  %s
               (%s)
  recipients:  alice@example.com (by email), bob (by username), %s (DOGE address of carol)

Try:
  curl -s %s/api/v1/send -d api_key=%s -d to=bob -d amount=1000 -d currency=BTC
  curl -s %s/api/v1/getbalance -d api_key=%s -d currency=BTC

`, f.ID, f.Name, key, note, demoDogeAddress, baseURL, key, baseURL, key)
	return nil
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

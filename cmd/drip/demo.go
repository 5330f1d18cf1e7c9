package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/dripfaucet/drip/internal/app"
	"io"

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

// runDemo creates, the first time, a demo owner, a funded faucet and three
// recipients (one reached by email, one by username, one by a linked DOGE
// address), and prints the faucet's v1 key with a curl line to try. Keys are
// stored hashed, so a later start cannot show the old key again: it rotates
// the demo faucet's key and prints the new one.
func runDemo(ctx context.Context, svc *app.App, baseURL string, stdout io.Writer) error {
	owner, err := svc.Users.ByUsername(ctx, demoOwner)
	var f *drip.Faucet
	var key string
	switch {
	case err == nil:
		if f, err = demoFaucet(ctx, svc, owner); err != nil {
			return err
		}
		if key, err = svc.Faucets.RotateKey(ctx, f.ID); err != nil {
			return err
		}
		if err := svc.Faucets.ConfirmRotation(ctx, f.ID); err != nil {
			return err
		}
	case drip.ErrorCode(err) == drip.CodeNotFound:
		if f, key, err = createDemo(ctx, svc); err != nil {
			return err
		}
	default:
		return err
	}
	fmt.Fprintf(stdout, `
drip demo is ready (faucet %d, %q)

  v1 api_key:  %s   (replaced at each --demo start; keys are stored hashed)
  recipients:  alice@example.com (by email), bob (by username), %s (DOGE address of carol)

Try:
  curl -s %s/api/v1/send -d api_key=%s -d to=bob -d amount=1000 -d currency=BTC
  curl -s %s/api/v1/getbalance -d api_key=%s -d currency=BTC

`, f.ID, f.Name, key, demoDogeAddress, baseURL, key, baseURL, key)
	return nil
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

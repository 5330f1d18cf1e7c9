package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/user"
)

const (
	// coin and amount are what every bench send pays.
	coin   = "BTC"
	amount = 1
	// funding is what a faucet is given: far more than any run pays.
	funding = int64(1e15)
)

// fixtures are the users and faucets the bench creates through the
// application's own services, named with a random tag so a bench can run on
// a database that already holds data.
type fixtures struct {
	app        *app.App
	tag        string
	owner      *drip.User
	recipients []recipient
	// firstID and lastID bound the recipients' user ids (a bulk load pays
	// the users in that range).
	firstID, lastID int64
	faucets         int
	// keyRuns counts the runs given idempotency keys, so no two share one.
	keyRuns int
}

type recipient struct {
	user *drip.User
	to   string // the form-encoded destination
}

// faucetFix is a faucet the bench sends from, with its keys.
type faucetFix struct {
	f      *drip.Faucet
	auth   string // "api_key=..." form-encoded
	bearer string // "Bearer <v2 send key>", once minted
}

func newFixtures(ctx context.Context, a *app.App, recipients int) (*fixtures, error) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	fx := &fixtures{app: a, tag: hex.EncodeToString(b)}
	var err error
	fx.owner, err = a.Users.Create(ctx, user.CreateParams{
		Username: "bench_" + fx.tag + "_owner", Email: "bench_" + fx.tag + "_owner@bench.example.com", Verified: true,
	})
	if err != nil {
		return nil, err
	}
	if err := fx.createRecipients(ctx, recipients); err != nil {
		return nil, err
	}
	return fx, nil
}

// createRecipients creates n verified users, several at a time (PostgreSQL
// commits them in parallel; SQLite queues them on its one writer).
func (fx *fixtures) createRecipients(ctx context.Context, n int) error {
	fx.recipients = make([]recipient, n)
	const workers = 8
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  = make(chan int)
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := fmt.Sprintf("b%s_%d", fx.tag, i)
				u, err := fx.app.Users.Create(ctx, user.CreateParams{Username: name, Email: name + "@bench.example.com", Verified: true})
				if err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
					continue
				}
				fx.recipients[i] = recipient{user: u, to: url.QueryEscape(u.Username)}
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fx.firstID, fx.lastID = fx.recipients[0].user.ID, fx.recipients[0].user.ID
	for _, r := range fx.recipients {
		fx.firstID, fx.lastID = min(fx.firstID, r.user.ID), max(fx.lastID, r.user.ID)
	}
	return nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// faucet creates a faucet of the bench's owner, funded with fund of coin.
func (fx *fixtures) faucet(ctx context.Context, name string, fund int64) (*faucetFix, error) {
	fx.faucets++
	f, key, err := fx.app.Faucets.Create(ctx, faucet.CreateParams{
		OwnerID: fx.owner.ID, Name: fmt.Sprintf("bench %s %s %d", fx.tag, name, fx.faucets),
		Domain: "bench.example.com", URL: "https://bench.example.com/",
	})
	if err != nil {
		return nil, err
	}
	if fund > 0 {
		if _, err := fx.app.Ledger.Deposit(ctx, f, coin, fund); err != nil {
			return nil, err
		}
	}
	return &faucetFix{f: f, auth: "api_key=" + url.QueryEscape(key)}, nil
}

// mintSendKey gives f a v2 key with the send scope (D14), as an owner
// would mint one: no expiry, no IP whitelist, no daily USD cap.
func (fx *fixtures) mintSendKey(ctx context.Context, f *faucetFix) error {
	_, secret, err := fx.app.Keys.Mint(ctx, key.MintParams{FaucetID: f.f.ID, Scopes: []drip.Scope{drip.ScopeSend}})
	if err != nil {
		return err
	}
	f.bearer = "Bearer " + secret
	return nil
}

// idempotencyPrefix starts the idempotency keys of one run: keys are per
// faucet (D35), and a run must never replay a payout of an earlier run.
func (fx *fixtures) idempotencyPrefix() string {
	fx.keyRuns++
	return fmt.Sprintf("bench-%s-%d-", fx.tag, fx.keyRuns)
}

// sendFields are the form fields of every bench send but the key and the recipient.
var sendFields = "&currency=" + coin + "&amount=" + strconv.Itoa(amount) + "&to="

// Requests of the v1 interface, form-encoded.

func (f *faucetFix) send(r recipient) request {
	return request{op: opSend, path: "/api/v1/send", body: f.auth + sendFields + r.to}
}

func (f *faucetFix) payouts() request {
	return request{op: opPayouts, path: "/api/v1/payouts", body: f.auth + "&count=100"}
}

func (f *faucetFix) balance() request {
	return request{op: opBalance, path: "/api/v1/getbalance", body: f.auth + "&currency=" + coin}
}

// sendV2 is a v2 send to r under the idempotency key prefix+n: the same n
// and recipient make the same request, so its copies replay (D35).
func (f *faucetFix) sendV2(r recipient, prefix string, n uint64) request {
	// Usernames are a-z, 0-9 and _ (D10): no JSON escaping needed.
	body := `{"idempotency_key":"` + prefix + strconv.FormatUint(n, 10) + `","to":"` + r.user.Username +
		`","amount":` + strconv.Itoa(amount) + `,"currency":"` + coin + `"}`
	return request{op: opSend, path: "/api/v2/send", body: body, authorization: f.bearer, idem: n}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
)

// roundRobin is a load balancer inside the client: each request goes to
// the next node in turn. It counts what each node was sent.
type roundRobin struct {
	nodes []*url.URL
	next  atomic.Uint64
	sent  []atomic.Int64 // per node
	base  http.RoundTripper
}

func newRoundRobin(t *testing.T, bases []string) *roundRobin {
	rr := &roundRobin{sent: make([]atomic.Int64, len(bases)),
		base: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}
	for _, b := range bases {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		rr.nodes = append(rr.nodes, u)
	}
	return rr
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	i := (rr.next.Add(1) - 1) % uint64(len(rr.nodes))
	rr.sent[i].Add(1)
	r := req.Clone(req.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rr.nodes[i].Scheme, rr.nodes[i].Host, rr.nodes[i].Host
	return rr.base.RoundTrip(r)
}

// counts is what each node has been sent so far.
func (rr *roundRobin) counts() []int64 {
	out := make([]int64, len(rr.sent))
	for i := range rr.sent {
		out[i] = rr.sent[i].Load()
	}
	return out
}

// TestThreeNodes runs three drip serve processes on one PostgreSQL
// database and one Redis, driven through the Go client behind a
// round-robin balancer (issue 15 item 9, D31, D40): one request rate per
// key across the three, a v2 revocation and a v1 rotation refused by
// every node at once, concurrent sends to one faucet through all three
// paying exactly what its balance covers, a retried send replayed by
// another node, and the ledger reconciled by drip admin reconcile.
func TestThreeNodes(t *testing.T) {
	fx := newNodesFixture(t, "Three")
	a, f, v1Key, dbURL, redisURL := fx.app, fx.faucet, fx.v1Key, fx.dbURL, fx.redisURL
	ctx := context.Background()
	mint := func(scopes ...drip.Scope) (*drip.Key, string) {
		t.Helper()
		k, secret, err := a.Keys.Mint(ctx, key.MintParams{FaucetID: f.ID, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return k, secret
	}

	// A namespace of its own in Redis: key ids restart at 1 in every test
	// schema. Every request comes from 127.0.0.1, so the caller-IP limit
	// (D29) is off: the per-key limit is what is measured.
	prefix := fmt.Sprintf("drip:test:%d:", time.Now().UnixNano())
	args := []string{"--database-url", dbURL, "--redis-url", redisURL, "--redis-prefix", prefix, "--ip-rate-per-minute", "0"}
	nodes := []string{startNode(t, args...), startNode(t, args...), startNode(t, args...)}
	rr := newRoundRobin(t, nodes)
	hc := &http.Client{Transport: rr, Timeout: 60 * time.Second}
	once := client.RetryPolicy{MaxAttempts: 1} // each request counted as answered
	v2 := func(secret string, policy client.RetryPolicy) *client.Client {
		t.Helper()
		c, err := client.New(nodes[0], secret, client.WithHTTPClient(hc), client.WithRetryPolicy(policy))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	v1 := func(apiKey string) *client.V1 {
		t.Helper()
		c, err := client.NewV1(nodes[0], apiKey, client.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// outcome names a call's result: "200", or the HTTP status and code.
	outcome := func(err error) string {
		var e *client.Error
		switch {
		case err == nil:
			return "200"
		case errors.As(err, &e):
			return fmt.Sprint(e.HTTPStatus, " ", e.Code)
		default:
			return err.Error()
		}
	}
	// perNode checks that the calls since before were spread evenly.
	perNode := func(t *testing.T, before []int64, each int64) {
		t.Helper()
		for i, n := range rr.counts() {
			if n-before[i] != each {
				t.Errorf("node %d was sent %d requests, want %d (round robin)", i, n-before[i], each)
			}
		}
	}

	t.Run("OneRequestRateAcrossThreeNodes", func(t *testing.T) {
		_, secret := mint(drip.ScopeRead)
		c := v2(secret, once)
		const calls = 360 // three times the key's burst of 120 (D40)
		before := rr.counts()
		var mu sync.Mutex
		counts := map[string]int{}
		var wg sync.WaitGroup
		for range calls {
			wg.Go(func() {
				_, err := c.Balance(ctx, "BTC")
				mu.Lock()
				counts[outcome(err)]++
				mu.Unlock()
			})
		}
		wg.Wait()
		perNode(t, before, calls/3)
		// 60 a minute refill one a second: a burst that takes a few seconds
		// may gain a few more than the capacity, never another node's worth.
		if ok := counts["200"]; ok < 120 || ok > 130 {
			t.Errorf("accepted %d of %d across three nodes, want 120-130 (one shared limit); outcomes %v", ok, calls, counts)
		}
		if counts["200"]+counts["429 rate_limited"] != calls {
			t.Errorf("outcomes %v: want only 200 and 429 rate_limited", counts)
		}
	})

	t.Run("RevocationRefusedByEveryNodeAtOnce", func(t *testing.T) {
		k, secret := mint(drip.ScopeRead)
		c := v2(secret, once)
		before := rr.counts()
		for i := range nodes {
			if _, err := c.Faucet(ctx); err != nil {
				t.Fatalf("call %d before revocation: %v", i, err)
			}
		}
		revoked := time.Now()
		if _, err := a.Keys.Revoke(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		for i := range nodes {
			if _, err := c.Faucet(ctx); outcome(err) != "401 unauthenticated" {
				t.Errorf("call %d after revocation: %v, want 401 unauthenticated", i, err)
			}
		}
		if elapsed := time.Since(revoked); elapsed > 2*time.Second {
			t.Errorf("the three refusals took %s after the revocation", elapsed)
		}
		perNode(t, before, 2)
	})

	t.Run("V1RotationHeldByEveryNodeAtOnce", func(t *testing.T) {
		newKey, err := a.Faucets.RotateKey(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		before := rr.counts()
		// During the rotation both keys work everywhere ...
		for i := range nodes {
			for _, k := range []string{v1Key, newKey} {
				if _, err := v1(k).GetBalance(ctx, "BTC"); err != nil {
					t.Errorf("call %d during the rotation: %v", i, err)
				}
			}
		}
		if err := a.Faucets.ConfirmRotation(ctx, f.ID); err != nil {
			t.Fatal(err)
		}
		// ... and once it is confirmed the old key is dead on every node.
		for i := range nodes {
			var e *client.Error
			if _, err := v1(v1Key).GetBalance(ctx, "BTC"); !errors.As(err, &e) || e.V1Status != 403 {
				t.Errorf("call %d with the old key after confirmation: %v, want v1 status 403", i, err)
			}
			if _, err := v1(newKey).GetBalance(ctx, "BTC"); err != nil {
				t.Errorf("call %d with the new key after confirmation: %v", i, err)
			}
		}
		perNode(t, before, 4)
	})

	t.Run("ConcurrentSendsThroughThreeNodesNeverOverdraw", func(t *testing.T) {
		const amount, affordable, keys, perKey = 1000, 120, 3, 100 // 300 sends, each key within its burst
		if _, err := a.Ledger.Deposit(ctx, f, "BTC", amount*affordable); err != nil {
			t.Fatal(err)
		}
		before := rr.counts()
		var mu sync.Mutex
		counts := map[string]int{}
		ids := map[int64]bool{}
		var wg sync.WaitGroup
		for range keys {
			_, secret := mint(drip.ScopeSend)
			c := v2(secret, once)
			for range perKey {
				wg.Go(func() {
					res, err := c.Send(ctx, client.SendRequest{To: "bob", Amount: amount, Currency: "BTC"})
					mu.Lock()
					defer mu.Unlock()
					counts[outcome(err)]++
					if err == nil {
						if ids[res.PayoutID] || res.Replayed {
							t.Errorf("payout %d answered twice (replayed %v)", res.PayoutID, res.Replayed)
						}
						ids[res.PayoutID] = true
					}
				})
			}
		}
		wg.Wait()
		perNode(t, before, keys*perKey/3)
		want := map[string]int{"200": affordable, "409 insufficient_balance": keys*perKey - affordable}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("outcomes %v, want %v", counts, want)
		}
		if b, err := a.Store.BalanceGet(ctx, f.AccountID, "BTC"); err != nil || b != 0 {
			t.Errorf("faucet balance %d (%v), want 0", b, err)
		}
		held, err := a.Faucets.Payouts(ctx, f, "BTC", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range held {
			if !ids[p.ID] {
				t.Errorf("payout %d is held but no send was answered with it", p.ID)
			}
		}
	})

	t.Run("ASendRetriedOnAnotherNodeIsReplayed", func(t *testing.T) {
		if _, err := a.Ledger.Deposit(ctx, f, "BTC", 5000); err != nil {
			t.Fatal(err)
		}
		_, secret := mint(drip.ScopeSend)
		c := v2(secret, client.DefaultRetryPolicy())
		req := client.SendRequest{IdempotencyKey: client.NewIdempotencyKey(), To: "bob", Amount: 5000, Currency: "BTC"}
		var first *client.SendResult
		for i := range nodes { // the same key on each node in turn
			res, err := c.Send(ctx, req)
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
			if i == 0 {
				first = res
			} else if res.PayoutID != first.PayoutID || !res.Replayed {
				t.Errorf("send %d with the same key: payout %d replayed %v, want payout %d replayed", i, res.PayoutID, res.Replayed, first.PayoutID)
			}
		}
		if first.Replayed {
			t.Error("the first send was answered as a replay")
		}
		if b, err := a.Store.BalanceGet(ctx, f.AccountID, "BTC"); err != nil || b != 0 {
			t.Errorf("faucet balance %d (%v), want 0: paid once", b, err)
		}
	})

	t.Run("LedgerReconciles", func(t *testing.T) {
		if rec := runAdmin(t, []string{"--database-url", dbURL}, "reconcile"); rec["ok"] != true {
			t.Errorf("drip admin reconcile: %v", rec)
		}
	})
}

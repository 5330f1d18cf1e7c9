package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// startNode runs drip serve with args on a free port and waits until it
// answers /healthz; it returns the node's base URL.
func startNode(t *testing.T, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(dripBin, append([]string{"serve", "--listen", addr}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	base := "http://" + addr
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("drip serve exited early: %v\n%s", err, stderr.String())
		default:
		}
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			return base
		}
	}
	t.Fatalf("drip serve did not answer on %s\n%s", addr, stderr.String())
	return ""
}

// v2Call POSTs a JSON body to a v2 path with a Bearer key and returns the
// HTTP status and the envelope's error code ("" on success).
func v2Call(client *http.Client, base, bearer, path, body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/api/v2"+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return resp.StatusCode, "", fmt.Errorf("not a v2 envelope: %s", raw)
	}
	if env.Error != nil {
		return resp.StatusCode, env.Error.Code, nil
	}
	return resp.StatusCode, "", nil
}

// nodesFixture is what the tests of several nodes start from: the
// application over a fresh PostgreSQL schema (at dbURL), to set up and to
// check what the nodes did, the Redis the nodes share, and a faucet owned
// by "owner", with "bob" to pay.
type nodesFixture struct {
	app             *app.App
	dbURL, redisURL string
	faucet          *drip.Faucet
	v1Key           string
}

// newNodesFixture makes the fixture, its faucet named name; it skips the
// test unless both PostgreSQL and Redis are given (D31).
func newNodesFixture(t *testing.T, name string) *nodesFixture {
	t.Helper()
	redisURL := os.Getenv("DRIP_TEST_REDIS_URL")
	if os.Getenv(storetest.PostgresEnv) == "" || redisURL == "" {
		t.Skipf("%s and DRIP_TEST_REDIS_URL must both be set: the nodes share one PostgreSQL and one Redis", storetest.PostgresEnv)
	}
	st, dbURL := storetest.OpenPostgresURL(t)
	ctx := context.Background()
	a, err := app.New(ctx, st, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	owner, err := a.Users.Create(ctx, user.CreateParams{Username: "owner", Email: "owner@example.com", Verified: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Users.Create(ctx, user.CreateParams{Username: "bob", Email: "bob@example.com", Verified: true}); err != nil {
		t.Fatal(err)
	}
	slug := strings.ToLower(name)
	f, v1Key, err := a.Faucets.Create(ctx, faucet.CreateParams{OwnerID: owner.ID, Name: name,
		Domain: slug + ".example.com", URL: "https://" + slug + ".example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	return &nodesFixture{app: a, dbURL: dbURL, redisURL: redisURL, faucet: f, v1Key: v1Key}
}

// TestTwoNodes runs two drip serve processes on one PostgreSQL database
// and one Redis (D31, D40): the per-key request rate is one limit across
// both, concurrent sends through both never overdraw the faucet, and a
// revocation or a key rotation holds on the other node at once.
func TestTwoNodes(t *testing.T) {
	fx := newNodesFixture(t, "Two")
	a, f, v1Key, dbURL, redisURL := fx.app, fx.faucet, fx.v1Key, fx.dbURL, fx.redisURL
	ctx := context.Background()
	const amount, affordable = 1000, 50
	if _, err := a.Ledger.Deposit(ctx, f, "BTC", amount*affordable); err != nil {
		t.Fatal(err)
	}
	mint := func(scopes ...drip.Scope) (*drip.Key, string) {
		k, secret, err := a.Keys.Mint(ctx, key.MintParams{FaucetID: f.ID, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		return k, secret
	}

	// A namespace of its own in Redis: key ids restart at 1 in every test schema.
	prefix := fmt.Sprintf("drip:test:%d:", time.Now().UnixNano())
	args := []string{"--database-url", dbURL, "--redis-url", redisURL, "--redis-prefix", prefix,
		"--ip-rate-per-minute", "0"} // every client is 127.0.0.1: the caller-IP limit (D29) is not what is tested
	nodes := []string{startNode(t, args...), startNode(t, args...)}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}

	t.Run("OneRequestRateAcrossNodes", func(t *testing.T) {
		_, reader := mint(drip.ScopeRead)
		const perNode = 120 // a burst of 240 against a capacity of 120 (D40)
		var mu sync.Mutex
		counts := map[int]int{}
		var wg sync.WaitGroup
		for _, base := range nodes {
			for range perNode {
				wg.Add(1)
				go func() {
					defer wg.Done()
					status, _, err := v2Call(client, base, reader, "/balance", `{"currency":"BTC"}`)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					counts[status]++
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		// 60 a minute refill one a second: a burst that takes a few seconds
		// may gain a few more than the capacity, never a second node's worth.
		if ok := counts[http.StatusOK]; ok < 120 || ok > 130 {
			t.Errorf("accepted %d of 240 across two nodes, want about 120 (one shared limit); statuses %v", ok, counts)
		}
		if counts[http.StatusOK]+counts[http.StatusTooManyRequests] != 2*perNode {
			t.Errorf("statuses %v: want only 200 and 429", counts)
		}
	})

	t.Run("ConcurrentSendsThroughBothNodesNeverOverdraw", func(t *testing.T) {
		_, sender := mint(drip.ScopeSend)
		const sends = 110 // within the key's burst, more than the balance pays
		var mu sync.Mutex
		counts := map[string]int{}
		var wg sync.WaitGroup
		for i := range sends {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"idempotency_key":"send-%d","to":"bob","amount":%d,"currency":"BTC"}`, i, amount)
				status, code, err := v2Call(client, nodes[i%2], sender, "/send", body)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				counts[fmt.Sprint(status, code)]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		want := map[string]int{"200": affordable, "409insufficient_balance": sends - affordable}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Errorf("outcomes %v, want %v", counts, want)
		}
		if b, err := a.Store.BalanceGet(ctx, f.AccountID, "BTC"); err != nil || b != 0 {
			t.Errorf("faucet balance %d (%v), want 0", b, err)
		}
		r, err := a.Ledger.Reconcile(ctx)
		if err != nil || !r.OK() {
			t.Fatalf("reconcile: %+v, %v", r, err)
		}
	})

	t.Run("RevocationHoldsOnTheOtherNodeAtOnce", func(t *testing.T) {
		k, reader := mint(drip.ScopeRead)
		for _, base := range nodes {
			if status, code, err := v2Call(client, base, reader, "/faucet", ""); err != nil || status != http.StatusOK {
				t.Fatalf("before revocation: %d %s %v", status, code, err)
			}
		}
		// Revoked through node 0's database, refused by node 1 at once.
		revoked := time.Now()
		if _, err := a.Keys.Revoke(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		status, code, err := v2Call(client, nodes[1], reader, "/faucet", "")
		if elapsed := time.Since(revoked); err != nil || status != http.StatusUnauthorized || code != "unauthenticated" || elapsed > time.Second {
			t.Errorf("after revocation: %d %q %v, %s after; want 401 unauthenticated within a second", status, code, err, elapsed)
		}
	})

	t.Run("RotationHoldsOnBothNodesAtOnce", func(t *testing.T) {
		newKey, err := a.Faucets.RotateKey(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Faucets.ConfirmRotation(ctx, f.ID); err != nil {
			t.Fatal(err)
		}
		for _, base := range nodes {
			for key, want := range map[string]int{v1Key: 403, newKey: 200} {
				got, _ := post(t, base+"/api/v1/getbalance", map[string][]string{"api_key": {key}, "currency": {"BTC"}})
				if got != want {
					t.Errorf("%s: v1 status %d with the %s key, want %d", base, got, map[bool]string{true: "old", false: "new"}[key == v1Key], want)
				}
			}
		}
	})
}

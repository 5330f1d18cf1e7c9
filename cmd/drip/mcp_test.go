package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeMCPListen: the tool server answers at /mcp on the main listener
// and, with --mcp-listen, on its own address too; both want a key. SIGTERM
// stops both listeners and drip exits 0 (under go test -race, with no data
// race in serving the two).
func TestServeMCPListen(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mcpAddr := ln.Addr().String()
	ln.Close()
	db := []string{"--data-dir", t.TempDir()}
	s := startDemo(t, append(db, "--mcp-listen", mcpAddr)...)
	key := runAdmin(t, db, "key", "mint", "--faucet", "1", "--scopes", "read")["key"].(string)

	list := func(url, bearer string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, url := range []string{s.base + "/mcp", "http://" + mcpAddr + "/mcp"} {
		status, body := list(url, key)
		var reply struct {
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &reply); status != http.StatusOK || err != nil || reply.Result.ServerInfo.Name == "" {
			t.Errorf("%s: initialize answered %d %s", url, status, body)
		}
		if status, body := list(url, ""); status != http.StatusUnauthorized {
			t.Errorf("%s without a key: %d %s, want 401", url, status, body)
		}
	}
	s.stop(t)
	for _, addr := range []string{strings.TrimPrefix(s.base, "http://"), mcpAddr} {
		if conn, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still takes connections after drip stopped", addr)
		}
	}
}

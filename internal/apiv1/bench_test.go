package apiv1_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// BenchmarkV1Send measures the whole v1 request path: 64 concurrent
// keep-alive clients sending from one hot faucet to 1,000 recipients over
// HTTP, through authorization, the pipeline and group commit (D5).
//
//	go test ./internal/apiv1 -run '^$' -bench V1Send -benchtime 5000x
func BenchmarkV1Send(b *testing.B) {
	for _, eng := range storetest.Engines(b) {
		b.Run(eng.Name, func(b *testing.B) {
			// Every client is 127.0.0.1: neither the key's rate nor the caller IP's (D29) is measured.
			env := apptest.New(b, eng.Open(b), apptest.Options{Rate: unlimited, CallerRate: unlimited})
			_, key := env.Faucet(b, map[string]int64{"BTC": 1 << 60})
			names := make([]string, 1000)
			for i := range names {
				names[i] = fmt.Sprintf("bench%d", i)
				env.User(b, names[i])
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
			endpoint := env.Server.URL + "/api/v1/send"
			var next atomic.Int64
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					form := url.Values{"api_key": {key}, "to": {names[next.Add(1)%1000]}, "amount": {"1"}, "currency": {"BTC"}}
					resp, err := client.Post(endpoint, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
					if err != nil {
						b.Error(err)
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if !strings.HasPrefix(string(body), `{"status":200`) {
						b.Errorf("send: %s", body)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "payouts/s")
			env.Reconcile(b)
		})
	}
}

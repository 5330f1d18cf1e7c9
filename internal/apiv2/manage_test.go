package apiv2_test

import (
	"sync"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
)

// TestV2ConcurrentManageCallsKeepEachOthersChanges: settings live in one
// faucet row written back whole, so concurrent manage calls must not start
// from the same copy: a whitelist set beside a toggle stays set, and an
// even number of concurrent toggles ends where it began.
func TestV2ConcurrentManageCallsKeepEachOthersChanges(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		f, _ := env.Faucet(t, nil)
		mng := env.Key(t, f, drip.ScopeManage)
		const toggles = 10
		var wg sync.WaitGroup
		for i := range toggles {
			wg.Add(2)
			go func() {
				defer wg.Done()
				env.V2(t, mng, "/low-balance-notification/toggle", nil)
			}()
			go func() {
				defer wg.Done()
				if i == toggles/2 {
					env.V2(t, mng, "/ip-whitelist/set", `{"ip_whitelist":["127.0.0.0/8","203.0.113.0/24"]}`)
				}
				env.V2(t, mng, "/anti-fraud/toggle", nil)
			}()
		}
		wg.Wait()
		got, err := env.App.Store.FaucetGetByID(t.Context(), f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w := got.IPWhitelistStrings(); len(w) != 2 {
			t.Errorf("IP whitelist %v after concurrent updates, want the two entries set", w)
		}
		if got.LowBalance.Enabled || !got.Rules.AntiFraud {
			t.Errorf("after %d toggles each: low-balance alert %v (want false), anti-fraud %v (want true)",
				toggles, got.LowBalance.Enabled, got.Rules.AntiFraud)
		}
	})
}

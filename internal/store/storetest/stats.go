package storetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the statistics (D37).

func testStatsDailyByUTCDayAndCoin(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 100000)
	deposit(t, st, f.AccountID, "DOGE", 100000)
	deposit(t, st, g.AccountID, "BTC", 100000)

	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	// since is 20:00 UTC on the 13th, given in another zone.
	since := time.Date(2026, 3, 13, 21, 0, 0, 0, time.FixedZone("CET", 3600))
	pay(t, st, f, alice, "BTC", 1, "", since.Add(-time.Microsecond)) // before since
	pay(t, st, f, bob, "BTC", 2, "", since)
	pay(t, st, f, alice, "BTC", 100, "", midnight.Add(-time.Microsecond))
	pay(t, st, f, bob, "BTC", 200, "", midnight.Add(-time.Hour))
	pay(t, st, f, alice, "BTC", 50, "", midnight.Add(-24*time.Hour)) // the first microsecond of the 14th
	pay(t, st, f, alice, "BTC", 7, "", midnight)
	pay(t, st, f, carol, "DOGE", 9, "", midnight.Add(time.Hour))
	pay(t, st, f, alice, "DOGE", 11, "", midnight.Add(24*time.Hour-time.Microsecond))
	pay(t, st, g, carol, "BTC", 999, "", midnight.Add(-time.Hour)) // another faucet

	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }
	want := []drip.DailyStat{
		{Day: day(15), Coin: "BTC", Payouts: 1, Amount: 7, Recipients: 1},
		{Day: day(15), Coin: "DOGE", Payouts: 2, Amount: 20, Recipients: 2},
		{Day: day(14), Coin: "BTC", Payouts: 3, Amount: 350, Recipients: 2},
		{Day: day(13), Coin: "BTC", Payouts: 1, Amount: 2, Recipients: 1},
	}
	got, err := st.StatsDaily(ctx, f.ID, since)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("StatsDaily (-want +got):\n%s", diff)
	}
	for _, s := range got {
		if s.Day.Location() != time.UTC {
			t.Errorf("StatsDaily day %v in %v, want UTC", s.Day, s.Day.Location())
		}
	}
	got, err = st.StatsDaily(ctx, f.ID, midnight)
	if err != nil {
		t.Fatalf("StatsDaily: %v", err)
	}
	if diff := gocmp.Diff(want[:2], got); diff != "" {
		t.Errorf("StatsDaily since midnight (-want +got):\n%s", diff)
	}
	got, err = st.StatsDaily(ctx, newFaucet(t, st, owner, "key3").ID, since)
	if err != nil || len(got) != 0 {
		t.Errorf("StatsDaily of a faucet that never paid = %+v, %v; want empty", got, err)
	}
}

func testStatsUsersLargestFirstAndPaged(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice, bob, carol, dave := newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol"), newUser(t, st, "dave")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 10000)
	deposit(t, st, f.AccountID, "DOGE", 10000)
	deposit(t, st, g.AccountID, "BTC", 10000)
	pay(t, st, f, alice, "BTC", 10, "", t0)
	pay(t, st, f, bob, "BTC", 50, "", t0.Add(time.Minute))
	pay(t, st, f, alice, "BTC", 20, "", t0.Add(2*time.Minute))
	pay(t, st, f, carol, "BTC", 30, "", t0.Add(3*time.Minute)) // ties with alice: the earlier user first
	pay(t, st, f, dave, "DOGE", 1000, "", t0)                  // another coin
	pay(t, st, g, dave, "BTC", 5000, "", t0)                   // another faucet

	all := []drip.UserStat{
		{PayoutUserHash: bob.PayoutUserHash, Payouts: 1, Amount: 50, LastPayoutAt: t0.Add(time.Minute)},
		{PayoutUserHash: alice.PayoutUserHash, Payouts: 2, Amount: 30, LastPayoutAt: t0.Add(2 * time.Minute)},
		{PayoutUserHash: carol.PayoutUserHash, Payouts: 1, Amount: 30, LastPayoutAt: t0.Add(3 * time.Minute)},
	}
	for _, c := range []struct {
		name      string
		p         store.PageParams
		want      []drip.UserStat
		wantTotal int64
	}{
		{"first page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2}, all[:2], 3},
		{"second page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 2}, all[2:], 3},
		{"past the end", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 2, Offset: 4}, nil, 3},
		{"one page", store.PageParams{ID: f.ID, Coin: "BTC", Limit: 50}, all, 3},
		{"other coin", store.PageParams{ID: f.ID, Coin: "DOGE", Limit: 50}, []drip.UserStat{
			{PayoutUserHash: dave.PayoutUserHash, Payouts: 1, Amount: 1000, LastPayoutAt: t0}}, 1},
		{"a coin never paid", store.PageParams{ID: f.ID, Coin: "LTC", Limit: 50}, nil, 0},
	} {
		got, total, err := st.StatsUsers(ctx, &c.p)
		if err != nil {
			t.Errorf("%s: StatsUsers: %v", c.name, err)
			continue
		}
		if diff := gocmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: StatsUsers (-want +got):\n%s", c.name, diff)
		}
		if total != c.wantTotal {
			t.Errorf("%s: StatsUsers total = %d, want %d", c.name, total, c.wantTotal)
		}
	}
}

// statsFolding is a store that keeps the statistics as sums (D73).
type statsFolding interface {
	StatsFold(ctx context.Context, n int64) (behind bool, err error)
	StatsPending(ctx context.Context) (from, end int64, err error)
}

// folding is st as the store that keeps the statistics as sums it must be.
func folding(t testing.TB, st store.Store) statsFolding {
	t.Helper()
	fs, ok := st.(statsFolding)
	if !ok {
		t.Fatalf("%T keeps no statistics' sums", st)
	}
	return fs
}

// testStatsFoldedAgree (D73): the statistics say what the payouts say
// before any fold, after each small fold, once everything is folded, and
// with payouts made after that, on either engine.
func testStatsFoldedAgree(t *testing.T, st store.Store) {
	ctx := context.Background()
	fs := folding(t, st)
	owner := newUser(t, st, "owner")
	users := []*drip.User{newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")}
	f, g := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2")
	for _, fc := range []*drip.Faucet{f, g} {
		deposit(t, st, fc.AccountID, "BTC", 1_000_000)
		deposit(t, st, fc.AccountID, "DOGE", 1_000_000)
	}
	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	var paid []drip.Payout
	payMore := func(n int) {
		for range n {
			k := len(paid)
			fc := []*drip.Faucet{f, g}[k%5/4]
			at := midnight.Add(time.Duration(k*97) * time.Minute) // across days
			paid = append(paid, pay(t, st, fc, users[k%len(users)], []string{"BTC", "DOGE"}[k%3/2], int64(1+k%7), "", at))
		}
	}
	check := func(state string) {
		t.Helper()
		for _, since := range []time.Time{midnight, midnight.Add(30 * time.Hour), midnight.Add(-48 * time.Hour)} {
			got, err := st.StatsDaily(ctx, f.ID, since)
			if err != nil {
				t.Fatalf("%s: StatsDaily: %v", state, err)
			}
			if diff := gocmp.Diff(wantDaily(paid, f.ID, since), got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: StatsDaily since %v (-want +got):\n%s", state, since, diff)
			}
		}
		for _, coin := range []string{"BTC", "DOGE"} {
			got, total, err := st.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: coin, Limit: 50})
			if err != nil {
				t.Fatalf("%s: StatsUsers: %v", state, err)
			}
			want := wantUsers(paid, users, f.ID, coin)
			if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || total != int64(len(want)) {
				t.Errorf("%s: StatsUsers in %s, total %d, want %d (-want +got):\n%s", state, coin, total, len(want), diff)
			}
		}
	}
	payMore(40)
	check("before any fold")
	for step := 1; step <= 40; step++ {
		if _, err := fs.StatsFold(ctx, 3); err != nil {
			t.Fatalf("fold %d: %v", step, err)
		}
		check(fmt.Sprintf("after fold %d", step))
	}
	foldAll(t, fs)
	check("every payout folded")
	payMore(7)
	check("payouts after the mark")
	if _, err := fs.StatsFold(ctx, 5); err != nil {
		t.Fatal(err)
	}
	check("some of them folded")
	foldAll(t, fs)
	check("folded again")
}

// testStatsUsersPagedByRank (D73): the users' page reads the first of the
// kept sums' rank and the recipients paid since the mark, so every page
// of every size is checked, with ties, and with payouts since the mark
// that lift a recipient from the bottom of the rank to the top, or into a
// tie, or add one never folded.
func testStatsUsersPagedByRank(t *testing.T, st store.Store) {
	ctx := context.Background()
	fs := folding(t, st)
	owner := newUser(t, st, "owner")
	users := newUsers(t, st, 13)
	f := newFaucet(t, st, owner, "key")
	deposit(t, st, f.AccountID, "BTC", 1_000_000)
	var paid []drip.Payout
	payTo := func(i int, amount int64) {
		paid = append(paid, pay(t, st, f, users[i], "BTC", amount, "", t0.Add(time.Duration(len(paid))*time.Minute)))
	}
	check := func(state string) {
		t.Helper()
		all := wantUsers(paid, users, f.ID, "BTC")
		for _, limit := range []int{1, 2, 5} {
			for offset := 0; offset <= len(all)+1; offset++ {
				got, total, err := st.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: "BTC", Limit: limit, Offset: offset})
				if err != nil {
					t.Fatalf("%s: StatsUsers: %v", state, err)
				}
				want := all[min(offset, len(all)):min(offset+limit, len(all))]
				if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || total != int64(len(all)) {
					t.Errorf("%s: page of %d from %d, total %d of %d (-want +got):\n%s", state, limit, offset, total, len(all), diff)
				}
			}
		}
	}
	for i := range 12 { // four totals, three recipients each
		payTo(i, int64(10*(1+i%4)))
	}
	check("nothing folded")
	foldAll(t, fs)
	check("every payout folded")
	payTo(0, 100)  // from a bottom rank (10) to the top (110)
	payTo(2, 10)   // into a tie with the recipients at 40
	payTo(12, 40)  // one never folded, in that tie too
	payTo(5, 1000) // and a second payout since the mark
	payTo(5, 1)
	check("payouts since the mark")
	if _, err := fs.StatsFold(ctx, 2); err != nil {
		t.Fatal(err)
	}
	check("some of them folded")
	foldAll(t, fs)
	check("folded again")
}

// wantDaily sums paid as StatsDaily does: the faucet's payouts since,
// per UTC day and coin, newest day first.
func wantDaily(paid []drip.Payout, faucetID int64, since time.Time) []drip.DailyStat {
	type key struct {
		day  time.Time
		coin string
	}
	sums := map[key]*drip.DailyStat{}
	who := map[key]map[int64]bool{}
	for _, p := range paid {
		if p.FaucetID != faucetID || p.CreatedAt.Before(since) {
			continue
		}
		k := key{p.CreatedAt.UTC().Truncate(24 * time.Hour), p.Coin}
		if sums[k] == nil {
			sums[k], who[k] = &drip.DailyStat{Day: k.day, Coin: k.coin}, map[int64]bool{}
		}
		sums[k].Payouts++
		sums[k].Amount += p.Amount
		who[k][p.RecipientID] = true
		sums[k].Recipients = int64(len(who[k]))
	}
	var out []drip.DailyStat
	for _, s := range sums {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b drip.DailyStat) int {
		if c := b.Day.Compare(a.Day); c != 0 {
			return c
		}
		return strings.Compare(a.Coin, b.Coin)
	})
	return out
}

// wantUsers sums paid as StatsUsers does: the faucet's payouts in coin
// per recipient, largest total first, then by recipient.
func wantUsers(paid []drip.Payout, users []*drip.User, faucetID int64, coin string) []drip.UserStat {
	sums := map[int64]*drip.UserStat{}
	for _, p := range paid {
		if p.FaucetID != faucetID || p.Coin != coin {
			continue
		}
		s := sums[p.RecipientID]
		if s == nil {
			s = &drip.UserStat{}
			for _, u := range users {
				if u.ID == p.RecipientID {
					s.PayoutUserHash = u.PayoutUserHash
				}
			}
			sums[p.RecipientID] = s
		}
		s.Payouts++
		s.Amount += p.Amount
		if p.CreatedAt.After(s.LastPayoutAt) {
			s.LastPayoutAt = p.CreatedAt.UTC()
		}
	}
	ids := slices.Collect(maps.Keys(sums))
	slices.SortFunc(ids, func(a, b int64) int {
		if c := cmp.Compare(sums[b].Amount, sums[a].Amount); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	var out []drip.UserStat
	for _, id := range ids {
		out = append(out, *sums[id])
	}
	return out
}

// testStatsFoldWaitsForOpenPayouts (D73): where payout ids commit out of
// order (PostgreSQL), the fold does not pass the id of a payout whose
// transaction is still open, however many later payouts commit, and folds
// it once it commits. On SQLite an open write transaction holds the one
// writer, and the fold waits for it as every writer does.
func testStatsFoldWaitsForOpenPayouts(t *testing.T, st store.Store) {
	if st.Engine() == "sqlite" {
		t.Skip("one writer: a fold cannot run beside an open payout")
	}
	ctx := context.Background()
	fs := folding(t, st)
	owner, alice, bob := newUser(t, st, "owner"), newUser(t, st, "alice"), newUser(t, st, "bob")
	// The open payout holds its faucet's balance: the later ones pay from
	// another faucet.
	f, g := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1_000_000)
	deposit(t, st, g.AccountID, "BTC", 1_000_000)
	paid := []drip.Payout{pay(t, st, f, alice, "BTC", 10, "", t0)}

	held, release, done := make(chan drip.Payout), make(chan struct{}), make(chan error, 1)
	var released sync.Once
	letGo := func() { released.Do(func() { close(release) }) }
	defer letGo() // a failing check must not leave the transaction, and the pool's close, waiting
	go func() {
		done <- st.Transact(ctx, func(tx store.Tx) error {
			p := drip.Payout{FaucetID: f.ID, RecipientID: bob.ID, To: bob.Username, Coin: "BTC", Amount: 100, Referral: "held", CreatedAt: t0}
			tr, err := move(ctx, tx, "BTC", f.AccountID, bob.AccountID, p.Amount, "payout", t0)
			if err != nil {
				return err
			}
			if p.ID, err = tx.PayoutInsert(ctx, &p, tr); err != nil {
				return err
			}
			held <- p
			<-release
			return nil
		})
	}()
	open := <-held
	for range 3 {
		paid = append(paid, pay(t, st, g, alice, "BTC", 1, "", t0))
	}
	if paid[len(paid)-1].ID <= open.ID {
		t.Fatalf("payout %d committed after the open one, %d, took a smaller id", paid[len(paid)-1].ID, open.ID)
	}
	for range 5 {
		if _, err := fs.StatsFold(ctx, 100); err != nil {
			t.Fatal(err)
		}
	}
	if from, _, err := fs.StatsPending(ctx); err != nil || from > open.ID {
		t.Fatalf("the mark at %d, %v, past payout %d, whose transaction is open", from, err, open.ID)
	}
	letGo()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	paid = append(paid, open)
	foldAll(t, fs)
	got, _, err := st.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: "BTC", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(wantUsers(paid, []*drip.User{alice, bob}, f.ID, "BTC"), got); diff != "" {
		t.Errorf("StatsUsers once folded (-want +got):\n%s", diff)
	}
}

// foldAll folds until every payout is in the sums. On PostgreSQL a fold
// waits for the transactions older than its horizon to end, and those
// of other tests may run a moment longer: xids are the cluster's.
func foldAll(t *testing.T, fs statsFolding) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := fs.StatsFold(ctx, 100); err != nil {
			t.Fatal(err)
		}
		from, end, err := fs.StatsPending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if from == end {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s of folds the mark is at %d, the next payout %d; want every payout folded", from, end)
		}
	}
}

// StatsReconciled checks reconcile's check of the statistics' sums (D73)
// and their rebuild, on a store whose database exec edits as only a bug or
// a hand could, returning how many rows a statement changed: the check is clean before and after folds; each kind of
// wrong sum names its faucet, and only its faucet; a rebuild keeps the
// reads exact and, folded again, mends every one.
func StatsReconciled(t *testing.T, st store.Store, exec func(query string) int64) {
	t.Helper()
	ctx := context.Background()
	fs := folding(t, st)
	owner := newUser(t, st, "owner")
	users := []*drip.User{newUser(t, st, "alice"), newUser(t, st, "bob"), newUser(t, st, "carol")}
	f, g, h := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2"), newFaucet(t, st, owner, "key3")
	for _, fc := range []*drip.Faucet{f, g} {
		deposit(t, st, fc.AccountID, "BTC", 1_000_000)
		deposit(t, st, fc.AccountID, "DOGE", 1_000_000)
	}
	midnight := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	var paid []drip.Payout
	for k := range 24 {
		fc := []*drip.Faucet{f, g}[k%2]
		at := midnight.Add(time.Duration(k*211) * time.Minute) // four days
		paid = append(paid, pay(t, st, fc, users[k%len(users)], []string{"BTC", "DOGE"}[k%3/2], int64(1+k%5), "", at))
	}
	check := func(state string, want ...int64) {
		t.Helper()
		got, err := st.ReconcileStatistics(ctx)
		if err != nil {
			t.Fatalf("%s: ReconcileStatistics: %v", state, err)
		}
		if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: the faucets whose statistics disagree (-want +got):\n%s", state, diff)
		}
	}
	reads := func(state string) {
		t.Helper()
		for _, fc := range []*drip.Faucet{f, g} {
			got, err := st.StatsDaily(ctx, fc.ID, midnight)
			if err != nil {
				t.Fatalf("%s: StatsDaily: %v", state, err)
			}
			if diff := gocmp.Diff(wantDaily(paid, fc.ID, midnight), got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: faucet %d's StatsDaily (-want +got):\n%s", state, fc.ID, diff)
			}
			got2, total, err := st.StatsUsers(ctx, &store.PageParams{ID: fc.ID, Coin: "BTC", Limit: 50})
			if err != nil {
				t.Fatalf("%s: StatsUsers: %v", state, err)
			}
			want := wantUsers(paid, users, fc.ID, "BTC")
			if diff := gocmp.Diff(want, got2, cmpopts.EquateEmpty()); diff != "" || total != int64(len(want)) {
				t.Errorf("%s: faucet %d's StatsUsers, total %d, want %d (-want +got):\n%s", state, fc.ID, total, len(want), diff)
			}
		}
	}
	check("before any fold")
	if _, err := fs.StatsFold(ctx, 5); err != nil {
		t.Fatal(err)
	}
	check("part folded")
	foldAll(t, fs)
	check("every payout folded")

	rebuild := func(state string) {
		t.Helper()
		if err := st.StatsRebuild(ctx); err != nil {
			t.Fatalf("%s: StatsRebuild: %v", state, err)
		}
		check(state + ", rebuilt")
		reads(state + ", rebuilt")
		foldAll(t, fs)
		check(state + ", rebuilt and folded")
		reads(state + ", rebuilt and folded")
	}
	last := paid[len(paid)-1]
	for _, c := range []struct {
		name  string
		edits []string
		want  []int64
	}{
		{"a recipient's amount", []string{fmt.Sprintf(`UPDATE stats_users SET amount = amount + 1 WHERE faucet_id = %d AND recipient_id = %d`, f.ID, users[0].ID)}, []int64{f.ID}},
		{"a recipient's last payout", []string{fmt.Sprintf(`UPDATE stats_users SET last_at = last_at - 1 WHERE faucet_id = %d AND recipient_id = %d`, g.ID, users[1].ID)}, []int64{g.ID}},
		{"a recipient missing", []string{fmt.Sprintf(`DELETE FROM stats_users WHERE faucet_id = %d AND recipient_id = %d`, g.ID, users[2].ID)}, []int64{g.ID}},
		{"a day's payouts", []string{fmt.Sprintf(`UPDATE stats_days SET payouts = payouts + 1 WHERE faucet_id = %d`, f.ID)}, []int64{f.ID}},
		{"a day's recipients", []string{fmt.Sprintf(`UPDATE stats_days SET recipients = recipients - 1 WHERE faucet_id = %d AND recipients > 1`, g.ID)}, []int64{g.ID}},
		{"a day's recipient missing", []string{fmt.Sprintf(`DELETE FROM stats_day_users WHERE faucet_id = %d AND recipient_id = %d`, f.ID, users[0].ID)}, []int64{f.ID}},
		{"a coin's count of recipients", []string{fmt.Sprintf(`UPDATE stats_user_counts SET recipients = recipients + 1 WHERE faucet_id = %d AND coin = 'DOGE'`, g.ID)}, []int64{g.ID}},
		{"a coin's count missing", []string{fmt.Sprintf(`DELETE FROM stats_user_counts WHERE faucet_id = %d AND coin = 'BTC'`, f.ID)}, []int64{f.ID}},
		{"sums of a faucet that paid nothing", []string{
			fmt.Sprintf(`INSERT INTO stats_days (faucet_id, day, coin, payouts, amount, recipients) VALUES (%d, 20527, 'BTC', 1, 5, 1)`, h.ID),
			fmt.Sprintf(`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at) VALUES (%d, 'BTC', %d, 1, 5, 0)`, h.ID, users[0].ID)}, []int64{h.ID}},
		{"a count of a faucet that paid nothing", []string{
			fmt.Sprintf(`INSERT INTO stats_user_counts (faucet_id, coin, recipients) VALUES (%d, 'DOGE', 1)`, h.ID)}, []int64{h.ID}},
		{"the mark moved back without the sums", []string{fmt.Sprintf(`UPDATE stats_mark SET folded = %d`, last.ID)}, []int64{last.FaucetID}},
		{"two faucets", []string{
			fmt.Sprintf(`UPDATE stats_users SET payouts = payouts + 1 WHERE faucet_id = %d`, g.ID),
			fmt.Sprintf(`UPDATE stats_days SET amount = 0 WHERE faucet_id = %d`, f.ID)}, []int64{f.ID, g.ID}},
	} {
		for _, q := range c.edits {
			if exec(q) == 0 {
				t.Fatalf("%s: %s changed no row", c.name, q)
			}
		}
		check(c.name, c.want...)
		rebuild(c.name)
	}
}

// StatsCountedOnUpgrade checks the migration that keeps a count of each
// faucet's recipients in a coin (stats_user_counts, D73) on a database
// whose sums were folded before it: undo, the statements given, takes the
// database back to before that migration (the trigger and the table gone,
// the migration's version record deleted), and exec runs each. Payouts
// folded then are folded as the previous release folds, without a count;
// the migration counts every sum there is, and the folds after it count
// the recipients they add. The users' page gives the right total at each
// step, and reconcile finds nothing.
//
// Then the previous release's drip admin stats rebuild, which empties the
// sums and not the counts: where oldRebuildKept (PostgreSQL, whose
// cluster runs both releases while it is upgraded), the counts follow the
// sums and stay right; otherwise reconcile names both faucets until this
// release's rebuild mends them.
func StatsCountedOnUpgrade(t *testing.T, st store.Store, undo []string, exec func(query string) int64, oldRebuildKept bool) {
	t.Helper()
	ctx := context.Background()
	fs := folding(t, st)
	owner := newUser(t, st, "owner")
	users := newUsers(t, st, 6)
	f, g := newFaucet(t, st, owner, "key"), newFaucet(t, st, owner, "key2")
	for _, fc := range []*drip.Faucet{f, g} {
		deposit(t, st, fc.AccountID, "BTC", 1_000_000)
		deposit(t, st, fc.AccountID, "DOGE", 1_000_000)
	}
	var paid []drip.Payout
	// payTo pays each of the users from first to last once from both
	// faucets, in BTC, and the first of them in DOGE too.
	payTo := func(first, last int) {
		for i := first; i <= last; i++ {
			for _, fc := range []*drip.Faucet{f, g} {
				paid = append(paid, pay(t, st, fc, users[i], "BTC", int64(1+i), "", t0.Add(time.Duration(len(paid))*time.Minute)))
			}
		}
		paid = append(paid, pay(t, st, f, users[first], "DOGE", 3, "", t0.Add(time.Duration(len(paid))*time.Minute)))
	}
	check := func(state string) {
		t.Helper()
		for _, fc := range []*drip.Faucet{f, g} {
			for _, coin := range []string{"BTC", "DOGE"} {
				_, total, err := st.StatsUsers(ctx, &store.PageParams{ID: fc.ID, Coin: coin, Limit: 1})
				if err != nil {
					t.Fatalf("%s: StatsUsers: %v", state, err)
				}
				if want := int64(len(wantUsers(paid, users, fc.ID, coin))); total != want {
					t.Errorf("%s: faucet %d pays %d recipients in %s, want %d", state, fc.ID, total, coin, want)
				}
			}
		}
		if got, err := st.ReconcileStatistics(ctx); err != nil || len(got) != 0 {
			t.Errorf("%s: ReconcileStatistics = %v, %v; want none", state, got, err)
		}
	}
	payTo(0, 2)
	foldAll(t, fs)
	check("folded")
	for _, q := range undo {
		exec(q)
	}
	payTo(1, 3) // one recipient more for each faucet, and two again
	foldAll(t, fs)
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	check("migrated")
	payTo(3, 5) // two more, one again
	check("paid since the mark")
	foldAll(t, fs)
	check("folded again")

	for _, q := range []string{`UPDATE stats_mark SET folded = 0`, `DELETE FROM stats_users`,
		`DELETE FROM stats_days`, `DELETE FROM stats_day_users`} {
		exec(q)
	}
	if !oldRebuildKept {
		if got, err := st.ReconcileStatistics(ctx); err != nil || !slices.Equal(got, []int64{f.ID, g.ID}) {
			t.Fatalf("after the previous release's rebuild: ReconcileStatistics = %v, %v; want both faucets", got, err)
		}
		if err := st.StatsRebuild(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check("rebuilt by the previous release")
	foldAll(t, fs)
	check("rebuilt and folded")
}

// BenchStatsUsers is a view of the users' page (D73): its count and its
// first page of 50, with every payout of the faucet folded into the sums
// of 10,000 to 1M recipients. open opens a new store and gives a way to
// run a statement on its database (as StatsReconciled's exec). Only the sums are written, as the
// folds would leave them (the count needs no user rows; the page's rows
// join their users, and so come back empty here after the same reads of
// the sums).
func BenchStatsUsers(b *testing.B, open func(b *testing.B) (store.Store, func(query string) int64)) {
	for _, n := range []int64{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("recipients=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st, exec := open(b)
			exec(fmt.Sprintf(`WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < %d)
				INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at)
				SELECT 1, 'BTC', n, 1 + n %% 7, 1000 + n %% 997, n FROM s`, n))
			exec(`ANALYZE`)
			for b.Loop() {
				_, total, err := st.StatsUsers(ctx, &store.PageParams{ID: 1, Coin: "BTC", Limit: 50})
				if err != nil || total != n {
					b.Fatalf("StatsUsers: total %d, %v; want %d", total, err, n)
				}
			}
		})
	}
}

// ToolLeavesTheSums checks that a tool's store (drip admin, drip migrate,
// drip bench's own) folds no statistics, and that a node's does (D73).
// open opens one more store on the test's one database: a serving node's
// if node, a tool's otherwise. The database must have no node's store
// open yet: its folder would fold what the tool's must leave.
func ToolLeavesTheSums(t *testing.T, open func(node bool) store.Store) {
	ctx := context.Background()
	tool := open(false)
	fs := folding(t, tool)
	owner, user := newUser(t, tool, "owner"), newUser(t, tool, "alice")
	f := newFaucet(t, tool, owner, "key")
	deposit(t, tool, f.AccountID, "BTC", 1_000)
	for range 3 {
		pay(t, tool, f, user, "BTC", 10, "", time.Now())
	}
	from, end, err := fs.StatsPending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if from >= end {
		t.Fatalf("mark %d, next payout %d before any fold: want the payouts pending", from, end)
	}
	// A folder looks every second (sqlstore's statsFoldEvery) and, with
	// so few payouts made, folds at its first look.
	time.Sleep(2500 * time.Millisecond)
	if now, _, err := fs.StatsPending(ctx); err != nil || now != from {
		t.Fatalf("mark %d (%v) after two and a half seconds beside a tool's store, want %d: a folder ran", now, err, from)
	}
	// The node's folder folds them: the wait above could tell.
	open(true)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		now, _, err := fs.StatsPending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if now >= end {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("mark %d 20 s after a node's store opened, want %d: the node's folder did not fold", now, end)
		}
	}
}

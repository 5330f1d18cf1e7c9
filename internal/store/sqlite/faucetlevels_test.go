package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// TestFaucetReadsInTwoLevels (D72): every read of a faucet's payouts (its
// lists, search, sums, statistics, the journal's payouts) and of its
// events (list, feed) answers the same before the compactor runs (every
// row in the recent blocks), after each block it copies, and once it has
// caught up (all but the last block in the copies); the lists agree with
// the payouts and events themselves read without either level; reconcile
// finds nothing wrong in any of those states, and reports copies that
// disagree with their payouts and events.
func TestFaucetReadsInTwoLevels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, _ := openCompacting(t, false) // the test steps the compactor
	defer st.Close()
	fx := seedFaucetRows(t, st, raw, 5*256)

	before := fx.answers(t)
	if got := strings.Count(before, "\n"); got < 40 {
		t.Fatalf("%d answers; the fixture reads too little:\n%s", got, before)
	}
	fx.agree(t, "before the compactor")
	// The payouts' level first, a block a step, then the events', so that
	// each is read with the other in every state.
	for i, l := range faucetLevels {
		for step := 1; ; step++ {
			behind, err := copyFaucetBlocks(ctx, &prepared{db: raw}, faucetLevels[i:i+1], 1)
			if err != nil {
				t.Fatalf("%s step %d: %v", l.name, step, err)
			}
			state := fmt.Sprintf("%s after step %d", l.name, step)
			if got := fx.answers(t); got != before {
				t.Fatalf("%s: the reads changed:\n%s", state, diffLines(before, got))
			}
			fx.agree(t, state)
			if !behind {
				break
			}
		}
	}
	if behind, err := copyFaucetBlocks(ctx, &prepared{db: raw}, faucetLevels, faucetBlocksRun); err != nil || behind {
		t.Fatalf("copyFaucetBlocks once caught up = %v, %v; want false, nil", behind, err)
	}
	// Caught up: every block below the last (ids 1,024-1,279; the last,
	// 1,280, is alone in block 5) is in the copies.
	if got := ints(t, raw, `SELECT payouts_done FROM faucet_blocks UNION ALL SELECT events_done FROM faucet_blocks`); !slices.Equal(got, []int64{5, 5}) {
		t.Fatalf("watermarks %v once caught up, want [5 5]", got)
	}
	if got := ints(t, raw, `SELECT COUNT(*) FROM payouts_by_faucet UNION ALL SELECT COUNT(*) FROM events_by_faucet`); !slices.Equal(got, []int64{1279, 1279}) {
		t.Fatalf("copies hold %v rows, want [1279 1279]", got)
	}

	// A copy that disagrees with its payouts is reported: a payout below
	// the watermark missing from it, a row whose time is not its
	// payout's, and a row of a block from the watermark on (read twice).
	gone, changed, early := int64(5), int64(700), int64(1280)
	for _, q := range []string{
		fmt.Sprintf(`DELETE FROM payouts_by_faucet WHERE payout_id = %d`, gone),
		fmt.Sprintf(`UPDATE payouts_by_faucet SET created_at = created_at + 1 WHERE payout_id = %d`, changed),
		fmt.Sprintf(`INSERT INTO payouts_by_faucet SELECT faucet_id, coin, created_at, id FROM payouts WHERE id = %d`, early),
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if bad, err := st.ReconcilePayouts(ctx); err != nil || !slices.Equal(bad, []int64{gone, changed, early}) {
		t.Errorf("ReconcilePayouts of a damaged copy = %v, %v; want %v", bad, err, []int64{gone, changed, early})
	}
	// And the events' copy: an event missing, a row under another
	// faucet, a row of the last block (events 1,280 on).
	for _, q := range []string{
		fmt.Sprintf(`DELETE FROM events_by_faucet WHERE seq = %d`, gone),
		fmt.Sprintf(`UPDATE events_by_faucet SET faucet_id = faucet_id %% 3 + 1 WHERE seq = %d`, changed),
		fmt.Sprintf(`INSERT INTO events_by_faucet SELECT faucet_id, seq FROM events WHERE seq = %d`, early),
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if bad, err := st.ReconcileEvents(ctx); err != nil || !slices.Equal(bad, []int64{gone, changed, early}) {
		t.Errorf("ReconcileEvents of a damaged copy = %v, %v; want %v", bad, err, []int64{gone, changed, early})
	}
	// And an event cannot be deleted, which would leave its row in the copy.
	if _, err := raw.ExecContext(ctx, `DELETE FROM events WHERE seq = 7`); err == nil || !strings.Contains(err.Error(), "never deleted") {
		t.Errorf("DELETE of an event: %v; want it refused", err)
	}
}

// TestFaucetReadsUpgrade: migration 0029 copies the payouts and events a
// database already holds, all but the last block's, and every read
// answers as it did before it.
func TestFaucetReadsUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, raw, path := openCompacting(t, false)
	fx := seedFaucetRows(t, st, raw, 3*256+10)
	want := fx.answers(t)
	// The database as the previous release left it: without 0029.
	for _, q := range []string{
		`DROP TRIGGER events_kept`, `DROP INDEX payouts_block_faucet`, `DROP INDEX events_block_faucet`,
		`DROP TABLE payouts_by_faucet`, `DROP TABLE events_by_faucet`, `DROP TABLE faucet_blocks`,
		`CREATE INDEX payouts_faucet_coin_time ON payouts (faucet_id, coin, created_at, id)`,
		`CREATE INDEX events_feed ON events (faucet_id, txid, seq)`,
		`DELETE FROM schema_migrations WHERE version = 29`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st.Close()
	st, err := open(ctx, path, false) // migrates
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fx.st = st
	if got := ints(t, raw, `SELECT payouts_done FROM faucet_blocks UNION ALL SELECT events_done FROM faucet_blocks`); !slices.Equal(got, []int64{3, 3}) {
		t.Errorf("watermarks %v after the upgrade, want [3 3], the last blocks", got)
	}
	if got := ints(t, raw, `SELECT COUNT(*) FROM payouts_by_faucet UNION ALL SELECT COUNT(*) FROM events_by_faucet`); !slices.Equal(got, []int64{767, 767}) {
		t.Errorf("copies hold %v rows after the upgrade, want [767 767], the blocks below the last", got)
	}
	if got := fx.answers(t); got != want {
		t.Fatalf("the reads changed in the upgrade:\n%s", diffLines(want, got))
	}
	fx.agree(t, "upgraded")
}

// TestFaucetCompactorCatchesUp: the compactor that Open starts copies
// each finished block of both faucet levels by itself (D72).
func TestFaucetCompactorCatchesUp(t *testing.T) {
	t.Parallel()
	st, raw, _ := openCompacting(t, true)
	defer st.Close()
	fx := seedFaucetRows(t, st, raw, 5*256)
	want := fx.answers(t)
	watermarks := `SELECT payouts_done FROM faucet_blocks UNION ALL SELECT events_done FROM faucet_blocks`
	waitFor(t, func() bool { return slices.Equal(ints(t, raw, watermarks), []int64{5, 5}) },
		func() string { return fmt.Sprintf("watermarks %v, want [5 5]", ints(t, raw, watermarks)) })
	if got := fx.answers(t); got != want {
		t.Fatalf("the reads changed once caught up:\n%s", diffLines(want, got))
	}
	fx.agree(t, "caught up by itself")
}

// byFaucet is the fixture of the tests above: three faucets paying three
// users in two coins, with referrals, and an event a payout.
type byFaucet struct {
	st      store.Store
	raw     *sql.DB
	faucets []*drip.Faucet
	users   []*drip.User
	base    time.Time
	last    time.Time
}

// seedFaucetRows makes the users and faucets through the store, gives each
// faucet a deposit, then writes n payouts with their transfers and an
// event each (every thirteenth a low-balance one, whose data the feed
// reads): payout k is faucet k%3's to user (k+k/3)%3, in BTC or LTC, with
// one of three referrals, two at a time at the same moment every seven
// minutes, so that the statistics span days and pages end among ties.
func seedFaucetRows(t *testing.T, st store.Store, raw *sql.DB, n int64) *byFaucet {
	t.Helper()
	ctx := context.Background()
	rc := seedPayouts(t, st, raw, 0) // the users and two faucets
	fx := &byFaucet{st: st, raw: raw, users: rc.users, faucets: rc.faucets, base: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	err := st.Transact(ctx, func(tx store.Tx) error {
		acct, err := tx.AccountCreate(ctx, "faucet", fx.base)
		if err != nil {
			return err
		}
		_, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{OwnerID: fx.users[0].ID, AccountID: acct,
			Name: "Faucet three", Domain: "three.example.com", URL: "https://three.example.com/",
			APIKeyHash: "key-three", Rules: drip.DefaultRules, CreatedAt: fx.base})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f3, err := st.FaucetGetByKeyHash(ctx, "key-three")
	if err != nil {
		t.Fatal(err)
	}
	fx.faucets = append(fx.faucets, f3)
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`UPDATE users SET payout_user_hash = 'hash-' || id`) // what StatsUsers shows
	for _, f := range fx.faucets {
		exec(`INSERT INTO transfers (coin, from_account, to_account, amount, kind, created_at) VALUES ('BTC', ?, ?, 1000000, 'deposit', ?)`,
			fx.users[0].AccountID, f.AccountID, fx.base.Add(time.Hour).UnixMicro())
	}
	var transfer int64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(id) FROM transfers`).Scan(&transfer); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		f, u := fx.faucets[k%3], fx.users[(k+k/3)%3]
		coin := []string{"BTC", "LTC"}[k%5%2]
		referral := []string{"", "ref-a", "ref-b"}[k%7%3]
		id, amount := k+1, 1+k%11
		created := fx.base.Add(time.Duration(k/2) * 7 * time.Minute)
		fx.last = created
		transfer++
		exec(`INSERT INTO transfers (id, coin, from_account, to_account, amount, kind, created_at) VALUES (?, ?, ?, ?, ?, 'payout', ?)`,
			transfer, coin, f.AccountID, u.AccountID, amount, created.UnixMicro())
		exec(`INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, '', ?, ?)`, id, f.ID, u.ID, transfer, u.Username, coin, amount, referral, created.UnixMicro())
		exec(`INSERT INTO events (id, faucet_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)`,
			fmt.Sprintf("evt_%06d", k), f.ID, []string{drip.EventPayoutSent, drip.EventLowBalance}[k%13/12],
			fmt.Sprintf(`{"payout_id":"%d"}`, id), created.UnixMicro())
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// answers is every read of the faucets' payouts and events, printed a
// line each, for the states of the levels to be compared.
func (fx *byFaucet) answers(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	line := func(what string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Fprintf(&b, "%s: %v\n", what, v)
	}
	mid := fx.base.Add(fx.last.Sub(fx.base) / 2)
	for _, f := range fx.faucets {
		for _, p := range []store.PayoutListParams{{Limit: 7}, {Limit: 2000}, {Coin: "LTC", Limit: 5}, {Coin: "BTC", Limit: 2000}} {
			p.FaucetID = f.ID
			got, err := fx.st.PayoutList(ctx, &p)
			line(fmt.Sprintf("PayoutList %+v", p), payoutIDs(got), err)
		}
		for _, p := range []store.PayoutWindowParams{{}, {Since: mid}, {Since: mid, Coin: "BTC"}, {Since: fx.last}} {
			p.FaucetID = f.ID
			n, sum, err := fx.st.PayoutWindow(ctx, &p)
			line(fmt.Sprintf("PayoutWindow %v %s", p.Since.Sub(fx.base), p.Coin), [2]int64{n, sum}, err)
		}
		for _, since := range []time.Time{fx.base, mid} {
			got, err := fx.st.StatsDaily(ctx, f.ID, since)
			line(fmt.Sprintf("StatsDaily %v", since.Sub(fx.base)), got, err)
		}
		for _, p := range []store.PageParams{{Coin: "BTC", Limit: 2}, {Coin: "LTC", Limit: 2, Offset: 1}, {Coin: "BTC", Limit: 10}} {
			p.ID = f.ID
			got, total, err := fx.st.StatsUsers(ctx, &p)
			line(fmt.Sprintf("StatsUsers %+v", p), fmt.Sprint(got, total), err)
			p.ID = f.AccountID
			txs, total, err := fx.st.TransactionList(ctx, &p)
			line(fmt.Sprintf("TransactionList %+v", p), fmt.Sprint(txs, total), err)
		}
		for _, p := range []store.PayoutSearchParams{{Limit: 9}, {Coin: "LTC", Limit: 4}, {RecipientID: fx.users[1].ID, Limit: 6},
			{Referral: "ref-b", Limit: 5}, {BeforeID: 600, Limit: 8}, {Coin: "BTC", Referral: "ref-a", BeforeID: 1000, Limit: 3}} {
			p.FaucetID = f.ID
			got, err := fx.st.PayoutSearch(ctx, &p)
			ids := make([]int64, len(got))
			for i, g := range got {
				ids[i] = g.ID
			}
			line(fmt.Sprintf("PayoutSearch %+v", p), ids, err)
		}
		for _, limit := range []int{1, 10, 2000} {
			got, err := fx.st.EventList(ctx, f.ID, limit)
			ids := make([]string, len(got))
			for i, e := range got {
				ids[i] = e.ID
			}
			line(fmt.Sprintf("EventList %d", limit), ids, err)
		}
		for _, after := range []int64{0, 300, 1000, 1279} {
			got, err := fx.st.EventFeed(ctx, &store.EventFeedParams{FaucetID: f.ID, After: store.EventPosition{Seq: after},
				Types: []string{drip.EventLowBalance}, Limit: 20})
			var seqs []string
			for _, e := range got {
				seqs = append(seqs, fmt.Sprintf("%d:%s:%t", e.Position.Seq, e.Event.Type, e.Event.Data != nil))
			}
			line(fmt.Sprintf("EventFeed %d", after), seqs, err)
		}
	}
	return b.String()
}

// agree checks the lists against the payouts and events read directly,
// whatever the levels hold, and that reconcile finds nothing wrong.
func (fx *byFaucet) agree(t *testing.T, state string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range fx.faucets {
		got, err := fx.st.PayoutList(ctx, &store.PayoutListParams{FaucetID: f.ID, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		want := ints(t, fx.raw, `SELECT id FROM payouts NOT INDEXED WHERE faucet_id = ? ORDER BY created_at DESC, id DESC LIMIT 50`, f.ID)
		if !slices.Equal(payoutIDs(got), want) {
			t.Errorf("%s: faucet %d's payouts %v, want %v", state, f.ID, payoutIDs(got), want)
		}
		events, err := fx.st.EventFeed(ctx, &store.EventFeedParams{FaucetID: f.ID, After: store.EventPosition{Seq: 100}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		for _, e := range events {
			seqs = append(seqs, e.Position.Seq)
		}
		if want := ints(t, fx.raw, `SELECT seq FROM events NOT INDEXED WHERE faucet_id = ? AND seq > 100 ORDER BY seq LIMIT 1000`, f.ID); !slices.Equal(seqs, want) {
			t.Errorf("%s: faucet %d's feed after 100 %v, want %v", state, f.ID, seqs, want)
		}
	}
	if bad, err := fx.st.ReconcilePayouts(ctx); err != nil || len(bad) > 0 {
		t.Errorf("%s: ReconcilePayouts = %v, %v; want nothing", state, bad, err)
	}
	if bad, err := fx.st.ReconcileEvents(ctx); err != nil || len(bad) > 0 {
		t.Errorf("%s: ReconcileEvents = %v, %v; want nothing", state, bad, err)
	}
}

func payoutIDs(ps []drip.Payout) []int64 {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// diffLines is the lines of got that are not in want, and the reverse.
func diffLines(want, got string) string {
	var b strings.Builder
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for notifications (D43).

func testNotificationInsertAndList(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	alice := newUser(t, st, "alice")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	deposit(t, st, f.AccountID, "BTC", 1000)

	n1 := newNotification(t, st, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500, Balance: 499, CreatedAt: t0})
	ng := newNotification(t, st, drip.Notification{FaucetID: g.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 10, Balance: 0, CreatedAt: t0})
	n2 := newNotification(t, st, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 7, Balance: 3, CreatedAt: t0.Add(time.Minute)})

	// A batch's notifications are written with its payouts, at its time.
	at := t0.Add(time.Hour)
	nb := drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 950, Balance: 900, CreatedAt: at}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		b, err := newBatch(ctx, tx, f, at, payment{alice, "BTC", 100})
		if err != nil {
			return err
		}
		b.Notifications = []drip.Notification{nb}
		return tx.PayoutsInsert(ctx, b)
	})
	list, err := st.NotificationListByFaucet(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("NotificationListByFaucet: %v", err)
	}
	if len(list) > 0 {
		nb.ID = list[0].ID
	}
	if nb.ID <= n2.ID {
		t.Errorf("the batch's notification has id %d; want one after %d", nb.ID, n2.ID)
	}
	if diff := cmp.Diff([]drip.Notification{nb, n2, n1}, list); diff != "" {
		t.Errorf("NotificationListByFaucet, newest first (-want +got):\n%s", diff)
	}
	if got, err := st.NotificationListByFaucet(ctx, f.ID, 2); err != nil || !cmp.Equal([]drip.Notification{nb, n2}, got) {
		t.Errorf("NotificationListByFaucet(limit 2) = %+v, %v; want the 2 newest", got, err)
	}
	if got, err := st.NotificationListByFaucet(ctx, g.ID, 10); err != nil || !cmp.Equal([]drip.Notification{ng}, got) {
		t.Errorf("NotificationListByFaucet(other faucet) = %+v, %v; want its one", got, err)
	}
	if got, err := st.NotificationListByFaucet(ctx, 999999, 10); err != nil || len(got) != 0 {
		t.Errorf("NotificationListByFaucet(unknown faucet) = %+v, %v; want empty", got, err)
	}
	if report := reconcile(t, st); report != "" {
		t.Errorf("after the batch: %s; want clean", report)
	}
}

// The outbox as metrics read it: notifications neither sent nor given up,
// and the oldest one's time; sent ones and those out of attempts leave it.
func testNotificationBacklog(t *testing.T, st store.Store) {
	ctx := context.Background()
	backlog := func(maxAttempts int) (int64, time.Time) {
		t.Helper()
		n, oldest, err := st.NotificationBacklog(ctx, maxAttempts)
		if err != nil {
			t.Fatalf("NotificationBacklog: %v", err)
		}
		return n, oldest
	}
	if n, oldest := backlog(8); n != 0 || !oldest.IsZero() {
		t.Fatalf("empty outbox: %d, %v; want 0 and the zero time", n, oldest)
	}
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	var ns []drip.Notification
	for i, at := range []time.Time{t0.Add(time.Minute), t0, t0.Add(2 * time.Minute)} {
		ns = append(ns, newNotification(t, st, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500,
			Balance: int64(i), CreatedAt: at}))
	}
	if n, oldest := backlog(8); n != 3 || !oldest.Equal(t0) {
		t.Errorf("three waiting: %d, %v; want 3, %v", n, oldest, t0)
	}
	// The oldest is sent; the next one failed twice, which is its last
	// attempt when two are allowed.
	sent := t0.Add(time.Hour)
	ns[1].SentAt, ns[1].Attempts = &sent, 1
	ns[0].Attempts, ns[0].LastError = 2, "refused"
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.NotificationRecord(ctx, &ns[1], sent); err != nil {
			return err
		}
		return tx.NotificationRecord(ctx, &ns[0], sent)
	})
	if n, oldest := backlog(8); n != 2 || !oldest.Equal(t0.Add(time.Minute)) {
		t.Errorf("one sent: %d, %v; want 2, %v", n, oldest, t0.Add(time.Minute))
	}
	if n, oldest := backlog(2); n != 1 || !oldest.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("one out of attempts: %d, %v; want 1, %v", n, oldest, t0.Add(2*time.Minute))
	}
}

// The delivery worker's outbox (D43): claims lease, records end them.
func testNotificationClaimLeaseAndRecord(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	n1 := newNotification(t, st, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "BTC", Threshold: 500, Balance: 499, CreatedAt: t0})
	n2 := newNotification(t, st, drip.Notification{FaucetID: g.ID, Kind: "low_balance", Coin: "BTC", Threshold: 5, Balance: 4, CreatedAt: t0.Add(time.Minute)})
	n3 := newNotification(t, st, drip.Notification{FaucetID: f.ID, Kind: "low_balance", Coin: "DOGE", Threshold: 9, Balance: 1, CreatedAt: t0.Add(10 * time.Minute)})

	const lease = time.Minute
	claim := func(now time.Time, maxAttempts, limit int) []drip.Notification {
		t.Helper()
		var got []drip.Notification
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			got, err = tx.NotificationClaim(ctx, now, lease, maxAttempts, limit)
			return err
		})
		return got
	}
	check := func(name string, want, got []drip.Notification) {
		t.Helper()
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: NotificationClaim (-want +got):\n%s", name, diff)
		}
	}
	record := func(n drip.Notification, next time.Time) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.NotificationRecord(ctx, &n, next) })
	}

	now := t0.Add(5 * time.Minute)
	check("due ones, oldest first", []drip.Notification{n1, n2}, claim(now, 3, 10))
	check("a second claim at the same time", nil, claim(now, 3, 10))
	check("just before the lease ends", nil, claim(now.Add(lease-time.Microsecond), 3, 10))
	check("the lease ended, limit 1", []drip.Notification{n1}, claim(now.Add(lease), 3, 1))
	check("the lease ended, the rest", []drip.Notification{n2}, claim(now.Add(lease), 3, 10))

	// n1 delivered: never claimed again.
	sent := now.Add(lease + time.Second)
	n1.SentAt, n1.Channel, n1.Attempts = &sent, "smtp", 1
	record(n1, sent)
	// n2 failed: tried again after its next attempt, while attempts remain.
	n2.LastError, n2.Attempts = "smtp: 421 try later", 1
	record(n2, now.Add(time.Hour))

	check("n3 due, n2 not yet", []drip.Notification{n3}, claim(now.Add(30*time.Minute), 3, 10))
	// n3 was never recorded: its lease ended, and it comes back too.
	check("n2 due again with its attempt, n3 after its lease", []drip.Notification{n3, n2}, claim(now.Add(time.Hour), 3, 10))
	n2.LastError, n2.Attempts = "smtp: 421 try later again", 2
	record(n2, now.Add(2*time.Hour))
	check("n2 out of attempts, n3 not", []drip.Notification{n3}, claim(now.Add(24*time.Hour), 2, 10))
	check("n2 with more attempts allowed", []drip.Notification{n2}, claim(now.Add(24*time.Hour), 3, 10))

	list, err := st.NotificationListByFaucet(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("NotificationListByFaucet: %v", err)
	}
	if diff := cmp.Diff([]drip.Notification{n3, n1}, list); diff != "" {
		t.Errorf("NotificationListByFaucet after the deliveries (-want +got):\n%s", diff)
	}
	missing := drip.Notification{ID: 999999, LastError: "x"}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.NotificationRecord(ctx, &missing, now) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("NotificationRecord of an unknown notification: err = %v, want ErrNotFound", err)
	}
}

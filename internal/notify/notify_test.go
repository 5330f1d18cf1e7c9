package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dripfaucet/drip/internal/notify"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// eachEngine runs test on a fresh store of every engine.
func eachEngine(t *testing.T, test func(t *testing.T, st store.Store)) {
	t.Helper()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			test(t, eng.Open(t))
		})
	}
}

// scene is a running application with a faucet whose BTC low-balance alert
// is set, and a recipient for its payouts.
type scene struct {
	env       *apptest.Env
	faucet    *drip.Faucet
	key       string
	owner     *drip.User
	recipient *drip.User
}

// threshold is the scenes' BTC alert threshold, in smallest units.
const threshold = 500

// newScene funds a faucet with balance BTC units and sets its alert.
func newScene(t *testing.T, st store.Store, balance int64) *scene {
	t.Helper()
	ctx := t.Context()
	env := apptest.New(t, st, apptest.Options{})
	f, key := env.Faucet(t, map[string]int64{"BTC": balance})
	on := true
	f, err := env.App.Faucets.SetLowBalance(ctx, f.ID, faucet.LowBalanceChange{
		Enabled: &on, Thresholds: map[string]int64{"BTC": threshold},
	})
	if err != nil {
		t.Fatalf("set low balance: %v", err)
	}
	owner, err := st.UserGetByID(ctx, f.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	return &scene{env: env, faucet: f, key: key, owner: owner, recipient: env.User(t, "alice")}
}

// pay sends amount BTC units to the recipient through v1 and fails the
// test unless it is paid.
func (s *scene) pay(t *testing.T, amount int64) {
	t.Helper()
	r := s.env.Post(t, "/send", url.Values{
		"api_key": {s.key}, "to": {s.recipient.Username},
		"amount": {strconv.FormatInt(amount, 10)}, "currency": {"BTC"},
	})
	if r.Status() != 200 {
		t.Fatalf("send %d: %s", amount, r.Raw)
	}
}

// cross pays enough to take the balance from above the threshold to 400.
func (s *scene) cross(t *testing.T) {
	t.Helper()
	s.pay(t, s.env.Balance(t, s.faucet.AccountID, "BTC")-400)
}

// worker returns a worker over the scene's store and clock.
func (s *scene) worker(t *testing.T, c notify.Config) *notify.Worker {
	t.Helper()
	c.Store, c.Now = s.env.App.Store, s.env.Clock.Now
	c.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	return notify.NewWorker(c)
}

// smtpWorker is a worker mailing through mb.
func (s *scene) smtpWorker(t *testing.T, mb *mailbox) *notify.Worker {
	t.Helper()
	sender, err := mail.NewSMTP(mb.url())
	if err != nil {
		t.Fatal(err)
	}
	return s.worker(t, notify.Config{Mail: sender, Channel: "smtp"})
}

// notifications are the faucet's notifications, oldest first.
func (s *scene) notifications(t *testing.T) []drip.Notification {
	t.Helper()
	ns, err := s.env.App.Store.NotificationListByFaucet(t.Context(), s.faucet.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(ns)-1; i < j; i, j = i+1, j-1 {
		ns[i], ns[j] = ns[j], ns[i]
	}
	return ns
}

// only is the faucet's one notification.
func (s *scene) only(t *testing.T) drip.Notification {
	t.Helper()
	ns := s.notifications(t)
	if len(ns) != 1 {
		t.Fatalf("%d notifications, want 1: %+v", len(ns), ns)
	}
	return ns[0]
}

// insert writes count notifications for the faucet straight to the store.
func (s *scene) insert(t *testing.T, count int) {
	t.Helper()
	err := s.env.App.Store.Transact(t.Context(), func(tx store.Tx) error {
		for range count {
			if _, err := tx.NotificationInsert(t.Context(), &drip.Notification{
				FaucetID: s.faucet.ID, Kind: "low_balance", Coin: "BTC", Threshold: threshold, Balance: 400,
				CreatedAt: s.env.Clock.Now(),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert notifications: %v", err)
	}
}

// runOnce runs w once and fails the test unless it delivers want.
func runOnce(t *testing.T, w *notify.Worker, want int) {
	t.Helper()
	got, err := w.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	if got != want {
		t.Fatalf("RunOnce delivered %d, want %d", got, want)
	}
}

// wantBody is the email of a scene's first crossing.
func (s *scene) wantBody() string {
	return fmt.Sprintf(`Hello %s,

The BTC balance of your faucet "%s" (id %d) fell below the alert threshold
you set, after a payout at 2026-03-14 15:09:26 UTC.

Balance:   0.000004 BTC (400 smallest units)
Threshold: 0.000005 BTC (500 smallest units)

Deposit BTC to the faucet to keep paying its visitors.

This alert will not be sent again until the faucet's BTC balance rises
back to the threshold or above and then falls below it again. You can
change or turn off the alert in the faucet's low-balance settings.

-- 
drip
`, s.owner.Username, s.faucet.Name, s.faucet.ID)
}

func TestWorkerDeliversToOwnerBySMTP(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		mb := startMailbox(t)
		w := s.smtpWorker(t, mb)
		s.cross(t)

		runOnce(t, w, 1)
		want := []email{{
			To:      []string{s.owner.Email},
			Subject: fmt.Sprintf(`drip: Faucet "%s" is low on BTC`, s.faucet.Name),
			Body:    s.wantBody(),
		}}
		if diff := cmp.Diff(want, mb.messages()); diff != "" {
			t.Errorf("mailbox (-want +got):\n%s", diff)
		}
		now := s.env.Clock.Now()
		wantN := drip.Notification{
			FaucetID: s.faucet.ID, Kind: "low_balance", Coin: "BTC", Threshold: threshold, Balance: 400,
			CreatedAt: now, SentAt: &now, Attempts: 1, Channel: "smtp",
		}
		if diff := cmp.Diff(wantN, s.only(t), ignoreID); diff != "" {
			t.Errorf("notification (-want +got):\n%s", diff)
		}

		s.env.Clock.Advance(24 * time.Hour)
		runOnce(t, w, 0)
		if got := len(mb.messages()); got != 1 {
			t.Errorf("mailbox holds %d messages after a second run, want 1", got)
		}
	})
}

var ignoreID = cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "ID" }, cmp.Ignore())

func TestWorkerRetriesWithBackoffUntilDelivered(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		mb := startMailbox(t)
		mb.reject.Store(true)
		w := s.smtpWorker(t, mb)
		s.cross(t)

		runOnce(t, w, 0)
		n := s.only(t)
		if n.SentAt != nil || n.Attempts != 1 || n.Channel != "" {
			t.Errorf("after a refused send: %+v, want unsent, 1 attempt, no channel", n)
		}
		if n.LastError != "the mail server refused the email (SMTP 550)" {
			t.Errorf("LastError %q, want the server's 550 refusal, without its words or the relay's address", n.LastError)
		}
		if strings.Contains(n.LastError, smtpPass) {
			t.Errorf("LastError %q reveals the SMTP password", n.LastError)
		}

		// First retry after 1 minute, the second 5 minutes after that.
		for i, wait := range []time.Duration{time.Minute, 5 * time.Minute} {
			s.env.Clock.Advance(wait - time.Second)
			runOnce(t, w, 0)
			if got := mb.attempts(); got != i+1 {
				t.Fatalf("%v after failure %d: server saw %d attempts, want %d (not due yet)", wait-time.Second, i+1, got, i+1)
			}
			if i == 1 {
				mb.reject.Store(false) // the server recovers
			}
			s.env.Clock.Advance(time.Second)
			runOnce(t, w, i) // the retry fails once more, then succeeds
			if got := mb.attempts(); got != i+2 {
				t.Fatalf("%v after failure %d: server saw %d attempts, want %d", wait, i+1, got, i+2)
			}
		}
		if got := len(mb.messages()); got != 1 {
			t.Fatalf("mailbox holds %d messages, want 1", got)
		}
		n = s.only(t)
		now := s.env.Clock.Now()
		if n.SentAt == nil || !n.SentAt.Equal(now) || n.Attempts != 3 || n.Channel != "smtp" || n.LastError != "" {
			t.Errorf("after recovery: %+v, want sent at %v on smtp after 3 attempts, no error", n, now)
		}
	})
}

func TestWorkerBackoffSchedule(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		var calls atomic.Int64
		w := s.worker(t, notify.Config{Mail: senderFunc(func(context.Context, mail.Message) error {
			calls.Add(1)
			return errors.New("connection refused")
		})})
		s.cross(t)

		runOnce(t, w, 0)
		for i, wait := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute,
			time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour} {
			s.env.Clock.Advance(wait - time.Second)
			runOnce(t, w, 0)
			if got := calls.Load(); got != int64(i+1) {
				t.Fatalf("%v after failure %d: %d sends, want %d", wait-time.Second, i+1, got, i+1)
			}
			s.env.Clock.Advance(time.Second)
			runOnce(t, w, 0)
			if got := calls.Load(); got != int64(i+2) {
				t.Fatalf("%v after failure %d: %d sends, want %d", wait, i+1, got, i+2)
			}
		}
		// The eighth attempt was the last (notify.DefaultMaxAttempts).
		s.env.Clock.Advance(7 * 24 * time.Hour)
		runOnce(t, w, 0)
		if got := calls.Load(); got != 8 {
			t.Errorf("%d sends in all, want 8", got)
		}
		if n := s.only(t); n.Attempts != 8 || n.SentAt != nil || n.LastError != "the email could not be delivered" {
			t.Errorf("notification %+v, want 8 failed attempts with the last error", n)
		}
	})
}

func TestWorkerGivesUpAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		sendErr   error
		noEmail   bool
		wantSends int64
		wantError string
	}{
		{
			name:      "invalid message",
			sendErr:   fmt.Errorf("%w: To \"x\": no angle-addr", mail.ErrInvalidMessage),
			wantSends: 1,
			wantError: "the owner's email address cannot be used",
		},
		{
			name:      "owner without an email address",
			noEmail:   true,
			wantSends: 0,
			wantError: "the faucet's owner has no email address",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachEngine(t, func(t *testing.T, st store.Store) {
				s := newScene(t, st, 1000)
				if tt.noEmail {
					s.faucet = ownerlessFaucet(t, s.env)
				}
				var calls atomic.Int64
				w := s.worker(t, notify.Config{Mail: senderFunc(func(context.Context, mail.Message) error {
					calls.Add(1)
					return tt.sendErr
				})})
				s.insert(t, 1)

				runOnce(t, w, 0)
				s.env.Clock.Advance(30 * 24 * time.Hour)
				runOnce(t, w, 0)
				if got := calls.Load(); got != tt.wantSends {
					t.Errorf("%d sends, want %d", got, tt.wantSends)
				}
				n := s.only(t)
				if n.Attempts != notify.DefaultMaxAttempts || n.SentAt != nil || !strings.Contains(n.LastError, tt.wantError) {
					t.Errorf("notification %+v, want %d attempts, unsent, error containing %q", n, notify.DefaultMaxAttempts, tt.wantError)
				}
			})
		})
	}
}

// ownerlessFaucet creates, straight in the store, a faucet whose owner has
// no email address (the registry would refuse one).
func ownerlessFaucet(t *testing.T, env *apptest.Env) *drip.Faucet {
	t.Helper()
	ctx, now := t.Context(), env.Clock.Now()
	var id int64
	err := env.App.Store.Transact(ctx, func(tx store.Tx) error {
		userAccount, err := tx.AccountCreate(ctx, "user", now)
		if err != nil {
			return err
		}
		owner, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: userAccount, Username: "mute", CreatedAt: now})
		if err != nil {
			return err
		}
		faucetAccount, err := tx.AccountCreate(ctx, "faucet", now)
		if err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: owner, AccountID: faucetAccount, Name: "Mute", Domain: "mute.example.com",
			URL: "https://mute.example.com/", APIKeyHash: "unused", Rules: drip.DefaultRules, CreatedAt: now,
		})
		return err
	})
	if err != nil {
		t.Fatalf("create faucet: %v", err)
	}
	f, err := env.App.Store.FaucetGetByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestWorkerLogSenderRecordsChannelLog(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		var buf bytes.Buffer
		w := s.worker(t, notify.Config{Mail: mail.NewLog(slog.New(slog.NewJSONHandler(&buf, nil))), Channel: "log"})
		s.cross(t)

		runOnce(t, w, 1)
		if n := s.only(t); n.SentAt == nil || n.Channel != "log" || n.Attempts != 1 {
			t.Errorf("notification %+v, want sent on channel log", n)
		}
		var rec map[string]any
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("log %q is not one JSON record: %v", buf.String(), err)
		}
		want := map[string]any{
			"to":      s.owner.Email,
			"subject": fmt.Sprintf(`drip: Faucet "%s" is low on BTC`, s.faucet.Name),
			"body":    s.wantBody(),
		}
		got := map[string]any{"to": rec["to"], "subject": rec["subject"], "body": rec["body"]}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("logged email (-want +got):\n%s", diff)
		}
	})
}

func TestWorkersRacingDeliverEachOnce(t *testing.T) {
	t.Parallel()
	for _, count := range []int{1, 3 * notify.BatchSize} {
		t.Run(fmt.Sprintf("%d notifications", count), func(t *testing.T) {
			t.Parallel()
			eachEngine(t, func(t *testing.T, st store.Store) {
				s := newScene(t, st, 1000)
				mb := startMailbox(t)
				s.insert(t, count)
				workers := []*notify.Worker{s.smtpWorker(t, mb), s.smtpWorker(t, mb), s.smtpWorker(t, mb)}

				var total atomic.Int64
				var wg sync.WaitGroup
				start := make(chan struct{})
				for _, w := range workers {
					wg.Go(func() {
						<-start
						for range 4 {
							n, err := w.RunOnce(context.Background())
							if err != nil {
								t.Errorf("RunOnce: %v", err)
							}
							total.Add(int64(n))
						}
					})
				}
				close(start)
				wg.Wait()

				if got := total.Load(); got != int64(count) {
					t.Errorf("workers delivered %d in all, want %d", got, count)
				}
				if got := len(mb.messages()); got != count {
					t.Errorf("mailbox holds %d messages, want %d", got, count)
				}
				for _, n := range s.notifications(t) {
					if n.SentAt == nil || n.Attempts != 1 {
						t.Errorf("notification %d: sent %v after %d attempts, want sent after 1", n.ID, n.SentAt, n.Attempts)
					}
				}
			})
		})
	}
}

func TestCrossingsNotifyOncePerCrossing(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		mb := startMailbox(t)
		w := s.smtpWorker(t, mb)
		ctx := t.Context()

		s.pay(t, 600) // 1000 -> 400: crosses
		s.pay(t, 100) // 400 -> 300: already below
		runOnce(t, w, 1)
		if _, err := s.env.App.Ledger.Deposit(ctx, s.faucet, "BTC", 500); err != nil { // 300 -> 800
			t.Fatal(err)
		}
		s.pay(t, 300) // 800 -> 500: at the threshold is not below it
		s.pay(t, 250) // 500 -> 250: crosses again
		runOnce(t, w, 1)
		runOnce(t, w, 0)

		type alert struct{ Balance, Threshold int64 }
		var gotN []alert
		for _, n := range s.notifications(t) {
			if n.SentAt == nil {
				t.Errorf("notification %d was not sent", n.ID)
			}
			gotN = append(gotN, alert{n.Balance, n.Threshold})
		}
		want := []alert{{400, threshold}, {250, threshold}}
		if diff := cmp.Diff(want, gotN); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}

		events, err := st.EventList(ctx, s.faucet.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		var gotE []alert
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Type != drip.EventLowBalance {
				continue
			}
			var data struct {
				Currency       string      `json:"currency"`
				Balance        int64       `json:"balance"`
				BalanceBitcoin json.Number `json:"balance_bitcoin"`
				Threshold      int64       `json:"threshold"`
			}
			if err := json.Unmarshal(events[i].Data, &data); err != nil {
				t.Fatalf("event data %s: %v", events[i].Data, err)
			}
			if data.Currency != "BTC" || string(data.BalanceBitcoin) != drip.FormatCoins(data.Balance) {
				t.Errorf("event data %s: want BTC and balance_bitcoin matching balance", events[i].Data)
			}
			gotE = append(gotE, alert{data.Balance, data.Threshold})
		}
		if diff := cmp.Diff(want, gotE); diff != "" {
			t.Errorf("%s events (-want +got):\n%s", drip.EventLowBalance, diff)
		}

		var bodies []string
		for _, m := range mb.messages() {
			bodies = append(bodies, m.Body)
		}
		if len(bodies) != 2 || !strings.Contains(bodies[0], "0.000004 BTC (400 smallest units)") ||
			!strings.Contains(bodies[1], "0.0000025 BTC (250 smallest units)") {
			t.Errorf("emails %q, want one for 400 units and one for 250", bodies)
		}
	})
}

func TestRunDeliversUntilCancelled(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		mb := startMailbox(t)
		sender, err := mail.NewSMTP(mb.url())
		if err != nil {
			t.Fatal(err)
		}
		w := s.worker(t, notify.Config{Mail: sender, Poll: 10 * time.Millisecond})

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			w.Run(ctx)
			close(done)
		}()
		s.cross(t) // after Run started: it must poll to find it
		// Delivered is recorded as sent, not only in the mailbox: the
		// mailbox holds the message before the server's reply reaches the
		// worker, and a cancel in between would end that send unrecorded.
		deadline := time.Now().Add(10 * time.Second)
		for (len(mb.messages()) == 0 || s.only(t).SentAt == nil) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context was cancelled")
		}
		if got := len(mb.messages()); got != 1 {
			t.Fatalf("mailbox holds %d messages, want 1", got)
		}
		if n := s.only(t); n.SentAt == nil || n.Channel != "smtp" {
			t.Errorf("notification %+v, want sent on smtp", n)
		}
	})
}

// senderFunc is a mail.Sender made of a function.
type senderFunc func(ctx context.Context, m mail.Message) error

func (f senderFunc) Send(ctx context.Context, m mail.Message) error { return f(ctx, m) }

func TestWorkerLeavesTheRestWhenHalfTheLeaseIsGone(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		var calls atomic.Int64
		w := s.worker(t, notify.Config{Mail: senderFunc(func(context.Context, mail.Message) error {
			calls.Add(1)
			s.env.Clock.Advance(notify.DefaultLease/2 + time.Second) // a very slow server
			return nil
		})})
		s.insert(t, 2)

		runOnce(t, w, 1) // the second is left leased, not sent late
		runOnce(t, w, 0) // and no one may take it before the lease ends
		s.env.Clock.Advance(notify.DefaultLease / 2)
		runOnce(t, w, 1)
		if got := calls.Load(); got != 2 {
			t.Errorf("%d sends, want 2", got)
		}
		for _, n := range s.notifications(t) {
			if n.SentAt == nil || n.Attempts != 1 {
				t.Errorf("notification %+v, want sent after 1 attempt", n)
			}
		}
	})
}

func TestWorkerCancelledMidSendCountsNoAttempt(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, st store.Store) {
		s := newScene(t, st, 1000)
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int64
		w := s.worker(t, notify.Config{Mail: senderFunc(func(ctx context.Context, _ mail.Message) error {
			if calls.Add(1) == 1 {
				cancel() // shutdown while the server is talking
				return ctx.Err()
			}
			return nil
		})})
		s.insert(t, 1)

		if n, err := w.RunOnce(ctx); n != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("RunOnce = %d, %v; want 0, context.Canceled", n, err)
		}
		if n := s.only(t); n.Attempts != 0 || n.LastError != "" {
			t.Errorf("notification %+v, want no attempt counted", n)
		}
		runOnce(t, w, 0) // still leased
		s.env.Clock.Advance(notify.DefaultLease)
		runOnce(t, w, 1)
		if n := s.only(t); n.SentAt == nil || n.Attempts != 1 {
			t.Errorf("notification %+v, want sent after 1 attempt", n)
		}
	})
}

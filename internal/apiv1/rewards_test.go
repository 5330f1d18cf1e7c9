package apiv1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// payoutsReply is the shape of a /payouts reply (spec 2.1), as /payouts
// encoded it before its rewards were kept.
type payoutsReply struct {
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Rewards []reward `json:"rewards"`
}

// encoderReply is the /payouts reply as the Encoder writes it for list:
// what payoutsBody must write, byte for byte.
func encoderReply(t testing.TB, list []drip.Payout) []byte {
	t.Helper()
	rs := make([]reward, len(list))
	for i, p := range list {
		rs[i] = reward{To: p.To, Amount: p.Amount, Date: p.CreatedAt.UTC().Format(dateLayout)}
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(payoutsReply{Status: 200, Message: "OK", Rewards: rs}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPayoutsBodyIsTheEncodersReply(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	odd := []string{
		"plain@example.com", `quote"and\backslash`, "<script>&amp;</script>", "ünïcødé ✓",
		"line\u2028sep\u2029", "ctl\x01\x1f", "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "",
	}
	var list []drip.Payout
	for i := range 150 {
		list = append(list, drip.Payout{
			ID: int64(1000 + i), To: odd[i%len(odd)], Amount: int64(i) * 987654321,
			CreatedAt: time.Date(2026, 11, 28, 23, 59, i%60, 999, tokyo).Add(time.Duration(i) * time.Hour),
		})
	}
	c := newRewards()
	for _, n := range []int{0, 1, 2, 100, 150} {
		for pass := range 2 { // encoded, then from the kept rewards
			got, want := c.payoutsBody(list[:n]), encoderReply(t, list[:n])
			if !bytes.Equal(got, want) {
				t.Fatalf("%d rewards, pass %d:\n got %s\nwant %s", n, pass, got, want)
			}
		}
	}
	// A list that shares some payouts with one read before (a batch
	// later): the kept rewards and the new ones together.
	if got, want := c.payoutsBody(list[40:140]), encoderReply(t, list[40:140]); !bytes.Equal(got, want) {
		t.Fatalf("overlapping list:\n got %s\nwant %s", got, want)
	}
}

// TestPayoutsBodyPastTheBound: once rewardsKept rewards are kept, the cache
// starts afresh, and replies stay exact across the reset.
func TestPayoutsBodyPastTheBound(t *testing.T) {
	c := newRewards()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	page := make([]drip.Payout, 100)
	for start := 0; start < rewardsKept+300; start += len(page) {
		for i := range page {
			id := start + i
			page[i] = drip.Payout{ID: int64(id), To: fmt.Sprintf("user%d@example.com", id), Amount: int64(id), CreatedAt: at.Add(time.Duration(id) * time.Second)}
		}
		if got, want := c.payoutsBody(page), encoderReply(t, page); !bytes.Equal(got, want) {
			t.Fatalf("page from %d:\n got %s\nwant %s", start, got, want)
		}
		if len(c.kept) > rewardsKept {
			t.Fatalf("%d rewards kept, bound %d", len(c.kept), rewardsKept)
		}
	}
	if len(c.kept) >= rewardsKept {
		t.Fatalf("%d rewards kept after %d payouts: the cache never started afresh", len(c.kept), rewardsKept+300)
	}
}

// BenchmarkPayoutsBody compares a 100-payout reply written from the kept
// rewards with encoding it (the former /payouts path).
func BenchmarkPayoutsBody(b *testing.B) {
	list := make([]drip.Payout, 100)
	for i := range list {
		list[i] = drip.Payout{ID: int64(i), To: fmt.Sprintf("bench%d@example.com", i), Amount: 1000, CreatedAt: time.Now()}
	}
	b.Run("kept", func(b *testing.B) {
		c := newRewards()
		b.ReportAllocs()
		for b.Loop() {
			_ = c.payoutsBody(list)
		}
	})
	b.Run("encoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = encoderReply(b, list)
		}
	})
}

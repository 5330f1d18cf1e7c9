package apiv1

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dripfaucet/drip/internal/payout"
)

// TestSendBodyIsTheEncoders checks the hand-written send reply against
// what encoding/json's Encoder writes for the same reply, byte for byte:
// the edges of every number, and strings with each character the Encoder
// escapes (which take the Encoder's path).
func TestSendBodyIsTheEncoders(t *testing.T) {
	t.Parallel()
	encoder := func(res *payout.SendResult) []byte {
		var buf bytes.Buffer
		if err := json.NewEncoder(&buf).Encode(newSendReply(res)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	check := func(res *payout.SendResult) {
		t.Helper()
		if got, want := sendBody(res), encoder(res); !bytes.Equal(got, want) {
			t.Errorf("sendBody(%+v):\n got %s\nwant %s", *res, got, want)
		}
	}
	numbers := []int64{0, 1, 9, 10, 99_999_999, 100_000_000, 100_000_001, 123_456_789_012, -1, -150_000_000,
		math.MaxInt64, math.MinInt64, 1 << 53, 1<<53 + 1}
	rates := []float64{0, 1, 119, 0.5, 0.999999, 1e-7, -3, 1e15, 1 << 53, 1<<53 + 1, 1e20, 1e21, 9.2e18, math.MaxInt64}
	for _, n := range numbers {
		for _, rate := range rates {
			check(&payout.SendResult{PayoutID: n, Currency: "BTC", Balance: n, RateRemaining: rate,
				PayoutUserHash: "6b86b273ff34fce19d6b804eff5a3f5747ada4ea"})
		}
	}
	for _, s := range []string{"", "BTC", "a\"b", `a\b`, "<script>", "a&b", "a>b", "\x00", "\x1f", "\x7f", "é",
		"\u2028", "\u2029", "\xff", "tab\there", " ", "~"} {
		check(&payout.SendResult{PayoutID: 7, Currency: s, Balance: 5, RateRemaining: 1, PayoutUserHash: "h"})
		check(&payout.SendResult{PayoutID: 7, Currency: "DOGE", Balance: 5, RateRemaining: 1, PayoutUserHash: s})
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("abcXYZ019 _-.~\"\\<>&\x00\x1f\x7f\x80\xe2\xff")
	text := func() string {
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		check(&payout.SendResult{PayoutID: r.Int64() >> r.IntN(64), Currency: text(), Balance: r.Int64() - r.Int64(),
			RateRemaining: r.NormFloat64() * math.Pow(10, float64(r.IntN(25))), PayoutUserHash: text()})
	}
}

// BenchmarkSendReply writes a paid send's reply both ways: by hand
// (sendBody) and through the Encoder, as the handler did before.
func BenchmarkSendReply(b *testing.B) {
	res := &payout.SendResult{PayoutID: 123456, Currency: "BTC", Balance: 99_999_000, RateRemaining: 119,
		PayoutUserHash: "6b86b273ff34fce19d6b804eff5a3f5747ada4ea"}
	var sink bytes.Buffer
	b.Run("sendBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink.Reset()
			sink.Write(sendBody(res))
		}
	})
	b.Run("Encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink.Reset()
			var r any = newSendReply(res)
			_ = json.NewEncoder(&sink).Encode(r)
		}
	})
}

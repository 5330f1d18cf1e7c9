package apiv1

import (
	"encoding/json"
	"strconv"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
)

// sendReply is a paid send's reply (spec 2.1).
type sendReply struct {
	Status             int         `json:"status"`
	Message            string      `json:"message"`
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Currency           string      `json:"currency"`
	Balance            int64       `json:"balance"`
	BalanceBitcoin     json.Number `json:"balance_bitcoin"`
	PayoutID           int64       `json:"payout_id"`
	PayoutUserHash     string      `json:"payout_user_hash"`
}

const sentMessage = "Payout sent."

func newSendReply(res *payout.SendResult) sendReply {
	return sendReply{
		Status: 200, Message: sentMessage, RateLimitRemaining: float64(int64(res.RateRemaining)),
		Currency: res.Currency, Balance: res.Balance, BalanceBitcoin: coins(res.Balance),
		PayoutID: res.PayoutID, PayoutUserHash: res.PayoutUserHash,
	}
}

// sendBody is the body of newSendReply(res): exactly the bytes
// encoding/json's Encoder writes for it, newline included (encode_test.go
// compares the two over many replies), written by hand. A send is v1's hot
// path, and the Encoder's reflection was the largest part of the handler's
// own CPU (BENCHMARKS.md, round twenty-seven). A reply with a string the
// Encoder would escape goes through the Encoder.
func sendBody(res *payout.SendResult) encodedReply {
	if !plain(res.Currency) || !plain(res.PayoutUserHash) {
		b, _ := json.Marshal(newSendReply(res))
		return append(b, '\n')
	}
	b := make([]byte, 0, 192+len(res.Currency)+len(res.PayoutUserHash))
	b = append(b, `{"status":200,"message":"`+sentMessage+`","rate_limit_remaining":`...)
	// A whole number below 2^63: the Encoder writes it in the 'f' format
	// (an exponent only from 1e21 on).
	b = strconv.AppendFloat(b, float64(int64(res.RateRemaining)), 'f', -1, 64)
	b = append(b, `,"currency":"`...)
	b = append(b, res.Currency...)
	b = append(b, `","balance":`...)
	b = strconv.AppendInt(b, res.Balance, 10)
	b = append(b, `,"balance_bitcoin":`...)
	b = drip.AppendCoins(b, res.Balance)
	b = append(b, `,"payout_id":`...)
	b = strconv.AppendInt(b, res.PayoutID, 10)
	b = append(b, `,"payout_user_hash":"`...)
	b = append(b, res.PayoutUserHash...)
	return append(b, "\"}\n"...)
}

// plain tells whether encoding/json writes s between its quotes as it is:
// printable ASCII without the characters it escapes (the quote, the
// backslash, and the HTML ones <, > and &).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

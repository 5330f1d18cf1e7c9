package apiv2

import (
	"context"
	"encoding/json"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
)

type sendParams struct {
	IdempotencyKey string     `json:"idempotency_key"`
	To             string     `json:"to"`
	Amount         amountText `json:"amount"`
	Currency       string     `json:"currency"`
	IPAddress      string     `json:"ip_address"`
	Referral       string     `json:"referral"`
}

// sendData is the data of the send reply, exactly as spec 4.2 gives it.
type sendData struct {
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Currency           string      `json:"currency"`
	Balance            int64       `json:"balance"`
	BalanceBitcoin     json.Number `json:"balance_bitcoin"`
	PayoutID           int64       `json:"payout_id"`
	PayoutUserHash     string      `json:"payout_user_hash"`
}

// send pays through the v1 pipeline, bound to an idempotency key (D35) and
// under the key's daily USD cap (D36). A replay answers the original
// reply with Idempotent-Replayed: true.
func (h *Handler) send(ctx context.Context, c *payout.Caller, in *input) (any, string, error) {
	var p sendParams
	if err := in.decode(&p); err != nil {
		return nil, "", err
	}
	if p.IdempotencyKey == "" {
		return nil, "", drip.Errorf(drip.CodeInvalid, "Missing idempotency_key: one unique key per logical payout, reused on retries.")
	}
	res, replayed, err := h.Payouts.SendIdempotent(ctx, c, p.IdempotencyKey, payout.SendRequest{
		To: p.To, Amount: string(p.Amount), Currency: p.Currency, IPAddress: p.IPAddress, Referral: p.Referral,
	})
	if err != nil {
		return nil, "", err
	}
	if replayed {
		in.replyHeader.Set("Idempotent-Replayed", "true")
	}
	return sendData{
		RateLimitRemaining: float64(int64(res.RateRemaining)), Currency: res.Currency, Balance: res.Balance,
		BalanceBitcoin: reply.Coins(res.Balance), PayoutID: res.PayoutID, PayoutUserHash: res.PayoutUserHash,
	}, "Payout sent.", nil
}

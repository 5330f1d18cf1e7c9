package main

// Batches in the fault suite's load (D61): the third kind of request of a
// client's turn, after a v1 send and a v2 send. A batch carries a few
// items, each a send of the load with an idempotency key of its own (its
// tag), and now and then the same key again: a duplicate (the same
// request: answered as its first occurrence, a payout as its replay) or a
// reuse (another request: refused as idempotency_key_reuse, never paid),
// and now and then an item to a recipient who does not exist (refused as
// recipient_not_payable). A batch not wholly answered (an item unavailable
// or outcome_unknown, or no answer) is sent again, whole, with the same
// keys, as a v2 send is retried.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

const (
	batchMin, batchMax = 2, 8 // items a batch carries
	// reuseAmount is what a reused key asks for: not the sendAmount of
	// the key's first occurrence, so that a payout for it shows.
	reuseAmount = 2 * sendAmount
	// answerRefused begins the answer of a batch item refused as meant:
	// "refused 409 idempotency_key_reuse".
	answerRefused = "refused"
)

// The refusals a batch item is meant to get, in place of paid.
var (
	wantReuse   = fmt.Sprintf("%s %d %s", answerRefused, http.StatusConflict, drip.CodeIdempotencyReuse)
	wantUnknown = fmt.Sprintf("%s %d %s", answerRefused, http.StatusBadRequest, drip.CodeRecipientUnknown)
)

// faultBatch is one logical batch: its items in the order sent, and how
// many requests it took.
type faultBatch struct {
	tag   string
	items []batchItem
	sends []*faultSend // one per key, in the order of its first occurrence
	tries int
	// problems are what its answers got wrong beyond an item's answer
	// (the counts of paid, replayed and failed against the items).
	problems []string
}

// batchItem is one item of a batch: the send of its key, and what it asks.
type batchItem struct {
	send   *faultSend
	kind   string // "" the key's first occurrence; "duplicate" the same request again; "reuse" another request
	to     string
	amount int64
	want   string // the answer meant in place of paid: "" to be paid
}

// newBatch makes a batch of batchMin to batchMax items.
func (l *sendLoad) newBatch(tag string) *faultBatch {
	b := &faultBatch{tag: tag}
	for n := batchMin + rand.N(batchMax-batchMin+1); len(b.items) < n; {
		if len(b.sends) > 0 && rand.N(4) == 0 {
			// Another occurrence of a key this batch carries already.
			first := b.first(b.sends[rand.N(len(b.sends))])
			it := first
			it.kind = "duplicate"
			if rand.N(3) == 0 {
				it.kind, it.amount, it.want = "reuse", reuseAmount, wantReuse
			}
			b.items = append(b.items, it)
			continue
		}
		s := &faultSend{tag: fmt.Sprintf("%s-%d", tag, len(b.sends)), api: "batch", batch: b,
			to: l.fx.recipients[rand.N(len(l.fx.recipients))]}
		it := batchItem{send: s, to: s.to.Username, amount: sendAmount}
		if rand.N(10) == 0 {
			// Nobody: the item is refused, whatever the other items get.
			s.to = &drip.User{Username: "nobody-" + s.tag}
			it.to, it.want = s.to.Username, wantUnknown
		}
		b.sends = append(b.sends, s)
		b.items = append(b.items, it)
	}
	return b
}

// first is the first occurrence of s's key in the batch.
func (b *faultBatch) first(s *faultSend) batchItem {
	for _, it := range b.items {
		if it.send == s {
			return it
		}
	}
	panic("a send not in its batch")
}

func (b *faultBatch) String() string {
	parts := make([]string, len(b.items))
	for i, it := range b.items {
		parts[i] = it.send.tag
		if it.kind != "" {
			parts[i] = it.kind + " of " + it.send.tag
		}
		parts[i] += fmt.Sprintf(" %d to %s", it.amount, it.to)
	}
	return fmt.Sprintf("batch %s, %d requests: [%s]", b.tag, b.tries, strings.Join(parts, "; "))
}

// sendBatch sends b until it is wholly answered (paid or refused), v2Tries
// times at most, and records each item's answer as an attempt of its
// key's send.
func (l *sendLoad) sendBatch(b *faultBatch) {
	for try := 1; ; try++ {
		b.tries = try
		answers := l.requestBatch(b, try)
		if l.committed != nil {
			// At once, as for a v2 send: each key answered
			// outcome_unknown, asked once.
			probed := map[*faultSend]bool{}
			for i, a := range answers {
				s := b.items[i].send
				if a.answer != answerUnknown {
					continue
				}
				committed, seen := probed[s]
				if !seen {
					var err error
					if committed, err = l.committed(context.Background(), s.tag); err != nil {
						continue
					}
					probed[s] = committed
				}
				answers[i].probed, answers[i].committed = true, committed
			}
		}
		paid, retry := false, false
		for i, a := range answers {
			s := b.items[i].send
			s.attempts = append(s.attempts, a)
			paid = paid || a.answer == answerPaid
			retry = retry || a.answer == answerNothing || a.answer == answerUnknown || a.answer == answerTransport
		}
		if paid {
			l.mu.Lock()
			l.paid++
			if answers[0].at.After(l.last) {
				l.last = answers[0].at
			}
			l.mu.Unlock()
		}
		if !retry || try == v2Tries {
			return
		}
		time.Sleep(v2RetryWait)
	}
}

// requestBatch makes one request of b and classifies each item's answer.
func (l *sendLoad) requestBatch(b *faultBatch, try int) []attempt {
	type wireItem struct {
		IdempotencyKey string `json:"idempotency_key"`
		To             string `json:"to"`
		Amount         int64  `json:"amount"`
		Currency       string `json:"currency"`
		Referral       string `json:"referral"`
	}
	wire := make([]wireItem, len(b.items))
	for i, it := range b.items {
		wire[i] = wireItem{IdempotencyKey: it.send.tag, To: it.to, Amount: it.amount, Currency: "BTC", Referral: it.send.tag}
	}
	body, _ := json.Marshal(map[string]any{"items": wire})
	req, _ := http.NewRequest(http.MethodPost, l.base+"/api/v2/send/batch", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+l.fx.v2Key)

	a := attempt{at: time.Now(), try: try}
	resp, err := l.client.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	a.latency = time.Since(a.at)
	answers := make([]attempt, len(b.items))
	for i, it := range b.items {
		answers[i] = a
		answers[i].item, answers[i].want = it.kind, it.want
	}
	if err != nil {
		for i := range answers {
			answers[i].answer, answers[i].detail = answerTransport, err.Error()
		}
		return answers
	}
	whole, items, problem := classifyBatch(resp.StatusCode, resp.Header.Get("Retry-After"), raw, b)
	if problem != "" {
		b.problems = append(b.problems, fmt.Sprintf("request %d: %s", try, problem))
	}
	for i := range answers {
		if items == nil {
			answers[i].answer, answers[i].detail = whole, fmt.Sprintf("the batch: HTTP %d %s", resp.StatusCode, bytes.TrimSpace(raw))
			continue
		}
		answers[i].answer, answers[i].payoutID, answers[i].replayed = items[i].answer, items[i].payoutID, items[i].replayed
		answers[i].detail = items[i].detail
	}
	return answers
}

// batchAnswer is one item's outcome in a batch's reply.
type batchAnswer struct {
	answer   string
	payoutID int64
	replayed bool
	detail   string
}

// classifyBatch reads a batch's answer: 200 with each item's outcome, an
// item paid (200, success), refused (its /send status and code), or 503
// unavailable or outcome_unknown (D61); or, for the batch as a whole, 503
// unavailable or outcome_unknown with Retry-After (D58), which is then
// every item's answer (items nil). problem is what the reply's counts get
// wrong about its items.
func classifyBatch(httpStatus int, retryAfter string, raw []byte, b *faultBatch) (whole string, items []batchAnswer, problem string) {
	var env struct {
		Data *struct {
			Paid     int               `json:"paid"`
			Replayed int               `json:"replayed"`
			Failed   int               `json:"failed"`
			Items    []json.RawMessage `json:"items"`
		} `json:"data"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return fmt.Sprintf("batch HTTP %d, not an envelope", httpStatus), nil, ""
	}
	if httpStatus != http.StatusOK || env.Data == nil {
		// The batch as a whole: answered as a v2 send would be.
		answer, _ := classifyV2(httpStatus, retryAfter, raw)
		if !strings.HasPrefix(answer, "v2 ") {
			return answer, nil, ""
		}
		return "batch" + strings.TrimPrefix(answer, "v2"), nil, ""
	}
	if len(env.Data.Items) != len(b.items) {
		return fmt.Sprintf("batch 200 with %d items for %d", len(env.Data.Items), len(b.items)), nil, ""
	}
	items = make([]batchAnswer, len(b.items))
	var paid, replayed, failed int
	for i, rawItem := range env.Data.Items {
		var it struct {
			IdempotencyKey string `json:"idempotency_key"`
			Success        bool   `json:"success"`
			Status         int    `json:"status"`
			Replayed       bool   `json:"replayed"`
			Data           *struct {
				PayoutID int64 `json:"payout_id"`
			} `json:"data"`
			Error *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		ans := &items[i]
		ans.detail = fmt.Sprintf("the batch: HTTP 200, item %d: %s", i, bytes.TrimSpace(rawItem))
		switch err := json.Unmarshal(rawItem, &it); {
		case err != nil:
			ans.answer = "batch item not an outcome"
		case it.IdempotencyKey != b.items[i].send.tag:
			ans.answer = fmt.Sprintf("batch item answered for the key %q", it.IdempotencyKey)
		case it.Success && it.Status == http.StatusOK && it.Data != nil && it.Data.PayoutID > 0 && it.Error == nil:
			ans.answer, ans.payoutID, ans.replayed = answerPaid, it.Data.PayoutID, it.Replayed
			ans.detail = fmt.Sprintf("payout %d (item %d of the batch)", it.Data.PayoutID, i)
		case it.Success || it.Error == nil || it.Data != nil || it.Replayed:
			ans.answer = fmt.Sprintf("batch item %d success %t", it.Status, it.Success)
		case it.Status == http.StatusServiceUnavailable && (it.Error.Code == answerNothing || it.Error.Code == answerUnknown):
			ans.answer = it.Error.Code
		default:
			ans.answer = fmt.Sprintf("%s %d %s", answerRefused, it.Status, it.Error.Code)
		}
		switch {
		case ans.answer == answerPaid && ans.replayed:
			replayed++
		case ans.answer == answerPaid:
			paid++
		default:
			failed++
		}
	}
	if env.Data.Paid != paid || env.Data.Replayed != replayed || env.Data.Failed != failed {
		problem = fmt.Sprintf("counts paid %d, replayed %d, failed %d; its items: %d, %d, %d",
			env.Data.Paid, env.Data.Replayed, env.Data.Failed, paid, replayed, failed)
	}
	return "", items, problem
}

// checkBatchItems checks what a batch's items were promised beyond what
// every send is (D61): a duplicate is answered as its first occurrence in
// the same request, a payout as its replay; an item refused as meant (a
// reused key, a recipient who does not exist) pays nothing: no payout
// carries a refused key, nor a reused key's other request. It returns
// the violations of each, and how many answers each looked at.
func checkBatchItems(sends []*faultSend, byTag map[string][]drip.Payout) (dups, refusedPaid []string, nDups, nRefused int) {
	for _, s := range sends {
		if s.batch == nil {
			continue
		}
		var first *attempt
		for i := range s.attempts {
			a := &s.attempts[i]
			if strings.HasPrefix(a.answer, answerRefused) {
				nRefused++
			}
			switch a.item {
			case "":
				first = a
			case "duplicate":
				nDups++
				if first == nil || first.try != a.try || a.answer != first.answer || a.payoutID != first.payoutID ||
					a.answer == answerPaid && !a.replayed {
					dups = append(dups, fmt.Sprintf("a duplicate in request %d answered %s %s, not as its first: %s\n    %s", a.try, a.answer, a.detail, s, s.batch))
				}
			}
		}
		for _, p := range byTag[s.tag] {
			if s.attempts[0].want != "" || p.Amount != sendAmount || p.RecipientID != s.to.ID {
				refusedPaid = append(refusedPaid, fmt.Sprintf("payout %d of %d to user %d carries the key: %s\n    %s", p.ID, p.Amount, p.RecipientID, s, s.batch))
			}
		}
	}
	return dups, refusedPaid, nDups, nRefused
}

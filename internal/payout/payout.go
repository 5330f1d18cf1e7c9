// Package payout is the send pipeline shared by every interface that pays
// (v1 now; v2 and the web pages use the same calls), and the faucet-facing
// operations around it. Checks run in the order of D21, first failure wins:
// key -> IP whitelist and owner suspension -> request rate -> currency ->
// amount -> recipient -> owner's rules -> (in the ledger) send limits ->
// balance. Every refusal after authorization records a payout.failed event.
package payout

import (
	"cmp"
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/antifraud"
	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/gencache"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// Service runs sends and the reads a faucet's key may make.
type Service struct {
	store       store.Store
	faucets     *faucet.Service
	users       *user.Registry
	coins       *coin.Catalog
	ledger      *ledger.Ledger
	limiter     ratelimit.Limiter
	callers     ratelimit.Limiter // per caller IP (D29); nil: no such limit
	keys        *key.Service
	prices      price.Source
	now         func() time.Time
	sending     inflight
	bound       boundKeys
	batchSlots  chan struct{} // the batch items being sent at once (batchInFlight)
	defaultCoin string
	obs         Observer
}

// Observer is told of the pipeline's outcomes, for metrics. Its methods
// run on the request's path, so they must be quick.
type Observer interface {
	// Paid is a committed payout of coin.
	Paid(coin string)
	// Refused is a send refused with code, whose payout.failed event is
	// recorded; coin is "" when the send's currency was not valid.
	Refused(code, coin string)
	// RateLimited is a request refused by its key's (or v1 faucet's)
	// request rate, or by its caller IP's when callerIP (D29).
	RateLimited(callerIP bool)
}

type noObserver struct{}

func (noObserver) Paid(string)            {}
func (noObserver) Refused(string, string) {}
func (noObserver) RateLimited(bool)       {}

// Deps are the services the pipeline is built from.
type Deps struct {
	Store   store.Store
	Faucets *faucet.Service
	Users   *user.Registry
	Coins   *coin.Catalog
	Ledger  *ledger.Ledger
	Limiter ratelimit.Limiter
	// Callers limits the requests of each caller IP, authenticated or not
	// (D29); nil sets no such limit.
	Callers ratelimit.Limiter
	Keys    *key.Service
	Prices  price.Source // for daily USD caps (D36)
	// DefaultCoin is the deployment's default coin (D28): the coin of a
	// read that names none. BTC when empty.
	DefaultCoin string
	Now         func() time.Time
	// Observer is told of payouts, refusals and rate limits (metrics);
	// nil: no one.
	Observer Observer
}

func NewService(d Deps) *Service {
	var obs Observer = noObserver{}
	if d.Observer != nil {
		obs = d.Observer
	}
	return &Service{obs: obs, store: d.Store, faucets: d.Faucets, users: d.Users, coins: d.Coins,
		ledger: d.Ledger, limiter: d.Limiter, callers: d.Callers, keys: d.Keys, prices: d.Prices, now: d.Now, defaultCoin: cmp.Or(drip.Symbol(d.DefaultCoin), "BTC"),
		sending: inflight{m: map[string]chan struct{}{}}, batchSlots: make(chan struct{}, batchInFlight)}
}

// Caller is a faucet whose request passed authorization: its key is valid,
// its IP allowed, its owner active, and its request rate not exceeded.
type Caller struct {
	Faucet        *drip.Faucet
	Key           *drip.Key // the v2 key, nil for v1
	RateRemaining float64   // D24
}

// AuthorizeV1 authorizes a v1 request made with api_key from callerIP.
func (s *Service) AuthorizeV1(ctx context.Context, apiKey string, callerIP netip.Addr) (*Caller, error) {
	if err := s.limitCaller(ctx, callerIP); err != nil {
		return nil, err
	}
	f, err := s.faucets.Authenticate(ctx, apiKey)
	if err != nil {
		s.refusedKey(ctx, callerIP, err)
		return nil, err
	}
	// The bucket is the faucet's, not the key string's: rotating the key
	// does not refill it.
	return s.Authorize(ctx, f, callerIP, "faucet:"+strconv.FormatInt(f.ID, 10))
}

// failedKeyCost is what a refused key costs its caller's IP besides the
// request itself (D29): someone guessing keys runs out of requests
// eleven times sooner than someone using theirs.
const failedKeyCost = 10

// limitCaller takes one request from the caller IP's bucket (D29). It runs
// before the key is looked at, so unauthenticated requests count too.
func (s *Service) limitCaller(ctx context.Context, ip netip.Addr) error {
	if s.callers == nil {
		return nil
	}
	d, err := allowOnce(ctx, s.callers, callerBucket(ip), 1)
	if err != nil {
		return err
	}
	if !d.Allowed {
		s.obs.RateLimited(true)
		e := drip.Errorf(drip.CodeRateLimited, "Rate limited: too many requests from your IP address; retry in %d seconds.", int(d.RetryAfter.Seconds())+1)
		e.RetryAfter = d.RetryAfter
		return e
	}
	return nil
}

// refusedKey charges the caller IP's bucket for a key that was refused.
func (s *Service) refusedKey(ctx context.Context, ip netip.Addr, err error) {
	if s.callers != nil && drip.ErrorCode(err) == drip.CodeUnauthenticated {
		_, _ = allowOnce(ctx, s.callers, callerBucket(ip), failedKeyCost) // the next request learns the outcome
	}
}

// Serve runs serve, a request's work, with a cache generation pinned for
// the request (D63), and returns what the request may answer. A send
// (send true) takes the latest generation known (gencache.Optimistic),
// which its payment's transaction checks; should it have moved, the send
// is served again under gencache.Pinned, counted once against its rates.
// Anything else is served under gencache.Pinned. A fault (the database
// out, an outcome unknown) says the service's state, not what was read
// from memory, and is answered as it is; anything else only once what the
// request read from memory is confirmed (gencache.Confirm): a send paid or
// refused in its payment's transaction was confirmed there, anything else
// is by a read now.
func Serve[T any](ctx context.Context, send bool, serve func(ctx context.Context) (T, error)) (T, error) {
	ctx = context.WithValue(ctx, decisionsKey{}, &decisions{})
	pin := gencache.Pinned
	if send {
		pin = gencache.Optimistic
	}
	v, err := answerable(pin(ctx), serve)
	if errors.Is(err, gencache.ErrStale) {
		v, err = answerable(gencache.Pinned(ctx), serve)
	}
	return v, err
}

// answerable is serve's outcome in ctx as Serve may answer it.
func answerable[T any](ctx context.Context, serve func(ctx context.Context) (T, error)) (T, error) {
	v, err := serve(ctx)
	if err == nil || !drip.ErrorCode(err).Fault() {
		if cerr := gencache.Confirm(ctx); cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

type decisionsKey struct{}

// decisions are the rate decisions of a request that may be served twice
// (Serve): each rate counts it once, and serving it again reuses them.
type decisions struct {
	mu   sync.Mutex
	made []decided // a request takes one to three rates: a list, not a map
}

type decided struct {
	k decisionKey
	d ratelimit.Decision
}

type decisionKey struct {
	l      ratelimit.Limiter
	bucket string
	n      int
}

// allowOnce takes n requests from bucket of l, or, in a request being
// served again (Serve), answers as the first time did.
func allowOnce(ctx context.Context, l ratelimit.Limiter, bucket string, n int) (ratelimit.Decision, error) {
	memo, _ := ctx.Value(decisionsKey{}).(*decisions)
	k := decisionKey{l, bucket, n}
	if memo != nil {
		memo.mu.Lock()
		i := slices.IndexFunc(memo.made, func(m decided) bool { return m.k == k })
		var d ratelimit.Decision
		if i >= 0 {
			d = memo.made[i].d
		}
		memo.mu.Unlock()
		if i >= 0 {
			return d, nil
		}
	}
	d, err := l.AllowN(ctx, bucket, n)
	if err == nil && memo != nil {
		memo.mu.Lock()
		memo.made = append(memo.made, decided{k, d})
		memo.mu.Unlock()
	}
	return d, err
}

// callerBucket names a caller IP's bucket: an IPv4 address, or the /64 of
// an IPv6 one (a single host commonly holds a whole /64).
func callerBucket(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + ip.String()
}

// Authorize applies the faucet's IP whitelist, its owner's suspension and
// the request rate of rateKey to an authenticated request.
func (s *Service) Authorize(ctx context.Context, f *drip.Faucet, callerIP netip.Addr, rateKey string) (*Caller, error) {
	if !f.AllowsIP(callerIP) {
		return nil, drip.Errorf(drip.CodeForbidden, "Your IP address is not whitelisted for this faucet.")
	}
	if f.OwnerStatus != drip.UserActive {
		return nil, drip.Errorf(drip.CodeForbidden, "The faucet owner's account is suspended.")
	}
	d, err := allowOnce(ctx, s.limiter, rateKey, 1)
	if err != nil {
		return nil, err
	}
	if !d.Allowed {
		s.obs.RateLimited(false)
		e := drip.Errorf(drip.CodeRateLimited, "Rate limited: too many requests; retry in %d seconds.", int(d.RetryAfter.Seconds())+1)
		e.RetryAfter = d.RetryAfter
		return nil, e
	}
	return &Caller{Faucet: f, RateRemaining: d.Remaining}, nil
}

// SendRequest is a send as the caller gave it. Amount stays text so that
// its validation keeps its place in the D21 order (after the currency).
type SendRequest struct {
	To        string
	Currency  string
	Amount    string
	IPAddress string // the claimer's IP, optional
	Referral  string // free tag for the owner's reports, optional
}

// SendResult is a paid send.
type SendResult struct {
	PayoutID       int64
	Currency       string
	Amount         int64
	Balance        int64 // faucet balance after the payout
	PayoutUserHash string
	RateRemaining  float64
}

// Send pays req from the caller's faucet, or returns the *drip.Error that
// refused it. Nothing is paid unless the ledger committed the payout.
func (s *Service) Send(ctx context.Context, c *Caller, req SendRequest) (*SendResult, error) {
	return s.send(ctx, c, req, nil)
}

// send is Send, binding idem (a v2 idempotency key) to the payout if paid.
func (s *Service) send(ctx context.Context, c *Caller, req SendRequest, idem *drip.Idempotency) (*SendResult, error) {
	p, err := s.check(ctx, c, req, idem, true)
	if err != nil {
		return nil, err
	}
	receipt, err := s.ledger.Pay(ctx, p)
	if err == nil || !drip.ErrorCode(err).Fault() {
		// Paid or refused, the payment was decided in a transaction that
		// found p.Generation current (D63).
		gencache.Confirmed(ctx)
	}
	if err != nil {
		// Refusals from inside the ledger have their event already.
		if e, ok := err.(*drip.Error); ok && !e.Code.Fault() {
			s.obs.Refused(string(e.Code), p.Coin)
		}
		return nil, err
	}
	s.obs.Paid(p.Coin)
	return &SendResult{
		PayoutID: receipt.PayoutID, Currency: p.Coin, Amount: p.Amount, Balance: receipt.Balance,
		PayoutUserHash: p.Recipient.PayoutUserHash, RateRemaining: c.RateRemaining,
	}, nil
}

// check runs the checks of a send that come before the ledger, in the
// order of D21 (currency, amount, recipient, the owner's rules, then the
// pricing of a capped key's spend), and returns the payment to hand the
// ledger, or the refusal. record says whether a refusal is recorded (its
// payout.failed event, the metrics); a dry run records nothing (D62).
func (s *Service) check(ctx context.Context, c *Caller, req SendRequest, idem *drip.Idempotency, record bool) (*ledger.Payment, error) {
	to := strings.TrimSpace(req.To)
	p := &ledger.Payment{
		Faucet:      c.Faucet,
		To:          drip.Clip(to, 320), // the recorded copy; resolution uses all of to
		Coin:        drip.Symbol(req.Currency),
		IPAddress:   drip.Clip(strings.TrimSpace(req.IPAddress), 64),
		Referral:    drip.Clip(req.Referral, 64),
		Idempotency: idem,
	}
	// What ctx's request read from memory and no read has confirmed yet
	// is checked by the payment's transaction (gencache.Optimistic).
	p.Generation = gencache.Unconfirmed(ctx)
	coinLabel := "" // the coin of the metrics, once known valid
	refuse := func(err error, blacklisted bool) (*ledger.Payment, error) {
		var refusal *drip.Error
		// A fault (the database out, D58) is no answer to the request: the
		// caller retries, so it is neither an event nor a refusal.
		if !errors.As(err, &refusal) || refusal.Code.Fault() || !record {
			return nil, err
		}
		// A refusal judged on values from memory is recorded only once
		// they are known current (D63); else the send is served again.
		if cerr := gencache.Confirm(ctx); cerr != nil {
			return nil, cerr
		}
		if rerr := s.ledger.RecordRefusal(ctx, p, refusal, blacklisted); rerr != nil {
			return nil, rerr
		}
		s.obs.Refused(string(refusal.Code), coinLabel)
		return nil, refusal
	}
	// Parsed first so a refusal's event carries the amount, but judged after
	// the currency, as D21 orders.
	amount, amountOK := drip.ParseAmount(req.Amount)
	p.Amount = amount
	coin, err := s.coins.Active(ctx, req.Currency)
	if err != nil {
		return refuse(err, false)
	}
	coinLabel = coin.Symbol
	if !amountOK {
		return refuse(drip.Errorf(drip.CodeInvalidAmount, "Invalid amount: must be a positive integer in the smallest unit."), false)
	}
	if amount < coin.MinPayout {
		return refuse(drip.Errorf(drip.CodeInvalidAmount, "Invalid amount: the minimum %s payout is %d.", coin.Symbol, coin.MinPayout), false)
	}
	recipient, err := s.payable(ctx, to, coin.Symbol)
	if err != nil {
		return refuse(err, false)
	}
	p.Recipient = recipient
	refusal, blacklisted, err := s.checkRules(ctx, c.Faucet, recipient, p.To, p.IPAddress)
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return refuse(refusal, blacklisted)
	}
	if c.Key != nil && c.Key.DailyUSDCapMicros > 0 {
		if p.Spend, err = s.spend(ctx, c.Key, coin.Symbol, amount); err != nil {
			return refuse(err, false)
		}
	}
	return p, nil
}

// payable resolves a destination to a user who may be paid (D11).
func (s *Service) payable(ctx context.Context, to, coin string) (*drip.User, error) {
	u, err := s.users.Resolve(ctx, to, coin)
	if err != nil {
		return nil, err
	}
	return payableUser(u)
}

// payableUser is u if u may be paid: active and verified (D11).
func payableUser(u *drip.User) (*drip.User, error) {
	if u.Status != drip.UserActive {
		return nil, drip.Errorf(drip.CodeRecipientUnknown, "Recipient not payable: the account is suspended.")
	}
	if !u.EmailVerified {
		return nil, drip.Errorf(drip.CodeRecipientUnknown, "Recipient not payable: the account is not verified.")
	}
	return u, nil
}

// checkRules applies the owner's anti-fraud rules (D42) to the recipient.
func (s *Service) checkRules(ctx context.Context, f *drip.Faucet, u *drip.User, to, claimerIP string) (*drip.Error, bool, error) {
	rules := f.Rules
	if len(rules.Blacklist) == 0 && (!rules.AntiFraud || (rules.TrustRank == 0 && rules.NegativeRank >= 100)) {
		return nil, false, nil // nothing could refuse: skip the lookups
	}
	addresses, err := s.store.UserAddressList(ctx, u.ID)
	if err != nil {
		return nil, false, err
	}
	id := antifraud.Identity{Names: []string{u.Username, u.Email, u.PayoutUserHash, to}}
	for _, a := range addresses {
		id.Names = append(id.Names, a[strings.IndexByte(a, ':')+1:])
	}
	if ip, err := netip.ParseAddr(claimerIP); err == nil {
		id.IP = ip
	}
	now := s.now()
	return antifraud.Verdict(rules, id, func() (antifraud.Profile, error) {
		refusedBy, err := s.store.RefusalCountOthers(ctx, u.ID, f.ID, now.Add(-antifraud.RefusalWindow))
		return antifraud.Profile{
			EmailVerified: u.EmailVerified, AccountAge: now.Sub(u.CreatedAt),
			LinkedAddresses: len(addresses), RefusedBy: refusedBy,
		}, err
	})
}

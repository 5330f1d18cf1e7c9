// Package operation holds the operations a faucet's key may call, once for
// every interface that offers them: each v2 path (spec 4.2) and each tool
// of the tool server (spec 4.3) is a row of its interface's table over one
// Op of this package, and the web pages call the same ones. An operation
// is one typed function, (ctx, caller, Params) -> (Record, message,
// error): its parameters' validation, the services it calls and the
// record it answers with live here and nowhere else, so two interfaces
// cannot answer the same question differently.
//
// The Params and Record types carry json tags (the wire names) and
// jsonschema tags (the descriptions): the tool server's input and output
// schemas and the OpenAPI document of v2 are inferred from them (schema.go).
package operation

import (
	"context"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/webhook"
)

// Deps are the services the operations call.
type Deps struct {
	Payouts *payout.Service
	Faucets *faucet.Service
	Listing *listing.Service
	Audit   *audit.Service
	Events  *webhook.Feed
	Rate    ratelimit.Config // the request rate of every key (D40), which the rate-limit reads report
	Now     func() time.Time
}

// Decoder fills params, a pointer to an operation's Params, from a
// request: each interface decodes its own wire format (v2 a strict JSON
// body or a query, the tool server schema-checked arguments).
type Decoder func(params any) error

// Op is one operation: the scope a key needs to call it (the same on every
// interface, D16), the schemas of its parameters and of its record, and
// the call.
type Op struct {
	name   string
	scope  drip.Scope
	input  *jsonschema.Schema
	output *jsonschema.Schema
	record *jsonschema.Schema // output without a change's warning, as v2 answers it
	params func() any         // a new zero Params, for tests that generate requests
	call   func(ctx context.Context, c *payout.Caller, decode Decoder) (any, string, error)
}

// Name is the operation's name, its tool's where it has one.
func (o *Op) Name() string { return o.name }

// Scope is the scope a key needs to call the operation.
func (o *Op) Scope() drip.Scope { return o.scope }

// InputSchema is the schema of the operation's parameters, a copy the
// caller may change.
func (o *Op) InputSchema() *jsonschema.Schema { return o.input.CloneSchemas() }

// OutputSchema is the schema of the operation's record, a copy.
func (o *Op) OutputSchema() *jsonschema.Schema { return o.output.CloneSchemas() }

// RecordSchema is the schema of the record as v2 answers it: a change's
// record without its warning (its Record method), which the specification
// gives to the tool server alone (spec 4.3); OutputSchema otherwise. A
// copy.
func (o *Op) RecordSchema() *jsonschema.Schema { return o.record.CloneSchemas() }

// NewParams is a pointer to a new zero value of the operation's Params.
func (o *Op) NewParams() any { return o.params() }

// Call decodes the parameters with decode, validates them and runs the
// operation for the authorized caller c. It returns the record and a
// message saying what was done.
func (o *Op) Call(ctx context.Context, c *payout.Caller, decode Decoder) (record any, message string, err error) {
	return o.call(ctx, c, decode)
}

// validator is Params with rules of its own beyond their types: required
// fields, ranges. Its errors are the messages clients read (D25).
type validator interface{ validate() error }

// refiner is Params whose schema says more than the types can: ranges,
// patterns, formats. Every rule validate enforces has its twin here.
type refiner interface{ refine(s *jsonschema.Schema) }

// Define makes an operation of run, whose parameters decode into P and
// whose record is R.
func Define[P, R any](name string, scope drip.Scope, run func(ctx context.Context, c *payout.Caller, p P) (R, string, error)) *Op {
	in := schemaFor[P](true)
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{} // "no parameters", said explicitly
	}
	if r, ok := any(*new(P)).(refiner); ok {
		r.refine(in)
	}
	out, record := schemaFor[R](false), (*jsonschema.Schema)(nil)
	if r, ok := any(*new(R)).(interface{ Record() any }); ok {
		record = schemaOf(reflect.TypeOf(r.Record()), false)
	} else {
		record = out
	}
	return &Op{
		name: name, scope: scope, input: in, output: out, record: record,
		params: func() any { return new(P) },
		call: func(ctx context.Context, c *payout.Caller, decode Decoder) (any, string, error) {
			var p P
			if err := decode(&p); err != nil {
				return nil, "", err
			}
			if v, ok := any(p).(validator); ok {
				if err := v.validate(); err != nil {
					return nil, "", err
				}
			}
			rec, msg, err := run(ctx, c, p)
			if err != nil {
				return nil, "", err
			}
			return rec, msg, nil
		},
	}
}

// Service holds every operation, built once over the services.
type Service struct {
	// Read scope (spec 4.2's read table).
	Balance, Balances, Currencies, CheckAddress, Payouts, Faucet, DailyStats, UserStats, Transactions,
	RateLimits, LowBalanceNotification, Audit *Op
	// Events is the events feed (D59): v2's alone, as Audit.
	Events *Op
	// Manage scope.
	UpdateFaucet, SetRateLimits, IPWhitelist, SetIPWhitelist, ToggleLowBalanceNotification,
	AntiFraudRules, ToggleAntiFraud, UpdateAntiFraudRules *Op
	// Send scope.
	Send *Op
	// SendBatch is a batch of sends (D61): v2's alone, as Send.
	SendBatch *Op
	// Admin scope.
	CreateFaucet, ApprovalCost, RequestApproval *Op
}

// New builds the operations over d's services.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	r := &runner{d}
	return &Service{
		Balance:                Define("get_balance", drip.ScopeRead, r.balance),
		Balances:               Define("get_balances", drip.ScopeRead, r.balances),
		Currencies:             Define("get_currencies", drip.ScopeRead, r.currencies),
		CheckAddress:           Define("check_address", drip.ScopeRead, r.checkAddress),
		Payouts:                Define("get_payouts", drip.ScopeRead, r.payouts),
		Faucet:                 Define("get_faucet", drip.ScopeRead, r.faucet),
		DailyStats:             Define("get_daily_stats", drip.ScopeRead, r.dailyStats),
		UserStats:              Define("get_user_stats", drip.ScopeRead, r.userStats),
		Transactions:           Define("get_transactions", drip.ScopeRead, r.transactions),
		RateLimits:             Define("get_ratelimits", drip.ScopeRead, r.rateLimits),
		LowBalanceNotification: Define("get_low_balance_notification", drip.ScopeRead, r.lowBalanceNotification),
		Audit:                  Define("get_audit", drip.ScopeRead, r.audit),
		Events:                 Define("get_events", drip.ScopeRead, r.events),

		UpdateFaucet:                 Define("update_faucet_settings", drip.ScopeManage, r.updateFaucet),
		SetRateLimits:                Define("set_ratelimits", drip.ScopeManage, r.setRateLimits),
		IPWhitelist:                  Define("get_ip_whitelist", drip.ScopeManage, r.ipWhitelist),
		SetIPWhitelist:               Define("set_ip_whitelist", drip.ScopeManage, r.setIPWhitelist),
		ToggleLowBalanceNotification: Define("toggle_low_balance_notification", drip.ScopeManage, r.toggleLowBalance),
		AntiFraudRules:               Define("get_anti_fraud", drip.ScopeManage, r.antiFraudRules),
		ToggleAntiFraud:              Define("toggle_anti_fraud", drip.ScopeManage, r.toggleAntiFraud),
		UpdateAntiFraudRules:         Define("update_anti_fraud_rules", drip.ScopeManage, r.updateAntiFraudRules),

		Send: Define("send", drip.ScopeSend, r.send),

		SendBatch: Define("send_batch", drip.ScopeSend, r.sendBatch),

		CreateFaucet:    Define("create_faucet", drip.ScopeAdmin, r.createFaucet),
		ApprovalCost:    Define("get_approval_cost", drip.ScopeAdmin, r.approvalCost),
		RequestApproval: Define("request_approval", drip.ScopeAdmin, r.requestApproval),
	}
}

// runner runs the operations; its methods are their bodies.
type runner struct{ Deps }

// NoParams are the parameters of an operation that takes none.
type NoParams struct{}

// ok is the message of a read.
const ok = "OK"

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/user"
)

// adminCmd is one operator command. Each runs against the database alone,
// so it works while drip serve runs on the same database.
type adminCmd struct {
	summary string
	// flags registers the command's own flags and returns what runs it.
	flags func(fs *flag.FlagSet) func(ctx context.Context, svc *app.App) (result any, human string, err error)
}

// offline are the commands that work on the database files themselves:
// the application is not opened for them (their svc is nil).
var offline = map[string]bool{"backup": true, "restore": true}

var adminCmds = map[string]adminCmd{
	"user create":             {"create a user", userCreate},
	"user link-address":       {"link a wallet address to a user for one coin", userLinkAddress},
	"user set-operator":       {"grant (--operator=false: withdraw) the operator role", userSetOperator},
	"user suspend":            {"suspend a user", userSetStatus(drip.UserSuspended)},
	"user unsuspend":          {"reactivate a suspended user", userSetStatus(drip.UserActive)},
	"faucet create":           {"create a faucet; prints its v1 key once", faucetCreate},
	"faucet show":             {"show a faucet's settings and balances", faucetShow},
	"faucet rotate-key":       {"issue a new v1 key beside the current one", faucetRotateKey},
	"faucet confirm-rotation": {"make the new v1 key the only key (the old one dies at once)", faucetConfirmRotation},
	"faucet set-ip-whitelist": {"replace the IP whitelist (addresses or CIDRs; empty clears)", faucetSetIPWhitelist},
	"faucet set-limits":       {"replace the owner's send limits (D41)", faucetSetLimits},
	"faucet set-rules":        {"change the anti-fraud rules (D42)", faucetSetRules},
	"key mint":                {"mint a v2 key (D14); prints its secret once", keyMint},
	"key list":                {"list a faucet's v2 keys (never their secrets)", keyList},
	"key revoke":              {"revoke a v2 key, at once on every node", keyRevoke},
	"deposit":                 {"credit a faucet from system:deposits", deposit},
	"coin list":               {"list coins", coinList},
	"coin enable":             {"enable a coin", coinSetActive(true)},
	"coin disable":            {"disable a coin", coinSetActive(false)},
	"reconcile":               {"check the ledger invariant (D3) and the copies and sums kept beside it; exits 1 on any mismatch", reconcile},
	"stats rebuild":           {"empty the statistics' sums (D73) for the folder to fold every payout again; the statistics stay exact meanwhile", statsRebuild},
	"backup":                  {"copy the SQLite database to --to, consistent while drip serves it", adminBackup},
	"restore":                 {"replace the SQLite database with the backup --from; drip must be stopped", adminRestore},
	"listing set-cost":        {"set the listing cost of a coin in smallest units; --amount 0 withdraws it (D44)", listingSetCost},
	"listing costs":           {"list the listing cost of each coin", listingCosts},
	"listing requests":        {"list listing requests (--status pending, approved or rejected)", listingRequests},
	"listing approve":         {"approve a pending listing request: the faucet joins the public list", listingApprove},
	"listing reject":          {"reject a pending listing request and refund its fee to the faucet", listingReject},
}

// adminUsage lists the admin commands of a group ("faucet"), or all.
func adminUsage(group string) string {
	prefix := strings.TrimSpace("admin " + group)
	names := make([]string, 0, len(adminCmds))
	for name := range adminCmds {
		if group == "" || strings.HasPrefix(name, group+" ") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: drip %s <command> [flags] [--json]\n\nCommands:\n", prefix)
	for _, name := range names {
		fmt.Fprintf(&b, "  %-24s %s\n", strings.TrimPrefix(name, group+" "), adminCmds[name].summary)
	}
	fmt.Fprintf(&b, "\nRun \"drip %s <command> --help\" for a command's flags.\n", prefix)
	return b.String()
}

// adminGroup tells whether name is a group of admin commands ("faucet").
func adminGroup(name string) bool {
	for c := range adminCmds {
		if strings.HasPrefix(c, name+" ") {
			return true
		}
	}
	return false
}

func admin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name, rest := "", args
	for i := 0; i < len(args) && i < 2; i++ {
		if strings.HasPrefix(args[i], "-") {
			break
		}
		name = strings.TrimSpace(name + " " + args[i])
		rest = args[i+1:]
		if _, ok := adminCmds[name]; ok {
			break
		}
	}
	cmd, ok := adminCmds[name]
	if !ok {
		if (name == "" || adminGroup(name)) && len(rest) > 0 && isHelp(rest[0]) { // drip admin faucet --help
			fmt.Fprint(stdout, adminUsage(name))
			return errHelp
		}
		group := ""
		if adminGroup(name) {
			group = name
		}
		fmt.Fprint(stderr, adminUsage(group))
		if group != "" {
			return usagef("drip admin %s: name one of its commands", group)
		}
		return usagef("unknown admin command %q", name)
	}
	fs := flag.NewFlagSet("drip admin "+name, flag.ContinueOnError)
	var d dbFlags
	d.register(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	runCmd := cmd.flags(fs)
	if err := parseFlags(ctx, fs, rest, stdout, withConfig); err != nil {
		return err
	}
	var svc *app.App
	if !offline[name] {
		var err error
		if svc, err = openApp(ctx, d, app.Options{}); err != nil {
			return err
		}
		defer svc.Store.Close()
		defer svc.Close()
	}
	result, human, err := runCmd(ctx, svc)
	if result != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if encErr := enc.Encode(result); encErr != nil {
				return encErr
			}
		} else {
			fmt.Fprintln(stdout, human)
		}
	}
	return err
}

// required returns a usage error naming the first empty flag.
func required(pairs ...string) error {
	for i := 0; i < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return usagef("--%s is required", pairs[i])
		}
	}
	return nil
}

type runFunc = func(ctx context.Context, svc *app.App) (any, string, error)

func userCreate(fs *flag.FlagSet) runFunc {
	username := fs.String("username", "", "3-32 characters of a-z, 0-9 and _")
	email := fs.String("email", "", "email address")
	password := fs.String("password", "", "optional password (stored as argon2id)")
	verified := fs.Bool("verified", false, "mark the email address verified (unverified users cannot be paid)")
	operator := fs.Bool("operator", false, "give the user the operator role (the operator pages)")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := required("username", *username, "email", *email); err != nil {
			return nil, "", err
		}
		u, err := svc.Users.Create(ctx, user.CreateParams{Username: *username, Email: *email, Password: *password,
			Verified: *verified, Operator: *operator})
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"id": u.ID, "username": u.Username, "email": u.Email, "payout_user_hash": u.PayoutUserHash, "operator": u.Operator},
			fmt.Sprintf("user %d %s <%s> payout_user_hash %s", u.ID, u.Username, u.Email, u.PayoutUserHash), nil
	}
}

func userSetOperator(fs *flag.FlagSet) runFunc {
	username := fs.String("username", "", "the user")
	operator := fs.Bool("operator", true, "true grants the operator role, false withdraws it")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := required("username", *username); err != nil {
			return nil, "", err
		}
		u, err := svc.Users.ByUsername(ctx, *username)
		if err != nil {
			return nil, "", err
		}
		if err := svc.Users.SetOperator(ctx, u, *operator); err != nil {
			return nil, "", err
		}
		return map[string]any{"username": u.Username, "operator": *operator},
			fmt.Sprintf("%s operator: %t", u.Username, *operator), nil
	}
}

func userLinkAddress(fs *flag.FlagSet) runFunc {
	username := fs.String("username", "", "the user")
	coinSym := fs.String("coin", "", "coin symbol, e.g. DOGE")
	address := fs.String("address", "", "wallet address")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := required("username", *username, "coin", *coinSym, "address", *address); err != nil {
			return nil, "", err
		}
		u, err := svc.Users.ByUsername(ctx, *username)
		if err != nil {
			return nil, "", err
		}
		c, err := knownCoin(ctx, svc, *coinSym)
		if err != nil {
			return nil, "", err
		}
		if err := svc.Users.LinkAddress(ctx, u, c, *address); err != nil {
			return nil, "", err
		}
		return map[string]any{"username": u.Username, "coin": c, "address": strings.TrimSpace(*address)},
			fmt.Sprintf("%s address %s linked to %s", c, strings.TrimSpace(*address), u.Username), nil
	}
}

func userSetStatus(status drip.UserStatus) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		username := fs.String("username", "", "the user")
		return func(ctx context.Context, svc *app.App) (any, string, error) {
			if err := required("username", *username); err != nil {
				return nil, "", err
			}
			u, err := svc.Users.ByUsername(ctx, *username)
			if err != nil {
				return nil, "", err
			}
			if err := svc.Users.SetStatus(ctx, u, status); err != nil {
				return nil, "", err
			}
			return map[string]any{"username": u.Username, "status": status}, fmt.Sprintf("%s is %s", u.Username, status), nil
		}
	}
}

func faucetCreate(fs *flag.FlagSet) runFunc {
	owner := fs.String("owner", "", "username of the owner")
	name := fs.String("name", "", "faucet name")
	domain := fs.String("domain", "", "faucet domain, e.g. faucet.example.com")
	url := fs.String("url", "", "faucet URL on that domain")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := required("owner", *owner, "name", *name, "domain", *domain, "url", *url); err != nil {
			return nil, "", err
		}
		u, err := svc.Users.ByUsername(ctx, *owner)
		if err != nil {
			return nil, "", err
		}
		f, key, err := svc.Faucets.Create(ctx, faucet.CreateParams{OwnerID: u.ID, Name: *name, Domain: *domain, URL: *url})
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"id": f.ID, "api_key": key},
			fmt.Sprintf("faucet %d created\napi_key %s (shown once; stored hashed)", f.ID, key), nil
	}
}

// onFaucet registers --faucet and returns a command that runs run on the
// faucet it names, once that faucet is found.
func onFaucet(fs *flag.FlagSet, run func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error)) runFunc {
	id := fs.Int64("faucet", 0, "faucet id")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if *id <= 0 {
			return nil, "", usagef("--faucet is required (a faucet id)")
		}
		f, err := svc.Faucets.Get(ctx, *id)
		if err != nil {
			return nil, "", err
		}
		return run(ctx, svc, f)
	}
}

// faucetView is a faucet as the admin commands print it.
func faucetView(f *drip.Faucet) map[string]any {
	limits := f.Limits
	if limits == nil {
		limits = []drip.Limit{}
	}
	return map[string]any{"id": f.ID, "owner_id": f.OwnerID, "name": f.Name, "domain": f.Domain, "url": f.URL,
		"ip_whitelist": f.IPWhitelistStrings(), "limits": limits, "rules": f.Rules}
}

func faucetShow(fs *flag.FlagSet) runFunc {
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		balances, err := svc.Store.BalanceList(ctx, f.AccountID)
		if err != nil {
			return nil, "", err
		}
		view := faucetView(f)
		bal := map[string]int64{}
		lines := []string{}
		for _, b := range balances {
			bal[b.Coin] = b.Amount
			lines = append(lines, fmt.Sprintf("  %-5s %d", b.Coin, b.Amount))
		}
		view["balances"] = bal
		out, _ := json.MarshalIndent(faucetView(f), "", "  ")
		return view, string(out) + "\nbalances:\n" + strings.Join(lines, "\n"), nil
	})
}

func faucetRotateKey(fs *flag.FlagSet) runFunc {
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		key, err := svc.Faucets.RotateKey(ctx, f.ID)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"pending_api_key": key},
			fmt.Sprintf("pending api_key %s (shown once). Both keys work until: drip admin faucet confirm-rotation --faucet %d", key, f.ID), nil
	})
}

func faucetConfirmRotation(fs *flag.FlagSet) runFunc {
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		if err := svc.Faucets.ConfirmRotation(ctx, f.ID); err != nil {
			return nil, "", err
		}
		return map[string]any{"id": f.ID, "confirmed": true}, fmt.Sprintf("faucet %d: the new key is now the only key", f.ID), nil
	})
}

func faucetSetIPWhitelist(fs *flag.FlagSet) runFunc {
	ips := fs.String("ips", "", "addresses or CIDRs, comma-separated; empty clears the whitelist")
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		list, err := faucet.ParseIPList(*ips)
		if err != nil {
			return nil, "", err
		}
		if _, f, err = svc.Faucets.SetIPWhitelist(ctx, f.ID, list); err != nil {
			return nil, "", err
		}
		v := faucetView(f)
		return map[string]any{"id": f.ID, "ip_whitelist": v["ip_whitelist"]}, fmt.Sprintf("faucet %d ip_whitelist %v", f.ID, v["ip_whitelist"]), nil
	})
}

func faucetSetLimits(fs *flag.FlagSet) runFunc {
	raw := fs.String("limits", "", `JSON list, e.g. [{"coin":"BTC","per":"recipient","window_seconds":3600,"max_count":1}]; [] clears`)
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		dec := json.NewDecoder(strings.NewReader(*raw))
		dec.DisallowUnknownFields()
		var limits []drip.Limit
		if err := dec.Decode(&limits); err != nil {
			return nil, "", usagef("--limits: %v", err)
		}
		var err error
		if _, f, err = svc.Faucets.SetLimits(ctx, f.ID, limits); err != nil {
			return nil, "", err
		}
		v := faucetView(f)
		return map[string]any{"id": f.ID, "limits": v["limits"]}, fmt.Sprintf("faucet %d: %d send limits set", f.ID, len(f.Limits)), nil
	})
}

func faucetSetRules(fs *flag.FlagSet) runFunc {
	antiFraud := fs.String("anti-fraud", "", "on or off")
	trust := fs.String("trust-rank", "", "minimum trust rank a recipient needs, 0-100")
	negative := fs.String("negative-rank", "", "maximum negative rank tolerated, 0-100")
	whitelist := fs.String("whitelist", "\x00", "comma-separated usernames, emails, addresses, hashes, IPs or CIDRs; empty clears")
	blacklist := fs.String("blacklist", "\x00", "as --whitelist")
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		var c faucet.RulesChange
		switch *antiFraud {
		case "":
		case "on", "off":
			on := *antiFraud == "on"
			c.AntiFraud = &on
		default:
			return nil, "", usagef("--anti-fraud must be on or off")
		}
		for _, r := range []struct {
			name, val string
			into      **int
		}{{"trust-rank", *trust, &c.TrustRank}, {"negative-rank", *negative, &c.NegativeRank}} {
			if r.val == "" {
				continue
			}
			n, err := strconv.Atoi(r.val)
			if err != nil {
				return nil, "", usagef("--%s must be an integer 0-100", r.name)
			}
			*r.into = &n
		}
		c.Whitelist, c.Blacklist = splitList(*whitelist), splitList(*blacklist)
		var err error
		if _, f, err = svc.Faucets.SetRules(ctx, f.ID, c); err != nil {
			return nil, "", err
		}
		out, _ := json.Marshal(f.Rules)
		return map[string]any{"id": f.ID, "rules": f.Rules}, fmt.Sprintf("faucet %d rules %s", f.ID, out), nil
	})
}

// splitList reads a comma-separated flag; the "\x00" default means "not given".
func splitList(s string) *[]string {
	if s == "\x00" {
		return nil
	}
	list := []string{}
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			list = append(list, e)
		}
	}
	return &list
}

// knownCoin returns the symbol of a coin the database has, active or not.
func knownCoin(ctx context.Context, svc *app.App, symbol string) (string, error) {
	coins, err := svc.Coins.List(ctx)
	if err != nil {
		return "", err
	}
	for _, c := range coins {
		if c.Symbol == strings.ToUpper(symbol) {
			return c.Symbol, nil
		}
	}
	return "", drip.Errorf(drip.CodeInvalidCurrency, "No coin %q.", symbol)
}

func deposit(fs *flag.FlagSet) runFunc {
	coinSym := fs.String("coin", "", "coin symbol")
	amount := fs.String("amount", "", "amount in smallest units (positive integer)")
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		c, err := knownCoin(ctx, svc, *coinSym)
		if err != nil {
			return nil, "", err
		}
		n, ok := drip.ParseAmount(*amount)
		if !ok {
			return nil, "", usagef("--amount must be a positive integer in smallest units")
		}
		balance, err := svc.Ledger.Deposit(ctx, f, c, n)
		if err != nil {
			return nil, "", err
		}
		return map[string]any{"faucet": f.ID, "coin": c, "amount": n, "balance": balance},
			fmt.Sprintf("faucet %d: %s balance %d (%s)", f.ID, c, balance, drip.FormatCoins(balance)), nil
	})
}

func coinList(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		coins, err := svc.Coins.List(ctx)
		if err != nil {
			return nil, "", err
		}
		out := []map[string]any{}
		lines := []string{}
		for _, c := range coins {
			out = append(out, map[string]any{"symbol": c.Symbol, "name": c.Name, "active": c.Active, "min_payout": c.MinPayout})
			state := "active"
			if !c.Active {
				state = "disabled"
			}
			lines = append(lines, fmt.Sprintf("%-5s %-14s %s", c.Symbol, c.Name, state))
		}
		return out, strings.Join(lines, "\n"), nil
	}
}

func coinSetActive(active bool) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		symbol := fs.String("coin", "", "coin symbol")
		return func(ctx context.Context, svc *app.App) (any, string, error) {
			if err := required("coin", *symbol); err != nil {
				return nil, "", err
			}
			if err := svc.Coins.SetActive(ctx, *symbol, active); err != nil {
				return nil, "", err
			}
			return map[string]any{"symbol": strings.ToUpper(*symbol), "active": active},
				fmt.Sprintf("%s active=%v", strings.ToUpper(*symbol), active), nil
		}
	}
}

func reconcile(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		r, err := svc.Ledger.Reconcile(ctx)
		if err != nil {
			return nil, "", err
		}
		out := map[string]any{"ok": r.OK(), "coin_sums": r.CoinSums, "accounts": r.Accounts, "payouts": r.Payouts, "events": r.Events,
			"statistics": r.Statistics}
		if r.OK() {
			return out, "ledger reconciles: every coin sums to zero, every balance equals its journal, every payout its transfer; the copies and the statistics agree with the payouts", nil
		}
		human, _ := json.MarshalIndent(out, "", "  ")
		return out, "LEDGER MISMATCH\n" + string(human), fmt.Errorf("ledger does not reconcile")
	}
}

// statsRebuild is the mend for statistics' sums that reconcile finds wrong
// (D73): the sums go, and drip serve's folder folds every payout again, a
// range at a time, while the reads add up the payouts themselves.
func statsRebuild(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := svc.Store.StatsRebuild(ctx); err != nil {
			return nil, "", err
		}
		return map[string]any{"rebuilding": true},
			"the statistics' sums are emptied: drip serve folds every payout again; the statistics stay exact meanwhile", nil
	}
}

// keyView is a v2 key as the admin commands print it: never its secret.
func keyView(k *drip.Key) map[string]any {
	v := map[string]any{"id": k.ID, "faucet_id": k.FaucetID, "prefix": k.Prefix, "scopes": k.Scopes,
		"expires_at": nil, "ip_whitelist": drip.PrefixStrings(k.IPWhitelist), "daily_usd_cap": nil, "revoked_at": nil,
		"created_at": k.CreatedAt.Format(time.RFC3339)}
	if k.ExpiresAt != nil {
		v["expires_at"] = k.ExpiresAt.Format(time.RFC3339)
	}
	if k.DailyUSDCapMicros > 0 {
		v["daily_usd_cap"] = key.FormatUSD(k.DailyUSDCapMicros)
	}
	if k.RevokedAt != nil {
		v["revoked_at"] = k.RevokedAt.Format(time.RFC3339)
	}
	return v
}

func keyMint(fs *flag.FlagSet) runFunc {
	scopes := fs.String("scopes", "", "comma-separated: read, send, manage, admin")
	expiresIn := fs.Duration("expires-in", 0, "lifetime, e.g. 24h (default: never expires)")
	ips := fs.String("ips", "", "addresses or CIDRs the key may be used from, comma-separated (default: any)")
	usdCap := fs.String("daily-usd-cap", "", "send keys: most USD value of paid sends per UTC day, e.g. 25.00")
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		var err error
		p := key.MintParams{FaucetID: f.ID, ExpiresIn: *expiresIn}
		if p.Scopes, err = drip.ParseScopes(*scopes); err != nil {
			return nil, "", err
		}
		if p.IPWhitelist, err = faucet.ParseIPList(*ips); err != nil {
			return nil, "", err
		}
		if *usdCap != "" {
			if p.DailyUSDCapMicros, err = key.ParseUSD(*usdCap); err != nil {
				return nil, "", err
			}
		}
		k, secret, err := svc.Keys.Mint(ctx, p)
		if err != nil {
			return nil, "", err
		}
		v := keyView(k)
		out := map[string]any{"id": k.ID, "key": secret, "prefix": k.Prefix, "scopes": k.Scopes, "expires_at": v["expires_at"]}
		return out, fmt.Sprintf("key %d (%s) scopes %v expires %v\n%s (shown once; stored hashed)", k.ID, k.Prefix, k.Scopes, v["expires_at"], secret), nil
	})
}

func keyList(fs *flag.FlagSet) runFunc {
	return onFaucet(fs, func(ctx context.Context, svc *app.App, f *drip.Faucet) (any, string, error) {
		keys, err := svc.Keys.List(ctx, f.ID)
		if err != nil {
			return nil, "", err
		}
		out, lines := []map[string]any{}, []string{}
		for i := range keys {
			v := keyView(&keys[i])
			out = append(out, v)
			lines = append(lines, fmt.Sprintf("%d %s %v expires %v revoked %v", keys[i].ID, keys[i].Prefix, keys[i].Scopes, v["expires_at"], v["revoked_at"]))
		}
		return out, strings.Join(lines, "\n"), nil
	})
}

func keyRevoke(fs *flag.FlagSet) runFunc {
	id := fs.Int64("key-id", 0, "the key's id")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if *id <= 0 {
			return nil, "", usagef("--key-id is required (a key id)")
		}
		k, err := svc.Keys.Revoke(ctx, *id)
		if err != nil {
			return nil, "", err
		}
		return keyView(k), fmt.Sprintf("key %d (%s) revoked", k.ID, k.Prefix), nil
	}
}

func listingSetCost(fs *flag.FlagSet) runFunc {
	coinSym := fs.String("coin", "", "coin symbol, e.g. BTC")
	amount := fs.String("amount", "", "cost in smallest units (positive integer); 0 withdraws the offer in that coin")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if err := required("coin", *coinSym, "amount", *amount); err != nil {
			return nil, "", err
		}
		var n int64 // 0 withdraws
		if *amount != "0" {
			var ok bool
			if n, ok = drip.ParseAmount(*amount); !ok {
				return nil, "", usagef("--amount must be a positive integer in smallest units, or 0 to withdraw")
			}
		}
		c, err := knownCoin(ctx, svc, *coinSym)
		if err != nil {
			return nil, "", err
		}
		if err := svc.Listing.SetCost(ctx, c, n); err != nil {
			return nil, "", err
		}
		if n == 0 {
			return map[string]any{"coin": c, "amount": 0, "offered": false}, fmt.Sprintf("listing is no longer offered in %s", c), nil
		}
		return map[string]any{"coin": c, "amount": n, "offered": true},
			fmt.Sprintf("listing costs %d %s units (%s %s)", n, c, drip.FormatCoins(n), c), nil
	}
}

func listingCosts(fs *flag.FlagSet) runFunc {
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		costs, err := svc.Listing.Costs(ctx)
		if err != nil {
			return nil, "", err
		}
		coins := make([]string, 0, len(costs))
		for c := range costs {
			coins = append(coins, c)
		}
		sort.Strings(coins)
		out, lines := []map[string]any{}, []string{}
		for _, c := range coins {
			out = append(out, map[string]any{"coin": c, "amount": costs[c]})
			lines = append(lines, fmt.Sprintf("%-5s %d (%s)", c, costs[c], drip.FormatCoins(costs[c])))
		}
		if len(lines) == 0 {
			lines = append(lines, "listing is not offered in any coin: drip admin listing set-cost --coin BTC --amount 100000")
		}
		return out, strings.Join(lines, "\n"), nil
	}
}

// listingView is a listing request as the admin commands print it, with
// its faucet's name and URL, which the operator judges it by.
func listingView(r *drip.ListingRequest, f *drip.Faucet) map[string]any {
	v := map[string]any{"id": r.ID, "faucet_id": r.FaucetID, "faucet_name": f.Name, "faucet_url": f.URL,
		"coin": r.Coin, "amount": r.Amount, "status": r.Status, "created_at": r.CreatedAt.Format(time.RFC3339), "decided_at": nil}
	if r.DecidedAt != nil {
		v["decided_at"] = r.DecidedAt.Format(time.RFC3339)
	}
	return v
}

func listingLine(r *drip.ListingRequest, f *drip.Faucet) string {
	return fmt.Sprintf("%d %-8s faucet %d %q %s paid %d %s", r.ID, r.Status, f.ID, f.Name, f.URL, r.Amount, r.Coin)
}

func listingRequests(fs *flag.FlagSet) runFunc {
	status := fs.String("status", string(drip.ListingPending), "pending, approved or rejected")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		st, err := listing.ParseStatus(*status)
		if err != nil {
			return nil, "", usagef("--status must be pending, approved or rejected")
		}
		reqs, err := svc.Listing.Requests(ctx, st)
		if err != nil {
			return nil, "", err
		}
		out, lines := []map[string]any{}, []string{}
		for i := range reqs {
			f, err := svc.Faucets.Get(ctx, reqs[i].FaucetID)
			if err != nil {
				return nil, "", err
			}
			out = append(out, listingView(&reqs[i], f))
			lines = append(lines, listingLine(&reqs[i], f))
		}
		if len(lines) == 0 {
			lines = append(lines, fmt.Sprintf("no %s listing requests", st))
		}
		return out, strings.Join(lines, "\n"), nil
	}
}

// listingDecision registers --request and runs decide on the request it names.
func listingDecision(fs *flag.FlagSet, decide func(*listing.Service, context.Context, int64) (*drip.ListingRequest, error),
	human func(*drip.ListingRequest, *drip.Faucet) string) runFunc {
	id := fs.Int64("request", 0, "the listing request's id (drip admin listing requests)")
	return func(ctx context.Context, svc *app.App) (any, string, error) {
		if *id <= 0 {
			return nil, "", usagef("--request is required (a listing request id)")
		}
		r, err := decide(svc.Listing, ctx, *id)
		if err != nil {
			return nil, "", err
		}
		f, err := svc.Faucets.Get(ctx, r.FaucetID)
		if err != nil {
			return nil, "", err
		}
		return listingView(r, f), human(r, f), nil
	}
}

func listingApprove(fs *flag.FlagSet) runFunc {
	return listingDecision(fs, (*listing.Service).Approve, func(r *drip.ListingRequest, f *drip.Faucet) string {
		return fmt.Sprintf("listing request %d approved: faucet %d %q is on the public faucet list", r.ID, f.ID, f.Name)
	})
}

func listingReject(fs *flag.FlagSet) runFunc {
	return listingDecision(fs, (*listing.Service).Reject, func(r *drip.ListingRequest, f *drip.Faucet) string {
		return fmt.Sprintf("listing request %d rejected: %d %s units (%s %s) refunded to faucet %d", r.ID, r.Amount, r.Coin,
			drip.FormatCoins(r.Amount), r.Coin, f.ID)
	})
}

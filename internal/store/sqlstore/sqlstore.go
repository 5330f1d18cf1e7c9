package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// maxAttempts bounds how often Transact reruns a transaction that lost a
// race (SQLite busy, PostgreSQL serialization failure or deadlock).
const maxAttempts = 8

// DB is a store.Store over a Driver.
type DB struct {
	querier
	drv      Driver
	observer atomic.Pointer[store.Observer] // store.Observable; nil: none
	// statsRead is when the statistics were last read, in Unix
	// nanoseconds (StatsReadAt); 0: never.
	statsRead atomic.Int64
	folder    *statsFolder // nil until StartStatsFolder
}

var _ store.Store = (*DB)(nil)

// Open wraps a driver. It does not migrate; call Migrate.
func Open(drv Driver) (*DB, error) {
	q, err := loadQueries(drv.QueryOverrides(), drv.Rebind)
	if err != nil {
		return nil, err
	}
	return &DB{querier: querier{c: drv.Reader(), q: q, drv: drv}, drv: drv}, nil
}

// Statements lists every statement of the engine, as it runs them, for
// drivers that prepare statements ahead. Migration statements are left out.
func (db *DB) Statements() []string {
	var out []string
	v := reflect.ValueOf(db.q).Elem()
	for i := 0; i < v.NumField(); i++ {
		if name := v.Type().Field(i).Name; !strings.HasPrefix(name, "Migration") {
			out = append(out, v.Field(i).Interface().(stmt).sql)
		}
	}
	return out
}

func (db *DB) Engine() string { return db.drv.Name() }

// Close stops the statistics' folder, then closes the engine.
func (db *DB) Close() error {
	if db.folder != nil {
		db.folder.halt()
	}
	return db.drv.Close()
}

// Observe implements store.Observable.
func (db *DB) Observe(o store.Observer) {
	if o == nil {
		db.observer.Store(nil)
		return
	}
	db.observer.Store(&o)
}

// Transact runs fn in a transaction, as store.Store documents.
func (db *DB) Transact(ctx context.Context, fn func(store.Tx) error) error {
	o := db.observer.Load()
	if o == nil {
		_, err := db.transact(ctx, fn)
		return err
	}
	start := time.Now()
	attempts, err := db.transact(ctx, fn)
	(*o).Transacted(time.Since(start), attempts, err)
	return err
}

// transact is Transact; it also returns how many times fn ran.
func (db *DB) transact(ctx context.Context, fn func(store.Tx) error) (int, error) {
	for attempt := 1; ; attempt++ {
		err := db.transactOnce(ctx, fn)
		if err == nil || errors.Is(err, store.ErrCommitUnknown) || !db.drv.Retryable(err) ||
			attempt == maxAttempts || ctx.Err() != nil {
			return attempt, err
		}
		// Back off a little, more on each attempt, so racing writers spread out.
		select {
		case <-time.After(time.Duration(attempt*attempt) * time.Millisecond):
		case <-ctx.Done():
			return attempt, db.drv.Translate(ctx.Err())
		}
	}
}

func (db *DB) transactOnce(ctx context.Context, fn func(store.Tx) error) (err error) {
	tc, err := db.drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("BEGIN: %w", db.drv.Translate(err))
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tc.Rollback(context.WithoutCancel(ctx))
			panic(p)
		}
		if err != nil { // after a failed commit, a no-op
			_ = tc.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err = fn(&querier{c: tc, q: db.q, drv: db.drv}); err != nil {
		return err
	}
	if err = tc.Commit(ctx); err != nil {
		if db.drv.RolledBack(err) {
			return fmt.Errorf("COMMIT: %w", db.drv.Translate(err))
		}
		// The commit may have reached the database and taken effect; only
		// the caller can settle it, by asking (D6).
		return fmt.Errorf("%w: COMMIT: %w", store.ErrCommitUnknown, db.drv.Translate(err))
	}
	return nil
}

// errProbed ends EventCommitted's transaction, which must never commit.
var errProbed = errors.New("sqlstore: probe done")

// EventCommitted settles an unknown commit, as store.Store documents, with
// EventProbe in a transaction that always rolls back.
func (db *DB) EventCommitted(ctx context.Context, id string, faucetID int64) (bool, error) {
	var committed bool
	err := db.transactOnce(ctx, func(tx store.Tx) error {
		n, err := tx.(*querier).exec(ctx, db.q.EventProbe, id, faucetID)
		if err != nil {
			return err
		}
		committed = n == 0
		return errProbed
	})
	if errors.Is(err, errProbed) {
		return committed, nil
	}
	return false, err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.scanRow(ctx, db.q.Ping, nil, &one)
}

// querier implements every store method over one Conn; DB uses the read
// pool, a transaction its own connection.
type querier struct {
	c   Conn
	q   *queries
	drv Driver
}

// fail translates a driver error (store.ErrNotFound, ErrConflict,
// ErrUnavailable, ...) and wraps it with the statement's name, so the log
// line at the edge says which statement failed; errors.Is still finds the
// store's errors and errors.As the driver's.
func (q *querier) fail(s stmt, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", s.name, q.drv.Translate(err))
}

func (q *querier) exec(ctx context.Context, s stmt, args ...any) (int64, error) {
	n, err := q.c.Exec(ctx, s.sql, args...)
	return n, q.fail(s, err)
}

// execOne runs a statement that must change exactly one row.
func (q *querier) execOne(ctx context.Context, s stmt, args ...any) error {
	n, err := q.exec(ctx, s, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", s.name, store.ErrNotFound)
	}
	return nil
}

func (q *querier) scanRow(ctx context.Context, s stmt, args []any, dest ...any) error {
	return q.fail(s, q.c.QueryRow(ctx, s.sql, args...).Scan(dest...))
}

// list runs a query and calls scan once per row.
func (q *querier) list(ctx context.Context, s stmt, args []any, scan func(Rows) error) error {
	return q.fail(s, scanAll(ctx, q.c, Statement{SQL: s.sql, Args: args, Scan: scan}))
}

func micros(t time.Time) int64      { return t.UnixMicro() }
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func (q *querier) SecretGet(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := q.scanRow(ctx, q.q.SecretGet, []any{name}, &v)
	return v, err
}

func (q *querier) SecretInit(ctx context.Context, name string, value []byte) error {
	_, err := q.exec(ctx, q.q.SecretInit, name, value)
	return err
}

func (q *querier) CoinList(ctx context.Context) ([]drip.Coin, error) {
	var coins []drip.Coin
	err := q.list(ctx, q.q.CoinList, nil, func(r Rows) error {
		var c drip.Coin
		err := r.Scan(&c.Symbol, &c.Name, &c.Active, &c.MinPayout)
		coins = append(coins, c)
		return err
	})
	return coins, err
}

func (q *querier) CoinSetActive(ctx context.Context, symbol string, active bool) error {
	return q.execOne(ctx, q.q.CoinSetActive, symbol, active)
}

func (q *querier) AccountCreate(ctx context.Context, kind string, at time.Time) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.AccountCreate, []any{kind, micros(at)}, &id)
	return id, err
}

func (q *querier) getUser(ctx context.Context, sql stmt, args ...any) (*drip.User, error) {
	return scanUser(func(dest ...any) error { return q.scanRow(ctx, sql, args, dest...) })
}

// scanUser reads the columns of UserColumns, from one row or a list's.
func scanUser(scan func(dest ...any) error) (*drip.User, error) {
	var u drip.User
	var status string
	var created int64
	err := scan(&u.ID, &u.AccountID, &u.Username, &u.Email, &u.PasswordHash, &u.EmailVerified, &status, &u.PayoutUserHash, &created,
		&u.Operator, &u.TOTPSecret, &u.TOTPEnabled, &u.TOTPLastStep)
	if err != nil {
		return nil, err
	}
	u.Status, u.CreatedAt = drip.UserStatus(status), fromMicros(created)
	return &u, nil
}

func (q *querier) UserGetByID(ctx context.Context, id int64) (*drip.User, error) {
	return q.getUser(ctx, q.q.UserGetByID, id)
}

func (q *querier) UserGetByUsername(ctx context.Context, username string) (*drip.User, error) {
	return q.getUser(ctx, q.q.UserGetByUsername, username)
}

func (q *querier) UserGetByEmail(ctx context.Context, email string) (*drip.User, error) {
	return q.getUser(ctx, q.q.UserGetByEmail, email)
}

func (q *querier) UserGetByPayoutHash(ctx context.Context, hash string) (*drip.User, error) {
	return q.getUser(ctx, q.q.UserGetByPayoutHash, hash)
}

func (q *querier) UserGetByAddress(ctx context.Context, coin, address string) (*drip.User, error) {
	return q.getUser(ctx, q.q.UserGetByAddress, coin, address)
}

func (q *querier) UserCreate(ctx context.Context, p *store.UserCreateParams) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.UserCreate, []any{p.AccountID, p.Username, p.Email, p.PasswordHash,
		p.EmailVerified, micros(p.CreatedAt)}, &id)
	return id, err
}

func (q *querier) UserSetPayoutHash(ctx context.Context, id int64, hash string) error {
	return q.execOne(ctx, q.q.UserSetPayoutHash, id, hash)
}

func (q *querier) UserSetStatus(ctx context.Context, id int64, status drip.UserStatus) error {
	return q.execOne(ctx, q.q.UserSetStatus, id, string(status))
}

func (q *querier) UserAddressAdd(ctx context.Context, userID int64, coin, address string, at time.Time) error {
	_, err := q.exec(ctx, q.q.UserAddressAdd, coin, address, userID, micros(at))
	return err
}

func (q *querier) UserAddressList(ctx context.Context, userID int64) ([]string, error) {
	var out []string
	err := q.list(ctx, q.q.UserAddressList, []any{userID}, func(r Rows) error {
		var coin, addr string
		err := r.Scan(&coin, &addr)
		out = append(out, coin+":"+addr)
		return err
	})
	return out, err
}

func (q *querier) UserAddressOwners(ctx context.Context, address string) ([]store.AddressOwner, error) {
	var out []store.AddressOwner
	err := q.list(ctx, q.q.UserAddressOwners, []any{address}, func(r Rows) error {
		var o store.AddressOwner
		err := r.Scan(&o.Coin, &o.UserID)
		out = append(out, o)
		return err
	})
	return out, err
}

// scanFaucet reads one row of FaucetColumns.
func scanFaucet(scan func(dest ...any) error) (*drip.Faucet, error) {
	var f drip.Faucet
	var ips, limits, rules, ownerStatus, settings, lowBalance string
	var created int64
	if err := scan(&f.ID, &f.OwnerID, &ownerStatus, &f.AccountID, &f.Name, &f.Domain, &f.URL, &ips, &limits, &rules,
		&created, &settings, &lowBalance); err != nil {
		return nil, err
	}
	f.OwnerStatus = drip.UserStatus(ownerStatus)
	f.CreatedAt = fromMicros(created)
	var ipList []string
	if err := json.Unmarshal([]byte(ips), &ipList); err != nil {
		return nil, fmt.Errorf("faucet %d: ip_whitelist: %w", f.ID, err)
	}
	for _, s := range ipList {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("faucet %d: ip_whitelist: %w", f.ID, err)
		}
		f.IPWhitelist = append(f.IPWhitelist, p)
	}
	if err := json.Unmarshal([]byte(limits), &f.Limits); err != nil {
		return nil, fmt.Errorf("faucet %d: limits: %w", f.ID, err)
	}
	if err := json.Unmarshal([]byte(rules), &f.Rules); err != nil {
		return nil, fmt.Errorf("faucet %d: rules: %w", f.ID, err)
	}
	if err := json.Unmarshal([]byte(settings), &f.Settings); err != nil {
		return nil, fmt.Errorf("faucet %d: settings: %w", f.ID, err)
	}
	if err := json.Unmarshal([]byte(lowBalance), &f.LowBalance); err != nil {
		return nil, fmt.Errorf("faucet %d: low_balance: %w", f.ID, err)
	}
	return &f, nil
}

func (q *querier) getFaucet(ctx context.Context, sql stmt, args ...any) (*drip.Faucet, error) {
	return scanFaucet(func(dest ...any) error { return q.scanRow(ctx, sql, args, dest...) })
}

func (q *querier) FaucetListByOwner(ctx context.Context, ownerID int64) ([]drip.Faucet, error) {
	return q.listFaucets(ctx, q.q.FaucetListByOwner, ownerID)
}

func (q *querier) listFaucets(ctx context.Context, sql stmt, args ...any) ([]drip.Faucet, error) {
	var out []drip.Faucet
	err := q.list(ctx, sql, args, func(r Rows) error {
		f, err := scanFaucet(r.Scan)
		if err == nil {
			out = append(out, *f)
		}
		return err
	})
	return out, err
}

func (q *querier) FaucetListListed(ctx context.Context) ([]drip.Faucet, error) {
	return q.listFaucets(ctx, q.q.FaucetListListed)
}

func (q *querier) FaucetGetByID(ctx context.Context, id int64) (*drip.Faucet, error) {
	return q.getFaucet(ctx, q.q.FaucetGetByID, id)
}

func (q *querier) FaucetGetByKeyHash(ctx context.Context, hash string) (*drip.Faucet, error) {
	return q.getFaucet(ctx, q.q.FaucetGetByKeyHash, hash)
}

func (q *querier) FaucetCreate(ctx context.Context, p *store.FaucetCreateParams) (int64, error) {
	rules, err := json.Marshal(p.Rules)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.scanRow(ctx, q.q.FaucetCreate, []any{p.OwnerID, p.AccountID, p.Name, p.Domain, p.URL,
		p.APIKeyHash, string(rules), micros(p.CreatedAt)}, &id)
	return id, err
}

func (q *querier) FaucetSetPendingKey(ctx context.Context, id int64, hash string) error {
	return q.execOne(ctx, q.q.FaucetSetPendingKey, id, hash)
}

func (q *querier) FaucetConfirmKey(ctx context.Context, id int64) error {
	return q.execOne(ctx, q.q.FaucetConfirmKey, id)
}

func (q *querier) FaucetUpdateSettings(ctx context.Context, f *drip.Faucet) error {
	limits := f.Limits
	if limits == nil {
		limits = []drip.Limit{}
	}
	settings := f.Settings
	if settings.Currencies == nil {
		settings.Currencies = []string{}
	}
	if settings.Categories == nil {
		settings.Categories = []string{}
	}
	lowBalance := f.LowBalance
	if lowBalance.Thresholds == nil {
		lowBalance.Thresholds = map[string]int64{}
	}
	ipJSON, err1 := json.Marshal(f.IPWhitelistStrings())
	limitJSON, err2 := json.Marshal(limits)
	ruleJSON, err3 := json.Marshal(f.Rules)
	settingsJSON, err4 := json.Marshal(settings)
	lowJSON, err5 := json.Marshal(lowBalance)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return err
	}
	return q.execOne(ctx, q.q.FaucetUpdateSettings, f.ID, f.Name, f.Domain, f.URL,
		string(ipJSON), string(limitJSON), string(ruleJSON), string(settingsJSON), string(lowJSON))
}

func (q *querier) FaucetLock(ctx context.Context, faucetID int64) error {
	var id int64
	return q.scanRow(ctx, q.q.FaucetLock, []any{faucetID}, &id)
}

func (q *querier) BalanceGet(ctx context.Context, accountID int64, coin string) (int64, error) {
	var amount int64
	err := q.scanRow(ctx, q.q.BalanceGet, []any{accountID, coin}, &amount)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil // an account that never held the coin holds zero of it
	}
	return amount, err
}

func (q *querier) BalanceDebits(ctx context.Context, accountID int64, coin string) ([]store.DebitCount, error) {
	var out []store.DebitCount
	err := q.list(ctx, q.q.BalanceDebits, []any{accountID, coin}, func(r Rows) error {
		var c store.DebitCount
		err := r.Scan(&c.Coin, &c.Debits)
		out = append(out, c)
		return err
	})
	return out, err
}

func (q *querier) BalanceList(ctx context.Context, accountID int64) ([]drip.Balance, error) {
	var out []drip.Balance
	err := q.list(ctx, q.q.BalanceList, []any{accountID}, func(r Rows) error {
		var b drip.Balance
		err := r.Scan(&b.Coin, &b.Amount)
		out = append(out, b)
		return err
	})
	return out, err
}

func (q *querier) BalanceDebit(ctx context.Context, accountID int64, coin string, amount int64) (int64, error) {
	if amount <= 0 {
		// A non-positive debit would pass the "amount >= $3" guard and
		// credit the account; refuse it here rather than rely on callers.
		return 0, fmt.Errorf("store: debit of %d: amount must be positive", amount)
	}
	var after int64
	err := q.scanRow(ctx, q.q.BalanceDebit, []any{accountID, coin, amount}, &after)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%s: %w", q.q.BalanceDebit.name, store.ErrInsufficientFunds)
	}
	return after, err
}

func (q *querier) BalanceCredit(ctx context.Context, accountID int64, coin string, amount int64) (int64, error) {
	var after int64
	err := q.scanRow(ctx, q.q.BalanceCredit, []any{accountID, coin, amount}, &after)
	return after, err
}

func (q *querier) TransferInsert(ctx context.Context, t *store.Transfer) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.TransferInsert, []any{t.Coin, t.From, t.To, t.Amount, t.Kind, micros(t.CreatedAt)}, &id)
	return id, err
}

func (q *querier) PayoutInsert(ctx context.Context, p *drip.Payout, transferID int64) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.PayoutInsert, []any{p.FaucetID, p.RecipientID, transferID, p.To, p.Coin,
		p.Amount, p.IPAddress, p.Referral, micros(p.CreatedAt)}, &id)
	return id, err
}

func (q *querier) PayoutList(ctx context.Context, p *store.PayoutListParams) ([]drip.Payout, error) {
	sql, args := q.q.PayoutList, []any{p.FaucetID, p.Limit}
	if p.Coin != "" {
		sql, args = q.q.PayoutListByCoin, []any{p.FaucetID, p.Coin, p.Limit}
	}
	var out []drip.Payout
	err := q.list(ctx, sql, args, func(r Rows) error {
		var p drip.Payout
		var created int64
		err := r.Scan(&p.ID, &p.FaucetID, &p.RecipientID, &p.To, &p.Coin, &p.Amount, &p.IPAddress, &p.Referral, &created)
		p.CreatedAt = fromMicros(created)
		out = append(out, p)
		return err
	})
	return out, err
}

func (q *querier) PayoutExists(ctx context.Context, id int64) (bool, error) {
	var n int64
	err := q.scanRow(ctx, q.q.PayoutExists, []any{id}, &n)
	return n > 0, err
}

func (q *querier) PayoutWindow(ctx context.Context, p *store.PayoutWindowParams) (count, sum int64, err error) {
	c := make([]store.PayoutCount, 1)
	err = q.execAll(ctx, q.windowCalls([]store.PayoutWindowParams{*p}, c))
	return c[0].Count, c[0].Sum, err
}

// windowCalls counts the payouts of each window ws[i] into counts[i]. A
// batch reads one per-recipient window for each recipient it pays and one
// per-IP window for each claimer IP: each kind is one statement over the
// batch's windows, not one statement a window (over-limit's batches of 64
// ran 64). The faucet-wide ones, one a faucet, go one statement each.
func (q *querier) windowCalls(ws []store.PayoutWindowParams, counts []store.PayoutCount) []call {
	var calls []call
	recipients := &windowSet{s: q.q.PayoutWindowsRecipientRows}
	ips := &windowSet{s: q.q.PayoutWindowsIPRows}
	for i := range ws {
		w := &ws[i]
		switch {
		case w.RecipientID != 0:
			recipients.add(i, w)
		case w.IPAddress != "":
			ips.add(i, w)
		default:
			c := &counts[i]
			calls = append(calls, call{s: q.q.PayoutWindowFaucet, args: []any{w.FaucetID, micros(w.Since), w.Coin},
				scan: func(r Rows) error { return r.Scan(&c.Count, &c.Sum) }})
		}
	}
	for _, set := range []*windowSet{recipients, ips} {
		if len(set.at) > 0 {
			calls = append(calls, set.call(counts))
		}
	}
	return calls
}

// windowSet gathers the windows of one kind for their set form's rows:
// c0 the window's index, c1 the faucet, c2 the window's start, c3 the
// coin ("" for every coin), c4 the recipient or the claimer IP.
type windowSet struct {
	s                  stmt
	at, faucets, since []int64
	coins              []string
	recipients         []int64  // c4 of the per-recipient windows
	ips                []string // c4 of the per-IP windows
}

func (w *windowSet) add(i int, p *store.PayoutWindowParams) {
	w.at, w.faucets, w.since = append(w.at, int64(i)), append(w.faucets, p.FaucetID), append(w.since, micros(p.Since))
	w.coins = append(w.coins, p.Coin)
	if p.RecipientID != 0 {
		w.recipients = append(w.recipients, p.RecipientID)
	} else {
		w.ips = append(w.ips, p.IPAddress)
	}
}

// call reads the windows' counts; a window with no payout may have no row
// (SQLite's form), and keeps its zero count.
func (w *windowSet) call(counts []store.PayoutCount) call {
	key := ints("recipient_id", w.recipients)
	if w.ips != nil {
		key = texts("ip_address", w.ips)
	}
	c := rowsCall(w.s, []Column{ints("i", w.at), ints("faucet_id", w.faucets), ints("since", w.since), texts("coin", w.coins), key})
	c.scan = func(r Rows) error {
		var i int64
		var n store.PayoutCount
		if err := r.Scan(&i, &n.Count, &n.Sum); err != nil {
			return err
		}
		if i < 0 || i >= int64(len(counts)) {
			return fmt.Errorf("%s: window %d of %d", w.s.name, i, len(counts))
		}
		counts[i] = n
		return nil
	}
	return c
}

func (q *querier) EventInsert(ctx context.Context, e *drip.Event) error {
	at := micros(e.CreatedAt)
	if _, err := q.exec(ctx, q.q.EventInsert, e.ID, e.FaucetID, e.Type, string(e.Data), at); err != nil {
		return err
	}
	return q.execAll(ctx, q.fanoutCalls([]string{e.ID}, []int64{e.FaucetID}, []string{e.Type}, at))
}

// fanoutCalls is the fan-out of events just written (ids, their faucets
// and types), on an engine where no trigger makes their deliveries (D69).
func (q *querier) fanoutCalls(ids []string, faucets []int64, types []string, at int64) []call {
	if q.q.EventsFanoutRows.sql == "" {
		return nil
	}
	return []call{rowsCall(q.q.EventsFanoutRows, []Column{texts("id", ids), ints("faucet_id", faucets), texts("type", types)}, at)}
}

func (q *querier) EventList(ctx context.Context, faucetID int64, limit int) ([]drip.Event, error) {
	var out []drip.Event
	err := q.list(ctx, q.q.EventList, []any{faucetID, limit}, func(r Rows) error {
		var e drip.Event
		var data string
		var created int64
		err := r.Scan(&e.ID, &e.FaucetID, &e.Type, &data, &created)
		e.Data, e.CreatedAt = []byte(data), fromMicros(created)
		out = append(out, e)
		return err
	})
	return out, err
}

func (q *querier) EventGet(ctx context.Context, id string) (*drip.Event, error) {
	var e drip.Event
	var data string
	var created int64
	if err := q.scanRow(ctx, q.q.EventGet, []any{id}, &e.ID, &e.FaucetID, &e.Type, &data, &created); err != nil {
		return nil, err
	}
	e.Data, e.CreatedAt = []byte(data), fromMicros(created)
	return &e, nil
}

func (q *querier) RefusalInsert(ctx context.Context, userID, faucetID int64, at time.Time) error {
	_, err := q.exec(ctx, q.q.RefusalInsert, userID, faucetID, micros(at))
	return err
}

func (q *querier) RefusalCountOthers(ctx context.Context, userID, faucetID int64, since time.Time) (int64, error) {
	var n int64
	err := q.scanRow(ctx, q.q.RefusalCountOthers, []any{userID, faucetID, micros(since)}, &n)
	return n, err
}

func (q *querier) ReconcileCoinSums(ctx context.Context) ([]store.CoinSum, error) {
	var out []store.CoinSum
	err := q.list(ctx, q.q.ReconcileCoinSums, nil, func(r Rows) error {
		var s store.CoinSum
		err := r.Scan(&s.Coin, &s.Sum)
		out = append(out, s)
		return err
	})
	return out, err
}

func (q *querier) ReconcileAccounts(ctx context.Context) ([]store.AccountMismatch, error) {
	var out []store.AccountMismatch
	err := q.list(ctx, q.q.ReconcileAccounts, nil, func(r Rows) error {
		var m store.AccountMismatch
		err := r.Scan(&m.AccountID, &m.Coin, &m.Balance, &m.Journal)
		out = append(out, m)
		return err
	})
	return out, err
}

func (q *querier) ReconcilePayouts(ctx context.Context) ([]int64, error) {
	out, err := q.ids(ctx, q.q.ReconcilePayouts, nil)
	if err != nil {
		return nil, err
	}
	// The copies SQLite keeps (D71, D72): each its own statement and
	// snapshot, as each of reconcile's checks is; a copy and its watermark
	// move together, in one transaction.
	for _, s := range []stmt{q.q.ReconcilePayoutsByRecipient, q.q.ReconcilePayoutsByFaucet} {
		if s.sql == "" {
			continue
		}
		if out, err = q.ids(ctx, s, out); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out, nil
}

// ReconcileEvents checks the copy of events by faucet SQLite keeps (D72);
// PostgreSQL keeps none.
func (q *querier) ReconcileEvents(ctx context.Context) ([]int64, error) {
	if q.q.ReconcileEventsByFaucet.sql == "" {
		return nil, nil
	}
	return q.ids(ctx, q.q.ReconcileEventsByFaucet, nil)
}

// ReconcileStatistics checks the statistics' sums against the payouts
// they hold (D73).
func (q *querier) ReconcileStatistics(ctx context.Context) ([]int64, error) {
	return q.ids(ctx, q.q.ReconcileStatistics, nil)
}

// ids appends to out the one integer column of the rows s returns.
func (q *querier) ids(ctx context.Context, s stmt, out []int64) ([]int64, error) {
	err := q.list(ctx, s, nil, func(r Rows) error {
		var id int64
		err := r.Scan(&id)
		out = append(out, id)
		return err
	})
	return out, err
}

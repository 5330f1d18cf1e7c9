package faucet

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// SettingsChange is the v2 faucet update (spec 2.7, D38): the first five
// fields are required; nil lists are left as they are.
type SettingsChange struct {
	Name         string
	Domain       string
	URL          string
	Description  string
	TimerMinutes int
	Currencies   *[]string
	Categories   *[]string
}

// UpdateSettings validates a change by D38 and applies it.
func (s *Service) UpdateSettings(ctx context.Context, id int64, c SettingsChange) (*drip.Faucet, error) {
	c.Name, c.Domain = strings.TrimSpace(c.Name), strings.ToLower(strings.TrimSpace(c.Domain))
	if err := validateSite(c.Name, c.Domain, c.URL); err != nil {
		return nil, err
	}
	if len([]rune(c.Description)) > 1000 {
		return nil, drip.Errorf(drip.CodeInvalid, "Invalid faucet description: at most 1000 characters.")
	}
	if c.TimerMinutes < 1 || c.TimerMinutes > 1440 {
		return nil, drip.Errorf(drip.CodeInvalid, "Invalid timer_minutes: 1 to 1440.")
	}
	if c.Currencies != nil {
		active, err := s.coins.ListActive(ctx)
		if err != nil {
			return nil, err
		}
		upper := make([]string, len(*c.Currencies))
		for i, s := range *c.Currencies {
			upper[i] = drip.Symbol(s)
		}
		list, err := uniqueFrom(upper, "currencies_selected", func(s string) bool { return drip.HasCoin(active, s) })
		if err != nil {
			return nil, err
		}
		c.Currencies = &list
	}
	if c.Categories != nil {
		list, err := uniqueFrom(*c.Categories, "categories_selected", func(s string) bool { return slices.Contains(drip.Categories, s) })
		if err != nil {
			return nil, err
		}
		c.Categories = &list
	}
	_, f, err := s.update(ctx, id, func(f *drip.Faucet) error {
		f.Name, f.Domain, f.URL = c.Name, c.Domain, c.URL
		f.Settings.Description, f.Settings.TimerMinutes = c.Description, c.TimerMinutes
		if c.Currencies != nil {
			f.Settings.Currencies = *c.Currencies
		}
		if c.Categories != nil {
			f.Settings.Categories = *c.Categories
		}
		return nil
	})
	return f, err
}

// uniqueFrom checks every entry of list with known and folds duplicates.
func uniqueFrom(list []string, field string, known func(string) bool) ([]string, error) {
	out := []string{}
	for _, e := range list {
		if !known(e) {
			return nil, drip.Errorf(drip.CodeInvalid, "Invalid %s: %q is not one of the accepted values.", field, e)
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// LowBalanceChange changes the low-balance alert (D43); nil leaves a field.
type LowBalanceChange struct {
	Enabled *bool
	// Thresholds replace the thresholds of the coins they name; 0 removes one.
	Thresholds map[string]int64
}

// SetLowBalance applies a change to the faucet's low-balance alert.
// Without Enabled, it toggles.
func (s *Service) SetLowBalance(ctx context.Context, id int64, c LowBalanceChange) (*drip.Faucet, error) {
	if c.Thresholds != nil {
		upper := make(map[string]int64, len(c.Thresholds))
		for coin, t := range c.Thresholds {
			upper[drip.Symbol(coin)] = t
		}
		c.Thresholds = upper
	}
	coins, err := s.coins.List(ctx)
	if err != nil {
		return nil, err
	}
	for coin, t := range c.Thresholds {
		if !drip.HasCoin(coins, coin) {
			return nil, drip.Errorf(drip.CodeInvalid, "Invalid threshold: %q is not a coin.", coin).WithV1Status(410)
		}
		if t < 0 {
			return nil, drip.Errorf(drip.CodeInvalid, "Invalid threshold for %s: a whole number of smallest units, 0 to remove it.", coin)
		}
	}
	_, f, err := s.update(ctx, id, func(f *drip.Faucet) error {
		if c.Enabled != nil {
			f.LowBalance.Enabled = *c.Enabled
		} else {
			f.LowBalance.Enabled = !f.LowBalance.Enabled
		}
		if f.LowBalance.Thresholds == nil {
			f.LowBalance.Thresholds = map[string]int64{}
		}
		for coin, t := range c.Thresholds {
			if t == 0 {
				delete(f.LowBalance.Thresholds, coin)
			} else {
				f.LowBalance.Thresholds[coin] = t
			}
		}
		return nil
	})
	return f, err
}

// PerPage is the page size of every paged list (D37).
const PerPage = 50

// Page is one page of a list (D37).
type Page[T any] struct {
	Items []T
	Page  int
	Total int64
}

// checkPage checks a paged read's coin and page. The coin may be any coin
// the service knows, not only an active one: a coin disabled since keeps
// its history.
func (s *Service) checkPage(ctx context.Context, coin string, page int) error {
	// coin is upper case already (UserStats, Transactions)
	all, err := s.coins.List(ctx)
	if err != nil {
		return err
	}
	if !drip.HasCoin(all, coin) {
		return drip.Errorf(drip.CodeInvalidCurrency, "Invalid coin: not a supported coin.")
	}
	if page < 1 || page > MaxPage {
		return drip.Errorf(drip.CodeInvalid, "Invalid page: a whole number from 1.")
	}
	return nil
}

// MaxPage is the last page a paged read serves.
const MaxPage = 1_000_000

// StatsDays is how many days of daily statistics a faucet sees.
const StatsDays = 30

// DailyStats are the faucet's payouts per UTC day and coin over the last
// StatsDays days (today included), newest first.
func (s *Service) DailyStats(ctx context.Context, f *drip.Faucet) ([]drip.DailyStat, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	return s.store.StatsDaily(ctx, f.ID, today.AddDate(0, 0, -(StatsDays-1)))
}

// UserStats is one page of what the faucet paid each recipient in coin.
func (s *Service) UserStats(ctx context.Context, f *drip.Faucet, coin string, page int) (*Page[drip.UserStat], error) {
	coin = drip.Symbol(coin)
	if err := s.checkPage(ctx, coin, page); err != nil {
		return nil, err
	}
	items, total, err := s.store.StatsUsers(ctx, &store.PageParams{ID: f.ID, Coin: coin, Limit: PerPage, Offset: (page - 1) * PerPage})
	if err != nil {
		return nil, err
	}
	return &Page[drip.UserStat]{Items: items, Page: page, Total: total}, nil
}

// Transactions is one page of the faucet's journal in coin, newest first.
func (s *Service) Transactions(ctx context.Context, f *drip.Faucet, coin string, page int) (*Page[drip.Transaction], error) {
	coin = drip.Symbol(coin)
	if err := s.checkPage(ctx, coin, page); err != nil {
		return nil, err
	}
	items, total, err := s.store.TransactionList(ctx, &store.PageParams{ID: f.AccountID, Coin: coin, Limit: PerPage, Offset: (page - 1) * PerPage})
	if err != nil {
		return nil, err
	}
	return &Page[drip.Transaction]{Items: items, Page: page, Total: total}, nil
}

// Notifications are the latest emails owed or sent to the faucet's owner.
func (s *Service) Notifications(ctx context.Context, f *drip.Faucet) ([]drip.Notification, error) {
	return s.store.NotificationListByFaucet(ctx, f.ID, 20)
}

// Balances are the faucet's balances of every coin it ever held.
func (s *Service) Balances(ctx context.Context, f *drip.Faucet) ([]drip.Balance, error) {
	return s.store.BalanceList(ctx, f.AccountID)
}

package console

import (
	"fmt"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	record "github.com/dripfaucet/drip/internal/reply"
)

// A bar chart drawn on the server as inline SVG (issue 11): the page's
// CSP runs no script and allows no style attribute, so the chart is SVG
// elements with presentation attributes, coloured by classes of
// console.css. It is an image (role="img") named by its title and
// described by a summary; each bar's <title> says its day and figures,
// and the page prints the same figures as a table beside it.

// Geometry of the chart, in the units of its viewBox.
const (
	chartWidth  = 600
	chartHeight = 180
	chartTop    = 18  // room for the largest amount's label
	chartBottom = 158 // the baseline; below it, the first and last day
	chartLeft   = 4
	chartRight  = 596
)

// barChart is one chart of daily amounts.
type barChart struct {
	ID          string // for aria-labelledby
	Title       string
	Summary     string
	Width       int
	Height      int
	Baseline    int
	Left, Right int
	Bars        []bar
	MaxLabel    string // the largest day's amount, at the top
	FirstDay    string
	LastDay     string
	LabelY      int // where the days are written
}

// bar is one day: its rectangle (a day without payouts has none) and
// what its <title> says.
type bar struct {
	X, Y, W, H float64
	Title      string
	Empty      bool
}

// dailyChart draws coin's amounts per UTC day from from to to
// (YYYY-MM-DD, both included), from the days that had payouts.
func dailyChart(coin string, days []record.Day, from, to string) (*barChart, error) {
	first, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, fmt.Errorf("console: chart from %q: %w", from, err)
	}
	last, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, fmt.Errorf("console: chart to %q: %w", to, err)
	}
	byDate := map[string]record.Day{}
	var top, total, count int64
	for _, d := range days {
		byDate[d.Date] = d
		top = max(top, d.Amount)
		total += d.Amount
		count += d.Payouts
	}
	n := int(last.Sub(first).Hours()/24) + 1
	c := &barChart{
		ID: "chart-" + coin, Title: fmt.Sprintf("%s paid per day, %s to %s", coin, from, to),
		Summary: fmt.Sprintf("%s, %s %s in %d days.", payoutCount(count), drip.FormatCoinsFixed(total), coin, n),
		Width:   chartWidth, Height: chartHeight, Baseline: chartBottom, Left: chartLeft, Right: chartRight,
		MaxLabel: drip.FormatCoinsFixed(top) + " " + coin, FirstDay: from, LastDay: to, LabelY: chartHeight - 4,
	}
	slot := float64(chartRight-chartLeft) / float64(n)
	for i := range n {
		date := first.AddDate(0, 0, i).Format(time.DateOnly)
		d, ok := byDate[date]
		b := bar{X: chartLeft + float64(i)*slot + slot*0.1, W: slot * 0.8, Empty: !ok}
		b.Title = date + ": no payouts"
		if ok {
			// Heights are drawing only, so float64 is fine here; the
			// figures in the title and the table are exact.
			b.H = float64(chartBottom-chartTop) * float64(d.Amount) / float64(top)
			b.H = max(b.H, 1) // a day with payouts always shows
			b.Title = fmt.Sprintf("%s: %s, %s %s", date, payoutCount(d.Payouts), drip.FormatCoinsFixed(d.Amount), coin)
		}
		b.Y = chartBottom - b.H
		c.Bars = append(c.Bars, b)
	}
	return c, nil
}

// payoutCount is n payouts in words: "1 payout", "2 payouts".
func payoutCount(n int64) string {
	if n == 1 {
		return "1 payout"
	}
	return fmt.Sprintf("%d payouts", n)
}

// Package reply holds what drip answers about a faucet, built once for
// both of the interfaces that read it: the data of the v2 replies (spec
// 4.2) and the structuredContent of the MCP tools (spec 4.3) have the same
// shapes, documented in internal/apiv2/openapi.json. Each record is made
// from domain values by its New function, so the two cannot drift apart.
//
// The jsonschema tags of the fields are the descriptions the tool server's
// output schemas and the OpenAPI document carry (package operation infers
// them with jsonschema-go, which takes a tag's whole text as the
// description; it must not begin with "WORD=").
package reply

import (
	"encoding/json"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// Coins writes smallest units as an exact JSON number of whole coins (D1).
func Coins(units int64) json.Number { return json.Number(drip.FormatCoins(units)) }

// Timestamp writes a time as RFC 3339 in UTC.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// OptionalTimestamp is Timestamp of a time that may be unset: nil writes
// null.
func OptionalTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Timestamp(*t)
	return &s
}

// dateLayout writes a UTC day.
const dateLayout = "2006-01-02"

// nonNil makes an absent list [], which is how every list is written.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Page is one page of a list (D37).
type Page[T any] struct {
	Items   []T   `json:"items" jsonschema:"this page's items"`
	Page    int   `json:"page" jsonschema:"this page's number, from 1"`
	PerPage int   `json:"per_page" jsonschema:"items per page"`
	Total   int64 `json:"total" jsonschema:"items in all pages"`
}

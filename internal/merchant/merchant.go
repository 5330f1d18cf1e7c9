// Package merchant is the hosted checkout of spec 4.4 (issue 13): a
// merchant's site posts a plain HTML form to /merchant/webscr, the buyer
// reviews the price in the coin they pay with (D57), pays from their drip
// balance in one ledger transfer, and the merchant learns of it by a
// callback (D55) and verifies it with a single-use token (D56).
package merchant

package audit

// MaxText is maxText, for the tests.
const MaxText = maxText

package postgres

// Overrides is PostgreSQL's own forms of statements, for the plan tests
// of the external test package (sqlstore.QueryText).
var Overrides = overrides

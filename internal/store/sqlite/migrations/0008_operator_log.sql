-- The operator log (issue 11, item 6): every action taken on the
-- operator pages, by whom, on what, with its details as JSON (never a
-- secret). Read newest first, by id, a page at a time; the primary key
-- serves that order, and the index one operator's entries.
CREATE TABLE operator_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  operator_id INTEGER NOT NULL REFERENCES users (id),
  action      TEXT NOT NULL,
  target      TEXT NOT NULL,
  detail      TEXT NOT NULL, -- JSON
  created_at  INTEGER NOT NULL
);
CREATE INDEX operator_log_operator ON operator_log (operator_id, id);

-- Events fan out into webhook deliveries by statement, not by trigger
-- (issue 16, D69). The statements that write events run the fan-out after
-- them, over the same rows (EventsFanoutRows in queries.sql):
-- SQLite ran this trigger as a program of its own for each event, which
-- cost the writer 2-3 us a payout. PostgreSQL keeps its trigger, which
-- runs once a statement over the rows it inserted.
DROP TRIGGER events_webhook_fanout;

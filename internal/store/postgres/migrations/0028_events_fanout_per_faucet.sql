-- The webhook fan-out trigger (D50, migration 0013) looks a batch's
-- faucets' endpoints up once a faucet, as its comment meant it to (issue
-- 16). The planner ran the LATERAL search after joining the distinct
-- faucets back to the inserted events, so once an event: a `hot` batch of
-- 31 payouts searched webhook_endpoints 31 times for its one faucet
-- (pg_stat_user_tables, BENCHMARKS.md round twenty-seven). A MATERIALIZED
-- CTE is evaluated on its own, before the join: one search a faucet. The
-- rows it inserts are the same (round twenty-seven checked both functions
-- over 500 events of 9 faucets and 60 endpoints: the same 1,280 outbox
-- rows).
CREATE OR REPLACE FUNCTION events_webhook_fanout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The endpoints are looked up by the index, faucet by faucet (LATERAL,
  -- OFFSET 0 keeping the planner from flattening it), in a CTE of their
  -- own (MATERIALIZED keeping it from being inlined into the join).
  INSERT INTO outbox (kind, endpoint_id, faucet_id, event_id, next_attempt_at, created_at)
  WITH endpoints AS MATERIALIZED (
    SELECT f.faucet_id, w.id, w.events
    FROM (SELECT DISTINCT faucet_id FROM inserted) f
    CROSS JOIN LATERAL (SELECT w.id, w.events FROM webhook_endpoints w
                        WHERE w.faucet_id = f.faucet_id AND w.enabled OFFSET 0) w)
  SELECT 'webhook', w.id, e.faucet_id, e.id, e.created_at, e.created_at
  FROM endpoints w
  JOIN inserted e ON e.faucet_id = w.faucet_id
  WHERE strpos(',' || w.events || ',', ',' || e.type || ',') > 0;
  RETURN NULL;
END;
$$;

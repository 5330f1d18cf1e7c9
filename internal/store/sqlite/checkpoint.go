package sqlite

import (
	"context"
	"database/sql"
	"net/url"
	"time"
)

// checkpointEvery is how often the checkpointer copies the log into the
// database file.
const checkpointEvery = 50 * time.Millisecond

// walBackstop is the log size, in pages, at which the writer checkpoints
// itself, as SQLite does by default at 1,000 pages: only should the
// checkpointer fall behind. A busy writer adds about 1,500 pages between
// two checkpoints.
const walBackstop = 4_000

// walKeep is the size, in bytes, the log file is cut back to when it
// starts over after a checkpoint, should a large transaction have grown it.
const walKeep = 32 << 20

// checkpointer copies committed pages from the write-ahead log into the
// database file on a connection of its own, so that the writer does not.
// By default SQLite checkpoints inside the commit that takes the log past
// 1,000 pages: every dozen or so batches of payouts, one commit also
// copies the log and syncs the database file while every payment of the
// next batch waits for the one writer. A checkpoint is PASSIVE, so it
// never blocks the writer or a reader; it changes nothing of durability,
// which is the log's sync at each commit (synchronous=FULL).
type checkpointer struct {
	ticking
	db *sql.DB
}

func startCheckpointer(path string) (*checkpointer, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?"+url.Values{"_pragma": {"busy_timeout(10000)"}}.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db}
	c.start(checkpointEvery, c.tick)
	return c, nil
}

func (c *checkpointer) tick(<-chan struct{}) {
	// An error (the disk full, say) is the writer's to meet and report at
	// its next commit; the backstop checkpoint keeps the log bounded.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, _ = c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	cancel()
}

func (c *checkpointer) close() error {
	c.halt()
	return c.db.Close()
}

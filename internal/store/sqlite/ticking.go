package sqlite

import (
	"sync"
	"time"
)

// ticking runs one of the store's background jobs (the checkpointer, the
// compactor) on a ticker of its own until halted.
type ticking struct {
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// start calls tick every period on a goroutine of its own until halt.
// tick is given the stop channel, to end a long turn early.
func (k *ticking) start(every time.Duration, tick func(stop <-chan struct{})) {
	k.stop, k.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(k.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-k.stop:
				return
			case <-t.C:
			}
			tick(k.stop)
		}
	}()
}

// halt stops the job and waits for its turn in progress to end.
func (k *ticking) halt() {
	k.stopped.Do(func() { close(k.stop) })
	<-k.done
}

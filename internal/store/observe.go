package store

import "time"

// Observer is told how each transaction of Transact went, for metrics:
// how long it took in all, how many times fn ran (more than once when the
// engine reported a retryable conflict), and its error.
type Observer interface {
	Transacted(d time.Duration, attempts int, err error)
}

// Observable is implemented by stores whose transactions can be observed.
// The product's interfaces do not carry it: a store without it is simply
// not measured.
type Observable interface {
	// Observe makes o the store's observer; nil stops observing.
	Observe(o Observer)
}

package main

import (
	"errors"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// profiles are the developer's records of a whole drip serve run, each
// written to its file when named (drip bench passes them through:
// --server-cpu-profile, --server-mem-profile, --server-trace):
//   - cpu: where the CPU went (pprof);
//   - mem: every allocation sampled since the process started, by stack
//     (pprof's allocs profile; -sample_index=alloc_space to rank them);
//   - trace: the runtime's execution trace (go tool trace): what each
//     goroutine waited on and for how long, which a CPU profile cannot
//     show (the batch writer's time in fsync, for one). Large: a few
//     megabytes a second under load.
type profiles struct {
	cpu, mem, trace string
}

// start begins the CPU profile and the trace; the returned stop ends them
// and writes the allocations profile. If start fails, nothing is left
// running.
func (p profiles) start() (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		return errors.Join(errs...)
	}
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		stops = append(stops, func() error { pprof.StopCPUProfile(); return f.Close() })
	}
	if p.trace != "" {
		f, err := os.Create(p.trace)
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		if err := trace.Start(f); err != nil {
			f.Close()
			return nil, errors.Join(err, stop())
		}
		stops = append(stops, func() error { trace.Stop(); return f.Close() })
	}
	if p.mem != "" {
		// Created now, so that a path that cannot be written is refused
		// before anything is served.
		f, err := os.Create(p.mem)
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		stops = append(stops, func() error {
			return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		})
	}
	return stop, nil
}

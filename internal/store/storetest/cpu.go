package storetest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// CPUClock is the CPU time spent while a benchmark runs: by its process
// (getrusage) and by the whole machine (/proc/stat: the database's
// processes too). Per payout, these are steadier than payouts/s on a
// shared machine, where throughput also moves with what else runs.
type CPUClock struct{ proc, machine time.Duration }

// StartCPU starts the clock.
func StartCPU() CPUClock { return CPUClock{processCPU(), machineCPU()} }

// Report adds the process's and the machine's CPU time per payout, at
// perOp payouts an iteration (1 when not given), to the benchmark's figures.
func (c CPUClock) Report(b *testing.B, perOp ...int) {
	n := float64(b.N)
	if len(perOp) > 0 {
		n *= float64(perOp[0])
	}
	b.ReportMetric(float64((processCPU()-c.proc).Microseconds())/n, "proc-µs/payout")
	if m := machineCPU(); m > 0 {
		b.ReportMetric(float64((m-c.machine).Microseconds())/n, "machine-µs/payout")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU is the busy time of every CPU since boot (user, nice,
// system, irq, softirq, steal), or 0 where /proc/stat is not there.
func machineCPU() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // idle (4) and iowait (5) left out
		if i < len(f) {
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

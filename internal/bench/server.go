package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// server is the drip serve under test, a child process.
type server struct {
	cmd  *exec.Cmd
	pid  int
	base string // http://127.0.0.1:port

	exited  chan struct{} // closed when the process has exited
	waitErr error         // its exit, once exited is closed
	stopped atomic.Bool

	errorLines atomic.Int64 // ERROR lines it has logged
	mu         sync.Mutex
	tail       []string // its last log lines, for diagnostics
}

// startServer runs exe with args and waits for its "drip serving" line,
// which tells the address it listens on.
func startServer(ctx context.Context, exe string, args []string, log io.Writer) (*server, error) {
	cmd := exec.Command(exe, args...)
	cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start drip serve: %w", err)
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	addr := make(chan string, 1)
	go s.readLog(pr, addr)
	go func() {
		s.waitErr = cmd.Wait() // returns once stderr is copied into pw
		pw.Close()
		close(s.exited)
	}()
	fmt.Fprintf(log, "bench: started drip serve (pid %d): %s\n", s.pid, strings.Join(args, " "))
	select {
	case a := <-addr:
		s.base = "http://" + a
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("drip serve exited before serving: %v\n%s", s.waitErr, s.lastLines())
	case <-time.After(2 * time.Minute):
		_ = s.stop()
		return nil, fmt.Errorf("drip serve logged no \"drip serving\" line within 2 minutes\n%s", s.lastLines())
	case <-ctx.Done():
		_ = s.stop()
		return nil, ctx.Err()
	}
}

// logLine is what the bench reads of serve's JSON log lines.
type logLine struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
	Addr  string `json:"addr"`
}

func (s *server) readLog(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		s.mu.Lock()
		if s.tail = append(s.tail, line); len(s.tail) > 20 {
			s.tail = s.tail[1:]
		}
		s.mu.Unlock()
		var l logLine
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		if l.Level == "ERROR" {
			s.errorLines.Add(1)
		}
		if l.Msg == "drip serving" && l.Addr != "" {
			select {
			case addr <- l.Addr:
			default:
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

func (s *server) lastLines() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// errorsSince returns the ERROR lines logged since mark (a count) as a short text.
func (s *server) errorsSince(mark int64) (int64, string) {
	n := s.errorLines.Load() - mark
	if n == 0 {
		return 0, ""
	}
	var last []string
	s.mu.Lock()
	for _, l := range s.tail {
		if strings.Contains(l, `"level":"ERROR"`) {
			last = append(last, l)
		}
	}
	s.mu.Unlock()
	if len(last) > 3 {
		last = last[len(last)-3:]
	}
	return n, strings.Join(last, "\n")
}

// alive reports an error if the server has exited.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("drip serve exited: %v\n%s", s.waitErr, s.lastLines())
	default:
		return nil
	}
}

// stop sends SIGTERM and waits for a clean exit (serve drains in-flight
// requests); after 60 seconds it kills the process.
func (s *server) stop() error {
	if s.stopped.Swap(true) {
		<-s.exited
		return nil
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("drip serve did not stop within 60s of SIGTERM; killed")
	}
	if s.waitErr != nil {
		return fmt.Errorf("drip serve exited with %v after SIGTERM\n%s", s.waitErr, s.lastLines())
	}
	return nil
}

// usage is the server's resource use, read from /proc (Linux).
type usage struct {
	cpu time.Duration // user + system CPU time so far
	rss int64         // bytes resident now
	hwm int64         // bytes resident at most since the last resetPeak
}

// clockTick is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

func (s *server) usage() (usage, error) {
	var u usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return u, err
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is the first, utime the 12th, stime the 13th.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", s.pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return u, err
	}
	u.cpu = time.Duration(utime+stime) * clockTick
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/status %s: %w", s.pid, name, err)
		}
		if name == "VmRSS" {
			u.rss = kb << 10
		} else {
			u.hwm = kb << 10
		}
	}
	return u, nil
}

// resetPeak restarts VmHWM from the current RSS, so each run reports its
// own peak; where the kernel refuses, the peak is the process's.
func (s *server) resetPeak() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.pid), []byte("5"), 0)
}

// sampler records the server's largest RSS while it runs.
type sampler struct {
	s    *server
	stop chan struct{}
	done chan struct{}
	max  int64
}

func (s *server) sample(every time.Duration) *sampler {
	s.resetPeak()
	sm := &sampler{s: s, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sm.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if u, err := s.usage(); err == nil {
				sm.max = max(sm.max, u.rss, u.hwm)
			}
			select {
			case <-t.C:
			case <-sm.stop:
				return
			}
		}
	}()
	return sm
}

// peak stops the sampler and returns the largest RSS seen, in bytes.
func (sm *sampler) peak() int64 {
	close(sm.stop)
	<-sm.done
	if u, err := sm.s.usage(); err == nil {
		sm.max = max(sm.max, u.rss, u.hwm)
	}
	return sm.max
}

package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// ErrProcStat marks a /proc/<pid>/stat the harness cannot read.
var ErrProcStat = errors.New("experiments: bad /proc/<pid>/stat")

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ
// (sysconf(_SC_CLK_TCK)), which the kernel fixes at 100 per second in its
// user-space ABI on every architecture Go runs Linux on.
const userHZ = 100

// parseProcStat returns utime and stime (fields 14 and 15, in USER_HZ
// ticks) of a /proc/<pid>/stat line:
//
//	pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime ...
//
// comm is the executable's name as the process set it: it may contain
// spaces and parentheses, so the fields are counted after the LAST ')'.
func parseProcStat(b []byte) (utime, stime uint64, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("%w: no ')' closing the command name", ErrProcStat)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 15-2 {
		return 0, 0, fmt.Errorf("%w: %d fields after the command name, want at least 13", ErrProcStat, len(f))
	}
	if utime, err = strconv.ParseUint(string(f[14-3]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("%w: utime: %w", ErrProcStat, err)
	}
	if stime, err = strconv.ParseUint(string(f[15-3]), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("%w: stime: %w", ErrProcStat, err)
	}
	return utime, stime, nil
}

// readProcCPU is the CPU time (user + system) process pid has used so far,
// from procRoot/<pid>/stat.
func readProcCPU(procRoot string, pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrProcStat, err)
	}
	u, s, err := parseProcStat(b)
	if err != nil {
		return 0, err
	}
	return ticksToDuration(u + s), nil
}

func ticksToDuration(ticks uint64) time.Duration {
	return time.Duration(ticks) * (time.Second / userHZ)
}

// serverProcess is a system whose server runs in a child process: its CPU
// time is the server's alone (the harness's clients run in this process).
type serverProcess interface {
	ServerPID() int
}

// cpuWindow reads a server process's CPU time at the start and the end of
// a cell's measured window. begin and finish may be called from timers
// concurrently with each other; the first finish after begin wins. A nil
// *cpuWindow (a system without a server process) does nothing.
type cpuWindow struct {
	procRoot string
	pid      int
	allocs   func() (uint64, error) // the server's heap allocations so far; nil: not measured

	mu                   sync.Mutex
	begun, ended         bool
	start, end           time.Duration
	allocStart, allocEnd uint64
	allocsOK             bool // both allocation readings taken
	err                  error
}

// serverAllocator is a server process that reports its heap allocations
// (Go's runtime/metrics /gc/heap/allocs:objects, asked over its pipe).
type serverAllocator interface {
	ServerAllocs() (uint64, error)
}

// ServerAllocsPerMsg is the Extra key of the heap objects the server
// process allocated per message acknowledged in the measured window.
const ServerAllocsPerMsg = "server_allocs_per_msg"

// newCPUWindow returns the window of sys's server process, or nil.
func newCPUWindow(sys system) *cpuWindow {
	sp, ok := sys.(serverProcess)
	if !ok {
		return nil
	}
	w := &cpuWindow{procRoot: "/proc", pid: sp.ServerPID()}
	if sa, ok := sys.(serverAllocator); ok {
		w.allocs = sa.ServerAllocs
	}
	return w
}

// begin reads the CPU time at the measured window's start.
func (w *cpuWindow) begin() {
	if w == nil {
		return
	}
	r := w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.begun || w.ended {
		return
	}
	w.begun, w.start, w.err = true, r.cpu, r.err
	w.allocStart, w.allocsOK = r.allocs, r.allocsOK
}

// windowReading is one end of the window: the CPU time and, when the
// server reports them, its allocations.
type windowReading struct {
	cpu      time.Duration
	err      error
	allocs   uint64
	allocsOK bool
}

func (w *cpuWindow) read() windowReading {
	var r windowReading
	r.cpu, r.err = readProcCPU(w.procRoot, w.pid)
	if w.allocs != nil {
		a, err := w.allocs()
		r.allocs, r.allocsOK = a, err == nil
	}
	return r
}

// finish reads the CPU time at the window's end (once, after begin).
func (w *cpuWindow) finish() {
	if w == nil {
		return
	}
	r := w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.begun || w.ended {
		return
	}
	w.ended, w.end = true, r.cpu
	w.allocEnd, w.allocsOK = r.allocs, w.allocsOK && r.allocsOK
	if w.err == nil {
		w.err = r.err
	}
}

// record sets the cell's server CPU (seconds, and µs per message
// acknowledged in the window) when both readings were taken.
func (w *cpuWindow) record(rc *result.Cell) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return fmt.Errorf("server CPU of pid %d: %w", w.pid, w.err)
	}
	if !w.begun || !w.ended || w.end < w.start {
		return nil
	}
	cpu := w.end - w.start
	rc.ServerCPUSeconds = cpu.Seconds()
	if rc.Ops > 0 {
		rc.ServerCPUMicrosPerMsg = float64(cpu.Microseconds()) / float64(rc.Ops)
		if w.allocsOK && w.allocEnd >= w.allocStart {
			if rc.Extra == nil {
				rc.Extra = map[string]float64{}
			}
			rc.Extra[ServerAllocsPerMsg] = float64(w.allocEnd-w.allocStart) / float64(rc.Ops)
		}
	}
	return nil
}

// cpuSummary is the cell's server CPU for its summary line ("" when not
// measured).
func cpuSummary(rc *result.Cell) string {
	if rc.ServerCPUSeconds <= 0 {
		return ""
	}
	s := fmt.Sprintf(" server CPU %.2f s %.1f µs/msg", rc.ServerCPUSeconds, rc.ServerCPUMicrosPerMsg)
	if a, ok := rc.Extra[ServerAllocsPerMsg]; ok {
		s += fmt.Sprintf(" %.1f allocs/msg", a)
	}
	return s
}

package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// utime and stime are fields 14 and 15 counted after the LAST ')': a
// command name may hold spaces and parentheses.
func TestParseProcStat(t *testing.T) {
	for name, tc := range map[string]struct {
		line         string
		utime, stime uint64
	}{
		"plain":        {"4242 (brokerlab) S 1 4242 4242 0 -1 4194560 1200 0 3 0 731 219 0 0 20 0 12 0 5000 1000000 300 18446744073709551615\n", 731, 219},
		"spaces":       {"17 (my broker) R 1 17 17 0 -1 4194304 5 0 0 0 12 34 0 0 20 0 1 0 1 2 3", 12, 34},
		"parentheses":  {"99 (a) b) (c)) S 1 99 99 0 -1 0 0 0 0 0 100000 7 0 0 20 0 1 0 1 2 3", 100000, 7},
		"fake fields":  {"5 (x) 1 2 3 4 5 6 7 8 9 10 11 12 13) Z 1 5 5 0 -1 0 0 0 0 0 8 9 0 0", 8, 9},
		"comm is ')'":  {"6 ()) S 1 6 6 0 -1 0 0 0 0 0 1 2 0 0", 1, 2},
		"zero and big": {"7 (z) S 1 7 7 0 -1 0 0 0 0 0 0 18446744073709551615 0", 0, 18446744073709551615},
	} {
		u, s, err := parseProcStat([]byte(tc.line))
		if err != nil || u != tc.utime || s != tc.stime {
			t.Errorf("%s: utime %d stime %d err %v; want %d %d", name, u, s, err, tc.utime, tc.stime)
		}
	}
	for name, line := range map[string]string{
		"no paren":   "1 brokerlab S 1 2 3 4 5 6 7 8 9 10 11 12",
		"truncated":  "1 (b) S 1 1 1 0 -1 0 0 0 0 0 5",
		"not number": "1 (b) S 1 1 1 0 -1 0 0 0 0 0 x 5",
		"empty":      "",
	} {
		if _, _, err := parseProcStat([]byte(line)); !errors.Is(err, ErrProcStat) {
			t.Errorf("%s: err %v, want ErrProcStat", name, err)
		}
	}
}

// readProcCPU reads utime + stime in USER_HZ ticks (1/100 s) from a proc
// tree, and the process's own entry is readable and moves.
func TestReadProcCPU(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "31"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := "31 (srv (x)) S 1 31 31 0 -1 0 0 0 0 0 250 75 0 0 20 0 1 0 1 2 3\n"
	if err := os.WriteFile(filepath.Join(root, "31", "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := readProcCPU(root, 31)
	if err != nil || d != 3250*time.Millisecond {
		t.Fatalf("cpu %v (%v), want 3.25s", d, err)
	}
	if _, err := readProcCPU(root, 32); !errors.Is(err, ErrProcStat) {
		t.Fatalf("missing process: %v, want ErrProcStat", err)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	pid := os.Getpid()
	a, err := readProcCPU("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the kernel's tick count moves (bounded).
	var b time.Duration
	x := 1
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		for i := range 1 << 20 {
			x = x*31 + i
		}
		if b, err = readProcCPU("/proc", pid); err != nil || b > a {
			break
		}
	}
	if err != nil || b <= a {
		t.Fatalf("own CPU %v then %v (%v), x=%d", a, b, err, x)
	}
}

// The window records the CPU between begin and the first finish, divided
// by the acknowledged messages; without both readings nothing is recorded.
func TestCPUWindowRecords(t *testing.T) {
	root := t.TempDir()
	write := func(ticks int) {
		t.Helper()
		_ = os.MkdirAll(filepath.Join(root, "8"), 0o755)
		line := "8 (s) S 1 8 8 0 -1 0 0 0 0 0 " + strconv.Itoa(ticks) + " 0 0 0"
		if err := os.WriteFile(filepath.Join(root, "8", "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &cpuWindow{procRoot: root, pid: 8}
	write(100)
	w.finish() // before begin: ignored
	w.begin()
	write(350)
	w.finish()
	write(900)
	w.finish() // the first finish wins
	rc := result.Cell{Ops: 1000}
	if err := w.record(&rc); err != nil {
		t.Fatal(err)
	}
	if rc.ServerCPUSeconds != 2.5 || rc.ServerCPUMicrosPerMsg != 2500 {
		t.Fatalf("cpu %v s, %v µs/msg; want 2.5 s, 2500 µs/msg", rc.ServerCPUSeconds, rc.ServerCPUMicrosPerMsg)
	}
	if s := cpuSummary(&rc); s != " server CPU 2.50 s 2500.0 µs/msg" {
		t.Fatalf("summary %q", s)
	}
	if _, ok := rc.Extra[ServerAllocsPerMsg]; ok {
		t.Fatal("allocations recorded for a server that reports none")
	}

	// A server that reports its allocations: per message over the window.
	count := uint64(5000)
	wa := &cpuWindow{procRoot: root, pid: 8, allocs: func() (uint64, error) { return count, nil }}
	wa.begin()
	count = 5000 + 12_500
	write(1000)
	wa.finish()
	ra := result.Cell{Ops: 1000}
	if err := wa.record(&ra); err != nil {
		t.Fatal(err)
	}
	if got := ra.Extra[ServerAllocsPerMsg]; got != 12.5 {
		t.Fatalf("allocs per message %v, want 12.5", got)
	}
	if s := cpuSummary(&ra); !strings.HasSuffix(s, " 12.5 allocs/msg") {
		t.Fatalf("summary %q", s)
	}
	// A failed reading at either end records no allocations.
	wf := &cpuWindow{procRoot: root, pid: 8, allocs: func() (uint64, error) { return 0, errors.New("no answer") }}
	wf.begin()
	wf.finish()
	rf := result.Cell{Ops: 1000}
	if err := wf.record(&rf); err != nil {
		t.Fatal(err)
	}
	if _, ok := rf.Extra[ServerAllocsPerMsg]; ok {
		t.Fatal("allocations recorded from failed readings")
	}

	var none result.Cell
	if err := (&cpuWindow{procRoot: root, pid: 8}).record(&none); err != nil || none.ServerCPUSeconds != 0 {
		t.Fatalf("a window never begun recorded %+v (%v)", none, err)
	}
	var nilW *cpuWindow
	nilW.begin()
	nilW.finish()
	if err := nilW.record(&none); err != nil || none.ServerCPUSeconds != 0 || cpuSummary(&none) != "" {
		t.Fatalf("unmeasured cell %+v (%v)", none, err)
	}
	gone := &cpuWindow{procRoot: root, pid: 9}
	gone.begin()
	gone.finish()
	if err := gone.record(&none); !errors.Is(err, ErrProcStat) {
		t.Fatalf("vanished process: %v", err)
	}
}

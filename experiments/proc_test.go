package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// childWatch polls /proc for this process's server children (their
// environment holds ChildEnv) while a run goes on, recording each PID with
// its kind; act, if set, is called once per new child.
type childWatch struct {
	mu   sync.Mutex
	pids map[int]string // pid → kind
	stop chan struct{}
	done chan struct{}
}

func watchChildren(act func(pid int, kind string)) *childWatch {
	w := &childWatch{pids: map[int]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	me := os.Getpid()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				pid, err := strconv.Atoi(e.Name())
				if err != nil {
					continue
				}
				w.mu.Lock()
				_, known := w.pids[pid]
				w.mu.Unlock()
				if known {
					continue
				}
				st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
				if err != nil {
					continue
				}
				i := bytes.LastIndexByte(st, ')')
				f := bytes.Fields(st[i+1:])
				if len(f) < 2 || string(f[1]) != strconv.Itoa(me) {
					continue
				}
				env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
				if err != nil {
					continue
				}
				for _, kv := range bytes.Split(env, []byte{0}) {
					if v, ok := bytes.CutPrefix(kv, []byte(ChildEnv+"=")); ok {
						var spec childSpec
						_ = json.Unmarshal(v, &spec)
						w.mu.Lock()
						w.pids[pid] = spec.Kind
						w.mu.Unlock()
						if act != nil {
							act(pid, spec.Kind)
						}
					}
				}
			}
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *childWatch) finish() map[int]string {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pids
}

func needProc(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc: the server's CPU is read from /proc/<pid>/stat")
	}
}

const procBase = `
name: proc
warmup: 200ms
duration: 1s
interval: 200ms
settle: 1ms
engine: {path: mmap, flush: async, transport: process, segment_size: 8MiB}
workload: {mode: closed, producers: 8, size: fixed:1024}
peers: [nats]
`

// A process cell and its NATS mirror run their servers in child
// processes: messages flow, each server's CPU per message is measured,
// the cpu/msg and msg/s ratios are computed, and both children are gone
// afterwards.
func TestProcessCellAndNATSMirror(t *testing.T) {
	needProc(t)
	e, err := Parse([]byte(procBase + `
pairings:
  - {name: cpu_per_msg, numerator: {transport: process}, denominator: {system: nats, transport: process}, metric: cpu/msg}
  - {name: msgs, numerator: {transport: process}, denominator: {system: nats, transport: process}, metric: msg/s}
`))
	if err != nil {
		t.Fatal(err)
	}
	profDir := t.TempDir()
	t.Setenv(ChildProfileEnv, profDir) // each child writes its CPU profile there
	w := watchChildren(nil)
	var log strings.Builder
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Progress: &log,
		ProgressEvery: time.Second})
	pids := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{childBroker, childNATS} {
		files, _ := filepath.Glob(filepath.Join(profDir, kind+"-*.pprof"))
		if len(files) != 1 {
			t.Fatalf("%s CPU profiles %v, want one", kind, files)
		}
		if b, err := os.ReadFile(files[0]); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("%s: not a gzip'd pprof profile (%d bytes, %v)", files[0], len(b), err)
		}
	}
	if o.Status != result.StatusOK || len(o.Cells) != 2 {
		t.Fatalf("status %s, %d cells\n%s", o.Status, len(o.Cells), log.String())
	}
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.MsgPerSec <= 0 {
			t.Fatalf("%s %s: error %q ops %d\n%s", c.SystemOrDefault(), c.Name, c.Error, c.Ops, log.String())
		}
		if c.ServerCPUSeconds <= 0 || c.ServerCPUMicrosPerMsg <= 0 {
			t.Fatalf("%s %s: server CPU %v s, %v µs/msg", c.SystemOrDefault(), c.Name, c.ServerCPUSeconds, c.ServerCPUMicrosPerMsg)
		}
		// µs/msg is the window's CPU over the window's acknowledged messages.
		if a := c.Extra[ServerAllocsPerMsg]; a <= 0 {
			t.Fatalf("%s %s: server allocations per message %v", c.SystemOrDefault(), c.Name, a)
		}
		if want := c.ServerCPUSeconds * 1e6 / float64(c.Ops); c.ServerCPUMicrosPerMsg < want*0.999 || c.ServerCPUMicrosPerMsg > want*1.001 {
			t.Fatalf("%s: %v µs/msg, want %v", c.Name, c.ServerCPUMicrosPerMsg, want)
		}
	}
	// The broker child's store counters reach the cell (asked over its stdin).
	for _, c := range o.Cells {
		if c.SystemOrDefault() == result.SystemBrokerlab && c.Extra["max_lock_held_ns"] <= 0 {
			t.Fatalf("%s: no store counters from the broker child: %v", c.Name, c.Extra)
		}
	}
	if len(o.Ratios) != 2 {
		t.Fatalf("ratios %+v", o.Ratios)
	}
	for _, r := range o.Ratios {
		if r.Missing != "" || r.Stat.N != 1 || r.Stat.Median <= 0 {
			t.Fatalf("ratio %s: %+v", r.Name, r)
		}
	}
	if s := o.Ratios[0].String(); !strings.Contains(s, "(cpu/msg, lower is better") {
		t.Fatalf("ratio line %q", s)
	}
	if !strings.Contains(log.String(), "µs/msg") {
		t.Fatalf("no server CPU in the summary lines:\n%s", log.String())
	}
	// result.json carries the per-rep fields.
	b, err := os.ReadFile(filepath.Join(o.RunDir, "result.json"))
	if err != nil || !bytes.Contains(b, []byte(`"server_cpu_us_per_msg"`)) || !bytes.Contains(b, []byte(`"server_cpu_s"`)) {
		t.Fatalf("result.json lacks the server CPU (%v)", err)
	}
	// One broker child and one NATS child, both gone.
	kinds := map[string]int{}
	for pid, kind := range pids {
		kinds[kind]++
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s child %d still exists: kill(0) = %v", kind, pid, err)
		}
	}
	if kinds[childBroker] != 1 || kinds[childNATS] != 1 {
		t.Fatalf("children seen %v, want one broker and one nats", pids)
	}
}

// A process cell driven by the official RocketMQ Go client: the child's
// broker registers with the harness's name server, the official client finds
// it there, and the child's CPU per acknowledged message is measured (the
// broker's cost of the official client's requests, apart from the client's).
func TestOfficialClientProcessCell(t *testing.T) {
	needProc(t)
	t.Parallel() // a run of its own: own directories, ports and child
	e, err := Parse([]byte(strings.Replace(procBase, "peers: [nats]\n", "", 1) + `
extra:
  - {client: rocketmq}
pairings:
  - {name: official_vs_own_client_cpu, numerator: {client: rocketmq}, denominator: {client: brokerlab}, metric: cpu/msg}
`))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(), Progress: &log,
		ProgressEvery: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != result.StatusOK || len(o.Cells) != 2 {
		t.Fatalf("status %s, %d cells\n%s", o.Status, len(o.Cells), log.String())
	}
	var official bool
	for _, c := range o.Cells {
		if c.Error != "" || c.Ops == 0 || c.ServerCPUMicrosPerMsg <= 0 {
			t.Fatalf("%s: error %q ops %d, %v µs/msg\n%s", c.Name, c.Error, c.Ops, c.ServerCPUMicrosPerMsg, log.String())
		}
		official = official || strings.Contains(c.Name, "client=rocketmq")
	}
	if !official {
		t.Fatalf("no client=rocketmq cell among %v", o.Cells)
	}
	if len(o.Ratios) != 1 || o.Ratios[0].Missing != "" || o.Ratios[0].Stat.Median <= 0 {
		t.Fatalf("ratios %+v", o.Ratios)
	}
}

// A child whose server cannot start fails the cell with the child's
// stderr in the error, and leaves no process behind.
func TestProcessChildStartFailure(t *testing.T) {
	needProc(t)
	e, err := Parse([]byte(procBase))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	cell := cells[0]
	cell.Exp.Engine.Path = "no-such-path" // past validation: the child refuses it
	w := watchChildren(nil)
	_, err = runCell(context.Background(), &cell, 0, t.TempDir(), t.TempDir(), Options{}, &progress{}, hostProbe{procRoot: "/proc"})
	pids := w.finish()
	if !errors.Is(err, ErrChild) {
		t.Fatalf("err = %v, want ErrChild", err)
	}
	for _, want := range []string{"exited before READY", "exit status 1", "stderr:", `"no-such-path"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("child %d still exists: %v", pid, err)
		}
	}
}

// A server child that exits during the cell's measured window (here:
// SIGTERM, which it answers with a clean shutdown) fails the cell.
func TestProcessChildExitDuringCell(t *testing.T) {
	needProc(t)
	// 3 s measured: the SIGTERM below lands inside the window even when a
	// loaded machine delays the first progress line.
	y := strings.Replace(strings.Replace(procBase, "peers: [nats]\n", "", 1), "duration: 1s\n", "duration: 3s\n", 1)
	e, err := Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	// The first progress line comes from the measured window: it arms the
	// kill. The child gets SIGTERM then, or when the watcher first sees it
	// if that is later (whichever happens second sends the one signal).
	var armed, sent atomic.Bool
	kill := func(pid int) {
		if armed.Load() && sent.CompareAndSwap(false, true) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	w := watchChildren(func(pid int, _ string) { kill(pid) })
	term := &onLine{match: " t=", do: func() {
		armed.Store(true)
		w.mu.Lock()
		defer w.mu.Unlock()
		for pid := range w.pids {
			kill(pid)
		}
	}}
	o, err := Run(context.Background(), e, Options{OutRoot: t.TempDir(), StoreRoot: t.TempDir(),
		Progress: term, ProgressEvery: 200 * time.Millisecond})
	pids := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Cells) != 1 || !regexp.MustCompile(`(exited during the cell|stopped on its own during the cell \(STOPPING SIGTERM\)) \(exit: ok\)`).MatchString(o.Cells[0].Error) {
		t.Fatalf("signal sent %v; cells %+v\n%s", sent.Load(), o.Cells, term.b.String())
	}
	if len(pids) != 1 || !term.done || !sent.Load() {
		t.Fatalf("children %v, armed %v, signalled %v", pids, term.done, sent.Load())
	}
}

// onLine is a progress writer that calls do once, at the first line
// containing match.
type onLine struct {
	match string
	do    func()
	mu    sync.Mutex
	b     strings.Builder
	done  bool
}

func (o *onLine) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b.Write(p)
	if !o.done && strings.Contains(string(p), o.match) {
		o.done = true
		o.do()
	}
	return len(p), nil
}

// Combinations a process cell cannot run are refused, naming them.
func TestProcessConfigRefused(t *testing.T) {
	base := `
name: p
engine: {transport: process}
`
	for _, tc := range []struct{ extra, want string }{
		{"  tls: true\n", "tls"},
		{"  client: nosuch\n", "client nosuch"},
		{"  replication: sync\n", "replication sync"},
		{"  stages: true\n", "stages"},
	} {
		y := strings.Replace(base, "engine: {transport: process}\n", "engine:\n  transport: process\n"+tc.extra, 1)
		_, err := Parse([]byte(y))
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "process is not supported with "+tc.want) {
			t.Errorf("%q: err = %v, want a refusal naming %q", tc.extra, err, tc.want)
		}
	}
	// As a matrix value and an extra cell too.
	if _, err := Parse([]byte("name: p\nengine: {tls: true, transport: loopback}\nmatrix:\n  - {param: transport, values: [loopback, process]}\n")); !errors.Is(err, ErrConfig) ||
		!strings.Contains(err.Error(), "process is not supported with tls") {
		t.Errorf("matrix: %v", err)
	}
	if _, err := Parse([]byte("name: p\nengine: {stages: true}\nextra:\n  - {transport: process}\n")); !errors.Is(err, ErrConfig) ||
		!strings.Contains(err.Error(), "stages") {
		t.Errorf("extra: %v", err)
	}
	_, err := Parse([]byte(base + "stall: {at: 1s, length: 100ms}\n"))
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "not supported with stall") {
		t.Errorf("stall: %v", err)
	}
	if _, err := Parse([]byte(base + "peers: [nats]\n")); err != nil {
		t.Errorf("a plain process cell with a NATS mirror: %v", err)
	}
}

// cpu/msg compares only cells that measure the server's CPU: transport
// process on both sides.
func TestCPUPairingNeedsProcessCells(t *testing.T) {
	y := `
name: p
engine: {path: mmap, flush: async}
peers: [nats]
extra:
  - {transport: loopback}
  - {transport: process}
pairings:
`
	if _, err := Parse([]byte(y + "  - {name: ok, numerator: {transport: process}, denominator: {system: nats, transport: process}, metric: cpu/msg}\n")); err != nil {
		t.Fatalf("process vs process: %v", err)
	}
	_, err := Parse([]byte(y + "  - {name: wire, numerator: {transport: loopback}, denominator: {system: nats, transport: loopback}, metric: cpu/msg}\n"))
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "measures no server CPU (transport loopback") {
		t.Fatalf("loopback cells: %v", err)
	}
	_, err = Parse([]byte(y + "  - {name: mixed, numerator: {transport: process}, denominator: {system: nats, transport: loopback}, metric: msg/s}\n"))
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "transport differs") {
		t.Fatalf("process vs loopback: %v", err)
	}
}

// The child answers its requests line by line.
func TestAnswerChild(t *testing.T) {
	f := &fakeChildServer{stats: childStats{Appends: 7, AppendedBytes: 7168, CacheHitRate: -1}}
	var cs childStats
	if err := json.Unmarshal([]byte(answerChild(f, "stats")), &cs); err != nil || cs.sys().Appends != 7 || cs.sys().AppendedBytes != 7168 {
		t.Fatalf("stats %+v (%v)", cs, err)
	}
	if got := answerChild(f, "settle 1500000000"); got != "ok" || f.settled != 1500*time.Millisecond {
		t.Fatalf("settle: %q, waited %v", got, f.settled)
	}
	f.settleErr = errors.New("dispatch behind\nby a lot")
	if got := answerChild(f, "settle 5"); got != "err dispatch behind by a lot" {
		t.Fatalf("failed settle: %q", got)
	}
	for _, bad := range []string{"settle", "settle -1", "settle x", "flush"} {
		if got := answerChild(f, bad); !strings.HasPrefix(got, "err ") {
			t.Errorf("%q: %q", bad, got)
		}
	}
}

type fakeChildServer struct {
	stats     childStats
	settled   time.Duration
	settleErr error
}

func (f *fakeChildServer) Addr() string      { return "127.0.0.1:1" }
func (f *fakeChildServer) Stats() childStats { return f.stats }
func (f *fakeChildServer) Settle(d time.Duration) error {
	f.settled = d
	return f.settleErr
}
func (f *fakeChildServer) Shutdown() error { return nil }

package experiments

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/workloads/natsdriver"
)

// A cell with transport process runs its server — the broker, or the NATS
// JetStream server of its peer cell — in a child process, so the server's
// CPU time can be read from /proc/<pid>/stat apart from the harness's
// clients, which stay in the parent and drive it over 127.0.0.1 TCP.
//
// The parent re-executes its own binary (os.Executable) as
// "<binary> -test.run=^$ harness-child" (ChildCommand) with ChildEnv set to
// a JSON childSpec. The brokerlab binary serves through its hidden
// harness-child command (ServeChild); a test binary — the experiments
// package's — calls RunChildIfAsked first thing in TestMain, and the
// -test.run=^$ makes a test binary without that hook exit at once. The
// child's protocol, one line per message:
//
//	stdout  "READY <addr>" once the server accepts connections (addr is
//	        host:port for the broker, nats://host:port for NATS), then
//	        one reply line per request
//	stdin   requests: "stats" → one JSON line (childStats);
//	        "allocs" → the heap objects allocated so far (decimal);
//	        "settle <ns>" → "ok" or "err <message>" (the broker's
//	        dispatch caught up within ns nanoseconds).
//	        EOF (the parent closed its end, or died) → shut down
//	SIGTERM → "STOPPING SIGTERM" on stdout (the parent did not ask: its
//	        cell fails), then shut down; SIGINT is ignored (Ctrl-C reaches
//	        the whole process group: the parent decides when its child stops)
//	stderr  diagnostics: the server's warnings, the error that stopped it
//
// Shutting down is broker.Shutdown (the store flushed and closed) or the
// NATS server's shutdown; the exit status is 0 after a clean shutdown, 1
// when the server failed to start or to stop cleanly, 2 for a bad spec.

// ChildEnv is the environment variable that carries a cell's server
// process its JSON childSpec.
const ChildEnv = "BROKERLAB_CHILD"

// ChildCommand is the command-line argument the parent starts its child
// with: the name of brokerlab's hidden command that calls ServeChild.
const ChildCommand = "harness-child"

// Kinds of child server.
const (
	childBroker = "broker" // brokerlab's broker over its store (engine section)
	childNATS   = "nats"   // NATS JetStream, SyncAlways unless engine.flush is async
)

// childSpec tells a child process which server to run.
type childSpec struct {
	Kind   string `json:"kind"`
	Engine Engine `json:"engine"`
	// Dir is the store directory (the cell's, removed by the parent).
	Dir string `json:"dir"`
	// Producers sizes the broker's send workers as for a loopback cell.
	Producers int `json:"producers"`
	// Namesrv, when set (client rocketmq cells), is the parent's name server
	// the broker registers with, holding empty pulls as a loopback cell's.
	Namesrv string `json:"namesrv,omitempty"`
	// GRPC (client rocketmq5 cells) serves the broker's gRPC front end on
	// 127.0.0.1:0 beside its remoting port, as `brokerlab broker
	// --grpc-listen`; READY then carries its address second.
	GRPC bool `json:"grpc,omitempty"`
}

// childStats are the broker's store counters (sysStats without the
// replication lag, which a process cell never has), as the child reports
// them. NATS reports zeros with CacheHitRate -1.
type childStats struct {
	Flush         flush.Stats   `json:"flush"`
	Rolls         uint64        `json:"rolls"`
	SyncCreates   uint64        `json:"sync_creates"`
	MaxLockHeld   time.Duration `json:"max_lock_held_ns"`
	LockHeldNs    uint64        `json:"lock_held_ns"`
	Appends       uint64        `json:"appends"`
	CacheHitRate  float64       `json:"cache_hit_rate"`
	AppendedBytes int64         `json:"appended_bytes"`
}

func toChildStats(s sysStats) childStats {
	return childStats{Flush: s.Flush, Rolls: s.Rolls, SyncCreates: s.SyncCreates, MaxLockHeld: s.MaxLockHeld,
		LockHeldNs: s.LockHeldNs, Appends: s.Appends, CacheHitRate: s.CacheHitRate, AppendedBytes: s.AppendedBytes}
}

func (c childStats) sys() sysStats {
	return sysStats{Flush: c.Flush, Rolls: c.Rolls, SyncCreates: c.SyncCreates, MaxLockHeld: c.MaxLockHeld,
		LockHeldNs: c.LockHeldNs, Appends: c.Appends, CacheHitRate: c.CacheHitRate, AppendedBytes: c.AppendedBytes}
}

// Child exit statuses.
const (
	childExitOK      = 0
	childExitFailed  = 1
	childExitBadSpec = 2
)

// ChildProfileEnv, when set to a directory in the harness's environment,
// makes every child server write a CPU profile of its whole life there as
// <kind>-<pid>.pprof (kind: broker or nats), read with
// go tool pprof <brokerlab binary> <file>: where a process cell's server
// CPU per message goes.
const ChildProfileEnv = "BROKERLAB_CHILD_CPUPROFILE"

// startChildProfile starts the child's CPU profile in dir; stop ends and
// closes it.
func startChildProfile(dir, kind string) (stop func(), err error) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", kind, os.Getpid())))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// RunChildIfAsked serves as a cell's server process when ChildEnv is set,
// and then exits; otherwise it returns at once. Call it first thing in
// TestMain of a test binary that runs transport-process cells (the
// brokerlab binary serves through its hidden ChildCommand instead).
func RunChildIfAsked() {
	if _, ok := os.LookupEnv(ChildEnv); ok {
		os.Exit(ServeChild())
	}
}

// ServeChild serves as a cell's server process, the spec read from
// ChildEnv, on the process's stdin, stdout and stderr until the parent
// closes stdin or SIGTERM arrives; it returns the exit status (2 without a
// valid spec).
func ServeChild() int {
	return runChild(os.Getenv(ChildEnv), os.Stdin, os.Stdout, os.Stderr)
}

// childServer is the server a child runs.
type childServer interface {
	Addr() string
	Stats() childStats
	Settle(timeout time.Duration) error
	Shutdown() error
}

// runChild runs the server of specJSON until in ends or SIGTERM arrives,
// answering requests from in on out; it returns the exit status.
func runChild(specJSON string, in io.Reader, out, errw io.Writer) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintf(errw, "brokerlab child: bad %s: %v\n", ChildEnv, err)
		return childExitBadSpec
	}
	signal.Ignore(os.Interrupt)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)

	if dir := os.Getenv(ChildProfileEnv); dir != "" {
		stop, err := startChildProfile(dir, spec.Kind)
		if err != nil {
			fmt.Fprintf(errw, "brokerlab child: %s: %v\n", ChildProfileEnv, err)
			return childExitFailed
		}
		defer stop()
	}
	srv, err := startChildServer(spec, errw)
	if err != nil {
		fmt.Fprintf(errw, "brokerlab child: %s server: %v\n", spec.Kind, err)
		return childExitFailed
	}
	w := bufio.NewWriter(out)
	ready := srv.Addr()
	if g, ok := srv.(interface{ GRPCAddr() string }); ok && g.GRPCAddr() != "" {
		ready += " " + g.GRPCAddr()
	}
	fmt.Fprintf(w, "READY %s\n", ready)
	if err := w.Flush(); err != nil {
		fmt.Fprintf(errw, "brokerlab child: write READY: %v\n", err)
		_ = srv.Shutdown()
		return childExitFailed
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
serve:
	for {
		select {
		case <-term:
			// Not asked by the parent: say so, so the cell fails.
			fmt.Fprintln(w, childStopping+" SIGTERM")
			_ = w.Flush()
			break serve
		case line, ok := <-lines:
			if !ok {
				break serve
			}
			fmt.Fprintln(w, answerChild(srv, line))
			if err := w.Flush(); err != nil {
				fmt.Fprintf(errw, "brokerlab child: write reply: %v\n", err)
				break serve
			}
		}
	}
	if err := srv.Shutdown(); err != nil {
		fmt.Fprintf(errw, "brokerlab child: %s shutdown: %v\n", spec.Kind, err)
		return childExitFailed
	}
	return childExitOK
}

// answerChild answers one request line.
func answerChild(srv childServer, line string) string {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch cmd {
	case "stats":
		b, err := json.Marshal(srv.Stats())
		if err != nil {
			return "err " + err.Error()
		}
		return string(b)
	case "allocs":
		// Heap objects allocated since the process started: the harness
		// reads it at the measured window's ends (server_allocs_per_msg).
		sample := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return "err allocs: /gc/heap/allocs:objects unsupported"
		}
		return strconv.FormatUint(sample[0].Value.Uint64(), 10)
	case "settle":
		ns, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || ns < 0 {
			return fmt.Sprintf("err settle %q: want a timeout in ns", arg)
		}
		if err := srv.Settle(time.Duration(ns)); err != nil {
			return "err " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		return "ok"
	}
	return fmt.Sprintf("err unknown request %q (have stats, allocs, settle <ns>)", cmd)
}

func startChildServer(spec childSpec, errw io.Writer) (childServer, error) {
	switch spec.Kind {
	case childBroker:
		return startChildBroker(spec, errw)
	case childNATS:
		cfg := natsdriver.DefaultConfig(spec.Dir)
		cfg.SyncAlways = durableFlush(spec.Engine.Flush)
		s, err := natsdriver.StartServer(cfg)
		if err != nil {
			return nil, err
		}
		return natsChild{s}, nil
	}
	return nil, fmt.Errorf("unknown kind %q (want %s or %s)", spec.Kind, childBroker, childNATS)
}

// brokerChild is the broker of a transport-process cell.
type brokerChild struct {
	b   *broker.Broker
	st  *store.Store
	cfg store.Config
	px  *proxy.Server // the gRPC front end (spec.GRPC), else nil
}

// childBrokerConfig is a loopback cell's broker and store configuration
// (openBrokerSystem's, without TLS, replication, the official client's
// name server or stages, which a process cell refuses): the engine
// section's commit log, the direct path's cache, a listener on 127.0.0.1
// and at least one send worker per producer: brokerConfigs, as a loopback
// cell's.
func childBrokerConfig(spec childSpec, log *slog.Logger) (broker.Config, store.Config, error) {
	bc, sc, _, err := brokerConfigs(spec.Engine, spec.Dir, spec.Producers, sysHooks{}, log)
	if spec.Namesrv != "" {
		bc.NamesrvAddrs = []string{spec.Namesrv}
		bc.MaxSuspend = rmqMaxHold
	}
	return bc, sc, err
}

func startChildBroker(spec childSpec, errw io.Writer) (*brokerChild, error) {
	// Only warnings and errors, as for a loopback cell's broker.
	quiet := slog.New(slog.NewTextHandler(errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bc, sc, err := childBrokerConfig(spec, quiet)
	if err != nil {
		return nil, err
	}
	b, err := broker.New(bc, broker.OpenStore(sc, bc.DelayLevels))
	if err != nil {
		closePool(sc)
		return nil, err
	}
	if err := b.Start(context.Background()); err != nil {
		return nil, err // the process exits: its files and sockets go with it
	}
	st := b.Store().(broker.EngineStore).EngineStore() // OpenStore's
	c := &brokerChild{b: b, st: st, cfg: sc}
	if spec.GRPC {
		if c.px, err = startGRPCFront(b, quiet); err != nil {
			return nil, err // the process exits
		}
	}
	return c, nil
}

func closePool(sc store.Config) {
	if p := sc.CommitLog.IO.Pool; p != nil {
		p.Close()
	}
}

func (c *brokerChild) Addr() string { return c.b.Addr() }

// GRPCAddr is the gRPC front end's address ("" without one).
func (c *brokerChild) GRPCAddr() string {
	if c.px == nil {
		return ""
	}
	return c.px.Addr()
}

func (c *brokerChild) Stats() childStats {
	if c.st == nil {
		return childStats{CacheHitRate: -1}
	}
	return toChildStats(storeStats(c.st))
}

func (c *brokerChild) Settle(timeout time.Duration) error {
	if c.st != nil && !c.st.WaitDispatched(timeout) {
		return fmt.Errorf("dispatch still %d bytes behind after %v", c.st.DispatchBehindBytes(), timeout)
	}
	return nil
}

func (c *brokerChild) Shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.px != nil {
		_ = c.px.Shutdown(ctx)
	}
	err := c.b.Shutdown(ctx)
	closePool(c.cfg)
	return err
}

// natsChild is the JetStream server of a NATS peer of a process cell.
type natsChild struct{ s *natsdriver.Server }

func (c natsChild) Addr() string                 { return c.s.ClientURL() }
func (c natsChild) Stats() childStats            { return childStats{CacheHitRate: -1} }
func (c natsChild) Settle(_ time.Duration) error { return nil }
func (c natsChild) Shutdown() error              { c.s.Shutdown(); return nil }

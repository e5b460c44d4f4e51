package experiments

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/natsdriver"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
	"github.com/brokerlab/brokerlab/workloads/rmq5driver"
	"github.com/brokerlab/brokerlab/workloads/rmqdriver"
)

// TransportProcess runs a cell's server in a child process (child.go),
// driven over 127.0.0.1 TCP as for transport loopback, so that the
// server's CPU time is measured apart from its clients'.
const TransportProcess = "process"

// ErrChild marks a cell's server process that failed: it did not start,
// did not report READY, answered badly, or exited before it was stopped.
var ErrChild = errors.New("experiments: server process")

// childStopping starts the line a child writes when it stops without being
// asked (SIGTERM).
const childStopping = "STOPPING"

// Bounds of the child's life cycle.
const (
	childReadyTimeout = 60 * time.Second // start to READY
	childStopTimeout  = 15 * time.Second // stdin closed to exit, then SIGKILL
	childReplyTimeout = 10 * time.Second // a request's reply, beyond its own timeout
	childStderrKeep   = 16 << 10         // bytes of the child's stderr kept for errors
)

// refuseProcess says why engine en cannot run as transport process ("" when
// it can): the child runs only the broker, for brokerlab's own client or the
// official one (client rocketmq, through a name server in this process).
func refuseProcess(en Engine) string {
	var no []string
	switch en.Client {
	case ClientBrokerlab, ClientRocketMQ, ClientRocketMQ5, "":
	default:
		no = append(no, "client "+en.Client+" (brokerlab's own client, rocketmq or rocketmq5)")
	}
	if en.TLS {
		no = append(no, "tls")
	}
	if en.Replication != "none" && en.Replication != "" {
		no = append(no, "replication "+en.Replication)
	}
	if en.Stages {
		no = append(no, "stages (the breakdown is recorded in the broker's process)")
	}
	if len(no) == 0 {
		return ""
	}
	return strings.Join(no, ", ")
}

// processEngineError is validateEngine's error for an engine that cannot
// run as transport process (nil when it can).
func processEngineError(en Engine) error {
	if en.Transport != TransportProcess {
		return nil
	}
	if what := refuseProcess(en); what != "" {
		return fmt.Errorf("%w: engine.transport = process is not supported with %s: the server child runs the broker (or NATS) for brokerlab's own client over plain TCP", ErrConfig, what)
	}
	return nil
}

// processStallError refuses an injected stall in an experiment with a
// transport-process cell: the faults are injected in the broker's process.
func (e *Experiment) processStallError() error {
	if e.Stall == nil {
		return nil
	}
	cells, err := e.Cells()
	if err != nil {
		return err
	}
	for _, c := range cells {
		if c.Exp.Engine.Transport == TransportProcess {
			return fmt.Errorf("%w: stall: cell %s has engine.transport = process, which is not supported with stall (fault injection needs the broker in this process)", ErrConfig, c.Name)
		}
	}
	return nil
}

// childProc is a running server process and the parent's ends of its
// pipes. Requests are serialised; stop is called once.
type childProc struct {
	kind string
	cmd  *exec.Cmd
	addr string // from READY
	grpc string // from READY: the gRPC front end's address (spec.GRPC)

	in  *os.File // the child's stdin (write end)
	out *os.File // the child's stdout (read end)
	rd  *bufio.Reader

	stderr *tailBuffer
	exited chan struct{} // closed once Wait returned
	// waitErr is Wait's result, read after exited is closed.
	waitErr  error
	stopping atomic.Bool

	mu sync.Mutex // one request at a time
	// said is the child's STOPPING line when a request read it.
	said string
}

// startChild starts a server process for spec and waits for its READY.
func startChild(spec childSpec) (_ *childProc, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: own executable: %w", ErrChild, err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: spec: %w", ErrChild, err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrChild, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%w: %w", ErrChild, err)
	}
	// brokerlab serves through its hidden ChildCommand; -test.run=^$ only
	// matters to a test binary without the RunChildIfAsked hook: it then
	// runs no tests and exits, so the error below comes at once instead of
	// after the READY timeout.
	cmd := exec.Command(exe, "-test.run=^$", ChildCommand)
	cmd.Env = append(os.Environ(), ChildEnv+"="+string(js))
	cmd.Stdin, cmd.Stdout = inR, outW
	p := &childProc{kind: spec.Kind, cmd: cmd, in: inW, out: outR, rd: bufio.NewReader(outR),
		stderr: &tailBuffer{max: childStderrKeep}, exited: make(chan struct{})}
	// The child's warnings reach the terminal as an in-process broker's do.
	cmd.Stderr = io.MultiWriter(os.Stderr, p.stderr)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%w: start %s: %w", ErrChild, exe, err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	defer func() {
		if err != nil {
			p.kill()
		}
	}()
	// The pipe honours read deadlines (request relies on them too).
	_ = p.out.SetReadDeadline(time.Now().Add(childReadyTimeout))
	s, err := p.rd.ReadString('\n')
	_ = p.out.SetReadDeadline(time.Time{})
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, p.failure(fmt.Sprintf("did not report READY within %v", childReadyTimeout))
	case err != nil:
		p.awaitExit(childStopTimeout)
		return nil, p.failure("exited before READY")
	}
	addrs, ok := strings.CutPrefix(strings.TrimSpace(s), "READY ")
	addr, grpcAddr, _ := strings.Cut(addrs, " ")
	if !ok || addr == "" || spec.GRPC && grpcAddr == "" {
		return nil, p.failure(fmt.Sprintf("said %q instead of READY <addr>[ <grpc addr>]", strings.TrimSpace(s)))
	}
	p.addr, p.grpc = addr, grpcAddr
	return p, nil
}

// ServerPID is the child's process id (serverProcess).
func (p *childProc) ServerPID() int { return p.cmd.Process.Pid }

// closeAfter closes the child's client c, then stops the child; the child's
// failure wins over the client's.
func (p *childProc) closeAfter(c io.Closer) error {
	cerr := c.Close()
	if err := p.stop(); err != nil {
		return err
	}
	return cerr
}

// failure is an ErrChild error for what the child did, with its exit
// status when it has exited and the tail of its stderr.
func (p *childProc) failure(what string) error {
	status := "still running"
	select {
	case <-p.exited:
		status = "exit: ok"
		if p.waitErr != nil {
			status = "exit: " + p.waitErr.Error()
		}
	default:
	}
	return fmt.Errorf("%w: %s server (pid %d) %s (%s); stderr: %s", ErrChild, p.kind, p.ServerPID(), what, status, p.stderr.text())
}

// awaitExit waits up to d for the child to exit.
func (p *childProc) awaitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// kill ends the child (SIGKILL by its PID) and reaps it.
func (p *childProc) kill() {
	p.stopping.Store(true)
	p.in.Close()
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.out.Close()
}

// request sends one request line and reads its reply line, waiting at most
// childReplyTimeout beyond wait.
func (p *childProc) request(req string, wait time.Duration) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping.Load() {
		return "", fmt.Errorf("%w: %s server stopped", ErrChild, p.kind)
	}
	if _, err := io.WriteString(p.in, req+"\n"); err != nil {
		return "", p.failure(fmt.Sprintf("took no request %q: %v", req, err))
	}
	_ = p.out.SetReadDeadline(time.Now().Add(wait + childReplyTimeout))
	s, err := p.rd.ReadString('\n')
	_ = p.out.SetReadDeadline(time.Time{})
	if err != nil {
		return "", p.failure(fmt.Sprintf("gave no reply to %q: %v", req, err))
	}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, childStopping) {
		p.said = s
		return "", p.failure(fmt.Sprintf("stopped on its own (%s)", s))
	}
	return s, nil
}

// stop closes the child's stdin (its signal to shut down), waits up to
// childStopTimeout for it to exit, then kills it by PID and reaps it. It
// fails when the child had exited or begun to stop (STOPPING) before it was
// asked to, exited with an error, or had to be killed.
func (p *childProc) stop() error {
	early := false
	select {
	case <-p.exited:
		early = true
	default:
	}
	p.mu.Lock() // no request in flight
	p.stopping.Store(true)
	p.mu.Unlock()
	p.in.Close()
	defer p.out.Close()
	switch {
	case early:
		return p.failure("exited during the cell")
	case !p.awaitExit(childStopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return p.failure(fmt.Sprintf("did not exit within %v of its stdin closing: killed", childStopTimeout))
	}
	p.mu.Lock()
	said := strings.TrimSpace(p.said + " " + p.unsolicited())
	p.mu.Unlock()
	if said != "" {
		return p.failure(fmt.Sprintf("stopped on its own during the cell (%s)", said))
	}
	if p.waitErr != nil {
		return p.failure("failed to shut down cleanly")
	}
	return nil
}

// unsolicited is what the child wrote to stdout after the last reply (such
// as "STOPPING SIGTERM" when it stopped on its own), read once it exited.
func (p *childProc) unsolicited() string {
	_ = p.out.SetReadDeadline(time.Now().Add(time.Second))
	b, _ := io.ReadAll(p.rd)
	return strings.Join(strings.Fields(string(b)), " ")
}

// stats asks the child for its store counters (zeros with CacheHitRate -1
// when it cannot answer).
func (p *childProc) stats() sysStats {
	s, err := p.request("stats", 0)
	var cs childStats
	if err != nil || json.Unmarshal([]byte(s), &cs) != nil {
		return sysStats{CacheHitRate: -1}
	}
	return cs.sys()
}

// ServerAllocs asks the child for the heap objects it has allocated so far
// (serverAllocator).
func (p *childProc) ServerAllocs() (uint64, error) {
	s, err := p.request("allocs", 0)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s server answered %q to allocs", ErrChild, p.kind, s)
	}
	return n, nil
}

// settle asks the child to wait until its dispatch caught up.
func (p *childProc) settle(timeout time.Duration) error {
	s, err := p.request(fmt.Sprintf("settle %d", timeout.Nanoseconds()), timeout)
	if err != nil {
		return err
	}
	if msg, bad := strings.CutPrefix(s, "err "); bad {
		return fmt.Errorf("experiments: %s server: %s", p.kind, msg)
	}
	if s != "ok" {
		return fmt.Errorf("%w: %s server answered settle with %q", ErrChild, p.kind, s)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
		t.cut = true
	}
	return len(b), nil
}

// text is the kept stderr on one line ("(empty)" when there is none).
func (t *tailBuffer) text() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return "(empty)"
	}
	if t.cut {
		s = "…" + s
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " | ")), " ")
}

// procBrokerSystem is a cell's broker in a child process, driven over
// 127.0.0.1 TCP by brokerlab's remoting client (workloads/netdriver) in
// this process, exactly as a loopback cell's — or, with client rocketmq, by
// the official RocketMQ Go client (workloads/rmqdriver) through a name
// server in this process that the child's broker registers with, so the
// child's CPU is the broker's alone. Stats and Settle are asked of the
// child; Stall is refused by validation; the flush and roll hooks (the
// "flush" latency metric and roll markers) are not available.
type procBrokerSystem struct {
	*childProc
	d   *netdriver.Driver
	rd  *rmqdriver.Driver  // client rocketmq: the cell's producers and consumers
	ns  *namesrv.Server    // client rocketmq: the name server rd finds the child through
	r5  *rmq5driver.Driver // client rocketmq5: over the child's gRPC front end
	dir string
}

func openProcBrokerSystem(exp Experiment, dir string) (_ *procBrokerSystem, err error) {
	spec := childSpec{Kind: childBroker, Engine: exp.Engine, Dir: dir, Producers: exp.Workload.Producers}
	var ns *namesrv.Server
	if exp.Engine.Client == ClientRocketMQ {
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if ns, err = startLoopbackNamesrv(quiet); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = ns.Shutdown(context.Background())
			}
		}()
		spec.Namesrv = ns.Addr()
	}
	spec.GRPC = exp.Engine.Client == ClientRocketMQ5
	child, err := startChild(spec)
	if err != nil {
		return nil, err
	}
	d, err := dialBroker(exp, child.addr)
	if err != nil {
		return nil, errors.Join(err, child.stop())
	}
	s := &procBrokerSystem{childProc: child, d: d, ns: ns, dir: dir}
	if ns != nil {
		if s.rd, err = openOfficialClient(ns.Addr()); err != nil {
			return nil, errors.Join(err, child.closeAfter(d))
		}
	}
	if spec.GRPC {
		if s.r5, err = openV5Client(exp, child.grpc); err != nil {
			return nil, errors.Join(err, child.closeAfter(d))
		}
	}
	return s, nil
}

func (s *procBrokerSystem) Driver() workloads.Driver {
	if s.r5 != nil {
		return s.r5
	}
	if s.rd != nil {
		return s.rd
	}
	return s.d
}

func (s *procBrokerSystem) Source() workloads.Source {
	if s.r5 != nil {
		return s.r5
	}
	if s.rd != nil {
		return s.rd
	}
	return s.d
}

func (s *procBrokerSystem) SegmentDir() string                 { return commitlog.SegmentDir(s.dir) }
func (s *procBrokerSystem) Stats() sysStats                    { return s.stats() }
func (s *procBrokerSystem) Settle(timeout time.Duration) error { return s.settle(timeout) }
func (s *procBrokerSystem) Stall(time.Duration)                {}

// Close closes the clients (the official one first: its consumers persist
// offsets to the broker), then stops the child (its store is flushed and
// closed by broker.Shutdown there), then the name server.
func (s *procBrokerSystem) Close() error {
	var rderr error
	if s.rd != nil {
		rderr = s.rd.Close()
	}
	if s.r5 != nil {
		rderr = s.r5.Close()
	}
	err := s.closeAfter(s.d)
	if s.ns != nil {
		_ = s.ns.Shutdown(context.Background())
	}
	if err == nil {
		err = rderr
	}
	return err
}

// procNATSSystem is NATS JetStream in a child process (the peer of a
// process cell), driven by nats.go over 127.0.0.1 TCP from this process.
type procNATSSystem struct {
	*childProc
	natsSystem // the client's side, as for an in-process NATS cell
}

func openProcNATSSystem(exp Experiment, dir string) (*procNATSSystem, error) {
	child, err := startChild(childSpec{Kind: childNATS, Engine: exp.Engine, Dir: dir, Producers: exp.Workload.Producers})
	if err != nil {
		return nil, err
	}
	cfg := natsdriver.DefaultConfig("")
	cfg.Topics = topicNames(exp)
	cfg.Queues = exp.Workload.Queues
	d, err := natsdriver.Dial(child.addr, cfg)
	if err != nil {
		return nil, errors.Join(err, child.stop())
	}
	return &procNATSSystem{childProc: child, natsSystem: natsSystem{d: d, dir: natsdriver.StoreDirOf(dir)}}, nil
}

// Close closes the client, then stops the child.
func (s *procNATSSystem) Close() error { return s.closeAfter(s.d) }

package ha

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/store"
)

// Frame and report sizes (DefaultHAConnection.TRANSFER_HEADER_SIZE,
// DefaultHAClient.REPORT_HEADER_SIZE).
const (
	FrameHeaderSize = 12
	ReportSize      = 8
)

// Sentinel errors.
var (
	ErrClosed = errors.New("ha: closed")
	// ErrSlaveTimeout: no slave acknowledged the put within the timeout
	// (FLUSH_SLAVE_TIMEOUT; the message is stored on the master).
	ErrSlaveTimeout = errors.New("ha: slave did not acknowledge in time")
	// ErrSlaveNotAvailable: no slave is streaming, or the best one is too
	// far behind (SLAVE_NOT_AVAILABLE; stored on the master).
	ErrSlaveNotAvailable = errors.New("ha: no slave available")
	// ErrMasterBehind: the master's log ends before the slave's.
	ErrMasterBehind = errors.New("ha: the master's log is shorter than this slave's")
	// ErrDiverged: the master streams from an offset that is not this
	// slave's end, or refused the slave's offset.
	ErrDiverged = errors.New("ha: master and slave logs diverged")
	// ErrProtocol: a malformed frame.
	ErrProtocol = errors.New("ha: protocol error")
)

// Config configures a master's Service. Zero fields take RocketMQ's
// defaults.
type Config struct {
	// ListenAddr is the HA listen address (the broker's port + 1).
	ListenAddr string
	// HeartbeatInterval (haSendHeartbeatInterval, 5 s): a heartbeat frame
	// after this long without data.
	HeartbeatInterval time.Duration
	// HousekeepingInterval (haHousekeepingInterval, 20 s): a link with
	// nothing read for this long is closed.
	HousekeepingInterval time.Duration
	// TransferBatchSize (haTransferBatchSize, 32 KiB): bytes per frame.
	TransferBatchSize int
	// MaxGapNotInSync (haMaxGapNotInSync, 256 MiB).
	MaxGapNotInSync int64
	// IdleWait is how long a writer with nothing to send sleeps unless a
	// put wakes it (100 ms).
	IdleWait time.Duration
	// FullCopy streams an empty slave the master's whole log instead of
	// its last segment.
	FullCopy bool
	Logger   *slog.Logger
}

func (c *Config) fill() {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.TransferBatchSize <= 0 {
		c.TransferBatchSize = 32 << 10
	}
	if c.MaxGapNotInSync <= 0 {
		c.MaxGapNotInSync = 256 << 20
	}
	if c.IdleWait <= 0 {
		c.IdleWait = 100 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Service is the master side: it accepts slaves on the HA port and streams
// each its commit log.
type Service struct {
	cfg Config
	st  *store.Store
	ln  net.Listener
	log *slog.Logger

	mu     sync.Mutex
	conns  map[*conn]struct{} // guarded by mu
	nconns atomic.Int32       // len(conns): Notify without slaves takes no lock

	// ackMax is push2SlaveMaxOffset: the highest offset any streaming slave
	// reported.
	ackMax  atomic.Int64
	waitMu  sync.Mutex
	waiters []waiter // guarded by waitMu

	closed atomic.Bool
	done   chan struct{}
	wg     sync.WaitGroup

	refused atomic.Uint64
}

type waiter struct {
	end int64
	ch  chan struct{}
}

// ConnState is a slave connection's state.
type ConnState int32

// Connection states.
const (
	// StateWaiting: connected, the slave has not reported yet.
	StateWaiting ConnState = iota
	// StateTransfer: streaming.
	StateTransfer
	// StateRefused: the slave's offset is not a place in this log.
	StateRefused
)

func (s ConnState) String() string {
	switch s {
	case StateWaiting:
		return "WAITING"
	case StateTransfer:
		return "TRANSFER"
	case StateRefused:
		return "REFUSED"
	}
	return fmt.Sprintf("ConnState(%d)", int32(s))
}

// SlaveInfo describes one slave connection.
type SlaveInfo struct {
	Addr  string
	State ConnState
	// RequestOffset is the slave's first report; AckOffset its latest;
	// SentOffset where the stream is.
	RequestOffset, AckOffset, SentOffset int64
	// Err says why the slave was refused.
	Err error
}

// NewService listens on cfg.ListenAddr and serves slaves of st (which must
// not be a slave itself) until Close.
func NewService(st *store.Store, cfg Config) (*Service, error) {
	cfg.fill()
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("ha: listen %s: %w", cfg.ListenAddr, err)
	}
	s := &Service{cfg: cfg, st: st, ln: ln, log: cfg.Logger, conns: map[*conn]struct{}{}, done: make(chan struct{})}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr is the address the service listens on.
func (s *Service) Addr() string { return s.ln.Addr().String() }

func (s *Service) acceptLoop() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.closed.Load() {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.log.Error("ha: accept", "err", err)
			select {
			case <-s.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c := &conn{s: s, nc: nc, wake: make(chan struct{}, 1), reported: make(chan struct{}), done: make(chan struct{})}
		c.reqOff.Store(-1)
		s.mu.Lock()
		if s.closed.Load() {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.nconns.Store(int32(len(s.conns)))
		s.mu.Unlock()
		s.log.Info("ha: slave connected", "remote", nc.RemoteAddr().String())
		s.wg.Add(2)
		go c.readLoop()
		go c.writeLoop()
	}
}

// Notify tells the writers that the log grew (call after every put).
func (s *Service) Notify() {
	if s.nconns.Load() == 0 {
		return
	}
	s.mu.Lock()
	for c := range s.conns {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
}

// AckOffset is the highest offset a streaming slave has reported
// (push2SlaveMaxOffset).
func (s *Service) AckOffset() int64 { return s.ackMax.Load() }

// Refused counts slave connections refused for a divergent offset.
func (s *Service) Refused() uint64 { return s.refused.Load() }

// Slaves describes the current slave connections.
func (s *Service) Slaves() []SlaveInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SlaveInfo, 0, len(s.conns))
	for c := range s.conns {
		si := SlaveInfo{Addr: c.nc.RemoteAddr().String(), State: ConnState(c.state.Load()),
			RequestOffset: c.reqOff.Load(), AckOffset: c.ack.Load(), SentOffset: c.sent.Load()}
		if p := c.err.Load(); p != nil {
			si.Err = *p
		}
		out = append(out, si)
	}
	return out
}

// streaming counts connections in TRANSFER.
func (s *Service) streaming() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if ConnState(c.state.Load()) == StateTransfer {
			n++
		}
	}
	return n
}

// IsSlaveOK reports whether a put ending at end may wait for a slave
// (isSlaveOK): a slave is streaming and the best acknowledged offset is
// less than MaxGapNotInSync behind end.
func (s *Service) IsSlaveOK(end int64) bool {
	return s.streaming() > 0 && end-s.ackMax.Load() < s.cfg.MaxGapNotInSync
}

// WaitForSlave waits until some slave acknowledged end (a put's
// wroteOffset + wroteBytes). It returns nil, ErrSlaveNotAvailable (checked
// before waiting), ErrSlaveTimeout after timeout, ErrClosed, or ctx's error.
func (s *Service) WaitForSlave(ctx context.Context, end int64, timeout time.Duration) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.IsSlaveOK(end) {
		return fmt.Errorf("%w: %d streaming, best acknowledged offset %d, put ends at %d",
			ErrSlaveNotAvailable, s.streaming(), s.ackMax.Load(), end)
	}
	if s.ackMax.Load() >= end {
		return nil
	}
	w := waiter{end: end, ch: make(chan struct{})}
	s.waitMu.Lock()
	if s.ackMax.Load() >= end {
		s.waitMu.Unlock()
		return nil
	}
	s.waiters = append(s.waiters, w)
	s.waitMu.Unlock()
	s.Notify()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case <-w.ch:
		return nil
	case <-t.C:
		err = fmt.Errorf("%w: %v waiting for offset %d, best acknowledged %d", ErrSlaveTimeout, timeout, end, s.ackMax.Load())
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.done:
		err = ErrClosed
	}
	s.waitMu.Lock()
	for i := range s.waiters {
		if s.waiters[i].ch == w.ch {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			break
		}
	}
	s.waitMu.Unlock()
	select {
	case <-w.ch: // acknowledged while giving up
		return nil
	default:
	}
	return err
}

// acked raises push2SlaveMaxOffset and releases the waiters it covers.
func (s *Service) acked(off int64) {
	for {
		cur := s.ackMax.Load()
		if off <= cur {
			return
		}
		if s.ackMax.CompareAndSwap(cur, off) {
			break
		}
	}
	s.waitMu.Lock()
	kept := s.waiters[:0]
	for _, w := range s.waiters {
		if w.end <= off {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	clear(s.waiters[len(kept):])
	s.waiters = kept
	s.waitMu.Unlock()
}

// Close stops accepting, closes every slave connection and waits for their
// goroutines. Waiting puts get ErrClosed.
func (s *Service) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.done)
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// conn is one slave connection (HAConnection).
type conn struct {
	s        *Service
	nc       net.Conn
	wake     chan struct{}
	reported chan struct{} // closed at the first report
	done     chan struct{}
	once     sync.Once

	state  atomic.Int32
	reqOff atomic.Int64 // first report, -1 before
	ack    atomic.Int64
	sent   atomic.Int64
	err    atomic.Pointer[error]
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.nc.Close()
	})
}

func (c *conn) remove() {
	c.close()
	c.s.mu.Lock()
	delete(c.s.conns, c)
	c.s.nconns.Store(int32(len(c.s.conns)))
	c.s.mu.Unlock()
}

// readLoop reads the slave's reports (ReadSocketService).
func (c *conn) readLoop() {
	defer c.s.wg.Done()
	defer c.remove()
	var b [ReportSize]byte
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HousekeepingInterval))
		if _, err := io.ReadFull(c.nc, b[:]); err != nil {
			select {
			case <-c.done:
			default:
				c.s.log.Info("ha: slave connection closed", "remote", c.nc.RemoteAddr().String(), "err", err)
			}
			return
		}
		off := int64(binary.BigEndian.Uint64(b[:]))
		if off < 0 {
			c.s.log.Error("ha: negative slave offset", "remote", c.nc.RemoteAddr().String(), "offset", off)
			return
		}
		c.ack.Store(off)
		if c.reqOff.Load() < 0 {
			c.reqOff.Store(off)
			close(c.reported)
			continue
		}
		if ConnState(c.state.Load()) == StateTransfer {
			c.s.acked(off)
		}
	}
}

// writeLoop streams the log (WriteSocketService).
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	defer c.remove()
	select {
	case <-c.reported:
	case <-c.done:
		return
	}
	cfg := c.s.cfg
	req := c.reqOff.Load()
	next, err := c.s.st.ReplicaStart(req, cfg.FullCopy)
	if err != nil {
		c.refuse(req, err)
		return
	}
	c.state.Store(int32(StateTransfer))
	if req > 0 {
		c.s.acked(max(req, c.ack.Load()))
	}
	c.s.log.Info("ha: streaming to slave", "remote", c.nc.RemoteAddr().String(), "reported", req, "from", next)
	buf := make([]byte, FrameHeaderSize+cfg.TransferBatchSize)
	lastWrite := time.Now()
	idle := time.NewTimer(cfg.IdleWait)
	defer idle.Stop()
	for {
		c.sent.Store(next)
		n, err := c.s.st.ReplicaRead(buf[FrameHeaderSize:], next)
		if err != nil {
			if !errors.Is(err, store.ErrClosed) {
				c.s.log.Error("ha: read the log for a slave", "remote", c.nc.RemoteAddr().String(), "offset", next, "err", err)
			}
			return
		}
		if n > 0 || time.Since(lastWrite) >= cfg.HeartbeatInterval {
			if err := c.writeFrame(buf[:FrameHeaderSize+n], next); err != nil {
				return
			}
			next += int64(n)
			lastWrite = time.Now()
			if n > 0 {
				continue
			}
		}
		idle.Reset(min(cfg.IdleWait, cfg.HeartbeatInterval))
		select {
		case <-c.wake:
		case <-idle.C:
		case <-c.done:
			return
		}
	}
}

func (c *conn) writeFrame(frame []byte, off int64) error {
	binary.BigEndian.PutUint64(frame[0:8], uint64(off))
	binary.BigEndian.PutUint32(frame[8:12], uint32(len(frame)-FrameHeaderSize))
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.HousekeepingInterval))
	if _, err := c.nc.Write(frame); err != nil {
		select {
		case <-c.done:
		default:
			c.s.log.Info("ha: write to slave failed", "remote", c.nc.RemoteAddr().String(), "err", err)
		}
		return err
	}
	return nil
}

// refuse keeps a slave whose offset is not a place in this log from
// streaming: the error is logged and kept, and heartbeats carrying this
// log's end tell the slave (which drops the link) until it goes.
func (c *conn) refuse(req int64, err error) {
	c.err.Store(&err)
	c.state.Store(int32(StateRefused))
	c.s.refused.Add(1)
	c.s.log.Error("ha: refusing to stream to a slave: classic HA truncates nothing; rebuild the slave from an empty store",
		"remote", c.nc.RemoteAddr().String(), "slaveOffset", req, "masterMaxOffset", c.s.st.MaxPhyOffset(), "err", err)
	var hb [FrameHeaderSize]byte
	for {
		if c.writeFrame(hb[:], c.s.st.MaxPhyOffset()) != nil {
			return
		}
		select {
		case <-c.done:
			return
		case <-time.After(c.s.cfg.HeartbeatInterval):
		}
	}
}

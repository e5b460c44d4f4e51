package ha

import (
	"bufio"
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

// maxFrameBody bounds a frame body the slave accepts (RocketMQ's slave
// read buffer is 4 MiB).
const maxFrameBody = 4 << 20

// ClientConfig configures a slave's Client. Zero fields take RocketMQ's
// defaults.
type ClientConfig struct {
	// MasterAddr is the master's HA address; "" waits for SetMasterAddr
	// (the name server's haServerAddr).
	MasterAddr string
	// HeartbeatInterval (haSendHeartbeatInterval, 5 s): a report at least
	// this often.
	HeartbeatInterval time.Duration
	// HousekeepingInterval (20 s): the link is dropped after this long
	// without a frame.
	HousekeepingInterval time.Duration
	// ReconnectInterval (5 s): the wait after a failed or dropped link.
	ReconnectInterval time.Duration
	// DialTimeout bounds a connect (3 s).
	DialTimeout time.Duration
	Logger      *slog.Logger
}

func (c *ClientConfig) fill() {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.ReconnectInterval <= 0 {
		c.ReconnectInterval = 5 * time.Second
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 3 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Client is the slave side (HAClient): it connects to the master, reports
// its store's replica offset and appends the master's frames to the store.
type Client struct {
	cfg ClientConfig
	st  *store.Store
	log *slog.Logger

	master atomic.Pointer[string]
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once

	connMu sync.Mutex
	nc     net.Conn // guarded by connMu

	connected          atomic.Bool
	frames, bytes      atomic.Uint64
	sessions, reported atomic.Uint64
	lastErr            atomic.Pointer[error]
}

// ClientStatus is a snapshot of a Client.
type ClientStatus struct {
	Master    string
	Connected bool
	// Offset is the store's replica offset (what the slave reports).
	Offset int64
	// Frames and Bytes count data frames and bytes stored; Sessions the
	// links made; Reports the reports sent.
	Frames, Bytes, Sessions, Reports uint64
	// Err is why the last link ended (nil while none has).
	Err error
}

// NewClient makes st a slave and starts replicating from cfg.MasterAddr
// (or the address SetMasterAddr gives later) until Close.
func NewClient(st *store.Store, cfg ClientConfig) *Client {
	cfg.fill()
	st.SetSlave(true)
	c := &Client{cfg: cfg, st: st, log: cfg.Logger, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	addr := cfg.MasterAddr
	c.master.Store(&addr)
	go c.loop()
	return c
}

// SetMasterAddr changes the master's HA address; a different address drops
// the current link and connects to the new one.
func (c *Client) SetMasterAddr(addr string) {
	old := c.master.Swap(&addr)
	if *old == addr {
		return
	}
	c.log.Info("ha: master address", "old", *old, "new", addr)
	c.connMu.Lock()
	if c.nc != nil {
		_ = c.nc.Close()
	}
	c.connMu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// MasterAddr is the master's HA address in use.
func (c *Client) MasterAddr() string { return *c.master.Load() }

// Status returns a snapshot.
func (c *Client) Status() ClientStatus {
	st := ClientStatus{
		Master: c.MasterAddr(), Connected: c.connected.Load(), Offset: c.st.ReplicaOffset(),
		Frames: c.frames.Load(), Bytes: c.bytes.Load(), Sessions: c.sessions.Load(), Reports: c.reported.Load(),
	}
	if p := c.lastErr.Load(); p != nil {
		st.Err = *p
	}
	return st
}

// Close drops the link and stops the client. The store stays a slave.
func (c *Client) Close() error {
	c.once.Do(func() {
		close(c.stop)
		c.connMu.Lock()
		if c.nc != nil {
			_ = c.nc.Close()
		}
		c.connMu.Unlock()
	})
	<-c.done
	return nil
}

func (c *Client) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// pause waits d, or until Close or a new master address.
func (c *Client) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.stop:
	case <-c.kick:
	case <-t.C:
	}
}

func (c *Client) loop() {
	defer close(c.done)
	for !c.stopped() {
		addr := c.MasterAddr()
		if addr == "" {
			c.pause(c.cfg.ReconnectInterval)
			continue
		}
		nc, err := net.DialTimeout("tcp", addr, c.cfg.DialTimeout)
		if err != nil {
			c.setErr(fmt.Errorf("ha: connect to master %s: %w", addr, err))
			c.pause(c.cfg.ReconnectInterval)
			continue
		}
		c.connMu.Lock()
		if c.stopped() || c.MasterAddr() != addr {
			c.connMu.Unlock()
			_ = nc.Close()
			continue
		}
		c.nc = nc
		c.connMu.Unlock()
		c.sessions.Add(1)
		c.connected.Store(true)
		c.log.Info("ha: connected to master", "master", addr, "offset", c.st.ReplicaOffset())
		err = c.session(nc)
		c.connected.Store(false)
		c.connMu.Lock()
		c.nc = nil
		c.connMu.Unlock()
		_ = nc.Close()
		if c.stopped() {
			return
		}
		c.setErr(err)
		c.log.Warn("ha: link to master ended", "master", addr, "err", err)
		c.pause(c.cfg.ReconnectInterval)
	}
}

func (c *Client) setErr(err error) { c.lastErr.Store(&err) }

// session runs one link: reports, then frames until an error.
func (c *Client) session(nc net.Conn) error {
	var wmu sync.Mutex
	report := func() error {
		var b [ReportSize]byte
		binary.BigEndian.PutUint64(b[:], uint64(c.st.ReplicaOffset()))
		wmu.Lock()
		defer wmu.Unlock()
		_ = nc.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		if _, err := nc.Write(b[:]); err != nil {
			return fmt.Errorf("ha: report to master: %w", err)
		}
		c.reported.Add(1)
		return nil
	}
	if err := report(); err != nil {
		return err
	}
	hbDone := make(chan struct{})
	var hbWG sync.WaitGroup
	hbWG.Add(1)
	go func() {
		defer hbWG.Done()
		t := time.NewTicker(c.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-hbDone:
				return
			case <-t.C:
				if report() != nil {
					_ = nc.Close()
					return
				}
			}
		}
	}()
	defer func() {
		close(hbDone)
		hbWG.Wait()
	}()

	br := bufio.NewReaderSize(nc, 1<<20)
	var hdr [FrameHeaderSize]byte
	var body []byte
	for {
		_ = nc.SetReadDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return fmt.Errorf("ha: read from master: %w", err)
		}
		off := int64(binary.BigEndian.Uint64(hdr[0:8]))
		size := int32(binary.BigEndian.Uint32(hdr[8:12]))
		if off < 0 || size < 0 || size > maxFrameBody {
			return fmt.Errorf("%w: frame at %d of %d bytes", ErrProtocol, off, size)
		}
		if cap(body) < int(size) {
			body = make([]byte, size)
		}
		body = body[:size]
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("ha: read from master: %w", err)
		}
		mine := c.st.ReplicaOffset()
		if off != mine && mine != 0 {
			if off < mine {
				return fmt.Errorf("%w: the master streams from %d, this slave's log ends at %d (classic HA truncates nothing)", ErrMasterBehind, off, mine)
			}
			return fmt.Errorf("%w: the master streams from %d, this slave's log ends at %d", ErrDiverged, off, mine)
		}
		if size == 0 {
			continue // heartbeat
		}
		if err := c.st.ReplicaAppend(off, body); err != nil {
			if errors.Is(err, store.ErrReplicaDiverged) {
				return fmt.Errorf("%w: %w", ErrDiverged, err)
			}
			return err
		}
		c.frames.Add(1)
		c.bytes.Add(uint64(size))
		if br.Buffered() == 0 {
			if err := report(); err != nil {
				return err
			}
		}
	}
}

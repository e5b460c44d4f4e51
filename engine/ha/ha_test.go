package ha

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
	"github.com/brokerlab/brokerlab/engine/store"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const segSize = 64 << 10

var bornHost = netip.MustParseAddrPort("10.0.0.1:5000")

func storeConfig(t *testing.T) store.Config {
	cfg := store.DefaultConfig(t.TempDir())
	cfg.CommitLog.SegmentSize = segSize
	cfg.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	cfg.Logger = quiet
	cfg.CleanInterval = 0
	cfg.DeleteFileInterval = 0
	cfg.DiskUsage = func(string) (float64, error) { return 0.1, nil }
	return cfg
}

func openStore(t *testing.T, cfg store.Config) *store.Store {
	t.Helper()
	s, err := store.Open(cfg)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

func fastConfig() Config {
	return Config{ListenAddr: "127.0.0.1:0", HeartbeatInterval: 200 * time.Millisecond, Logger: quiet}
}

func fastClient(addr string) ClientConfig {
	return ClientConfig{MasterAddr: addr, HeartbeatInterval: 200 * time.Millisecond, ReconnectInterval: 50 * time.Millisecond, Logger: quiet}
}

type sent struct {
	queueID int32
	offset  int64
	phys    int64
	end     int64
	body    []byte
}

func put(t *testing.T, rng *rand.Rand, s *store.Store, i int) sent {
	t.Helper()
	body := make([]byte, 1+rng.IntN(3000))
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	m := &record.Message{Topic: "T", QueueID: int32(i % 4), Body: body, BornTimestamp: time.Now().UnixMilli(), BornHost: bornHost,
		Properties: record.EncodeProperties(map[string]string{record.PropertyKeys: fmt.Sprintf("k%d", i)})}
	r, err := s.Put(context.Background(), m)
	if err != nil {
		t.Errorf("put %d: %v", i, err)
		return sent{}
	}
	return sent{queueID: m.QueueID, offset: r.QueueOffset, phys: r.WroteOffset, end: r.WroteOffset + r.WroteBytes, body: body}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// caughtUp waits until the slave stored and dispatched everything the
// master has.
func caughtUp(t *testing.T, master, slave *store.Store) {
	t.Helper()
	waitFor(t, "the slave to catch up", func() bool {
		return slave.ReplicaOffset() == master.MaxPhyOffset() && slave.MaxPhyOffset() == master.MaxPhyOffset()
	})
	if !slave.WaitDispatched(10 * time.Second) {
		t.Fatal("slave dispatch stuck")
	}
}

// sameLog asserts byte-identical commit logs over the slave's segments.
func sameLog(t *testing.T, master, slave *store.Store) {
	t.Helper()
	ms := map[int64]*segment.Segment{}
	for _, s := range master.CommitLog().Segments() {
		ms[s.Start()] = s
	}
	end := slave.MaxPhyOffset()
	if len(slave.CommitLog().Segments()) == 0 {
		t.Fatal("slave has no segments")
	}
	for _, s := range slave.CommitLog().Segments() {
		n := min(s.Size(), end-s.Start())
		if n <= 0 {
			continue
		}
		m, ok := ms[s.Start()]
		if !ok {
			t.Fatalf("slave segment %d is not on the master", s.Start())
		}
		a, b := make([]byte, n), make([]byte, n)
		if _, err := m.Appender().ReadAt(a, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Appender().ReadAt(b, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("slave segment %d differs from the master's", s.Start())
		}
	}
}

// serves asserts the slave's consume queues serve every message.
func serves(t *testing.T, slave *store.Store, want []sent) {
	t.Helper()
	for _, w := range want {
		res, err := slave.GetMessage("g", "T", w.queueID, w.offset, 1, 1<<20, nil)
		if err != nil || res.Status != store.Found || len(res.Messages) != 1 {
			t.Fatalf("slave get %d@%d: %v %v", w.queueID, w.offset, res.Status, err)
		}
		m := res.Messages[0]
		rec, err := record.Decode(res.Buffer[m.Pos:m.Pos+int(m.Size)], true)
		if err != nil || !bytes.Equal(rec.Body, w.body) || rec.PhysicalOffset != w.phys {
			t.Fatalf("slave serves a different message at %d@%d: %v", w.queueID, w.offset, err)
		}
	}
}

type pair struct {
	master, slave *store.Store
	svc           *Service
	cli           *Client
}

func newPair(t *testing.T, cfg Config) *pair {
	t.Helper()
	p := &pair{master: openStore(t, storeConfig(t))}
	var err error
	if p.svc, err = NewService(p.master, cfg); err != nil {
		t.Fatal(err)
	}
	p.slave = openStore(t, storeConfig(t))
	p.cli = NewClient(p.slave, fastClient(p.svc.Addr()))
	t.Cleanup(func() {
		p.cli.Close()
		p.svc.Close()
		p.slave.Close()
		p.master.Close()
	})
	waitFor(t, "the slave to stream", func() bool { return p.svc.streaming() == 1 })
	return p
}

// TestReplicationByteIdentical: messages of random sizes from concurrent
// producers across many segment rolls reach the slave byte-identically, and
// its own consume queues serve them; the slave refuses puts.
func TestReplicationByteIdentical(t *testing.T) {
	p := newPair(t, fastConfig())
	var mu sync.Mutex
	var all []sent
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 60 {
				s := put(t, rng, p.master, g*1000+i)
				p.svc.Notify()
				mu.Lock()
				all = append(all, s)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if n := len(p.master.CommitLog().Segments()); n < 4 {
		t.Fatalf("%d segments: the test must cross rolls", n)
	}
	caughtUp(t, p.master, p.slave)
	sameLog(t, p.master, p.slave)
	serves(t, p.slave, all)
	if p.slave.MinPhyOffset() != 0 {
		t.Fatalf("slave starts at %d", p.slave.MinPhyOffset())
	}
	_, err := p.slave.Put(context.Background(), &record.Message{Topic: "T", Body: []byte("x"), BornHost: bornHost})
	if !errors.Is(err, store.ErrSlave) || store.StatusOf(err) != store.ServiceNotAvailable {
		t.Fatalf("put on the slave: %v", err)
	}
	if st := p.cli.Status(); !st.Connected || st.Frames == 0 || st.Offset != p.master.MaxPhyOffset() {
		t.Fatalf("client status %+v", st)
	}
}

// TestSyncMasterWaitsForSlave: WaitForSlave returns only once the slave
// stored the put's bytes.
func TestSyncMasterWaitsForSlave(t *testing.T) {
	p := newPair(t, Config{ListenAddr: "127.0.0.1:0", HeartbeatInterval: time.Hour, IdleWait: time.Hour, Logger: quiet})
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range 50 {
		s := put(t, rng, p.master, i)
		if err := p.svc.WaitForSlave(context.Background(), s.end, 3*time.Second); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
		if got := p.slave.ReplicaOffset(); got < s.end {
			t.Fatalf("acknowledged put %d ending at %d, the slave holds only %d", i, s.end, got)
		}
	}
}

// fakeSlave connects, reports offset, then reads frames and never reports
// again: a slave that stopped acknowledging.
func fakeSlave(t *testing.T, addr string, offset int64) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(offset))
	if _, err := nc.Write(b[:]); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, nc)
	t.Cleanup(func() { nc.Close() })
	return nc
}

// TestSlaveTimeoutAndNotAvailable: no slave → SLAVE_NOT_AVAILABLE at once;
// a slave that stops acknowledging → FLUSH_SLAVE_TIMEOUT after the
// timeout; one too far behind → SLAVE_NOT_AVAILABLE.
func TestSlaveTimeoutAndNotAvailable(t *testing.T) {
	master := openStore(t, storeConfig(t))
	defer master.Close()
	cfg := fastConfig()
	cfg.MaxGapNotInSync = 8 << 10
	svc, err := NewService(master, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	rng := rand.New(rand.NewPCG(3, 3))
	s := put(t, rng, master, 0)
	if err := svc.WaitForSlave(context.Background(), s.end, time.Second); !errors.Is(err, ErrSlaveNotAvailable) {
		t.Fatalf("no slave: %v", err)
	}
	fakeSlave(t, svc.Addr(), 0)
	waitFor(t, "the fake slave to stream", func() bool { return svc.streaming() == 1 })
	t0 := time.Now()
	if err := svc.WaitForSlave(context.Background(), s.end, 150*time.Millisecond); !errors.Is(err, ErrSlaveTimeout) {
		t.Fatalf("silent slave: %v", err)
	}
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Fatalf("timed out after %v", d)
	}
	var last sent
	for i := 1; master.MaxPhyOffset() < 16<<10; i++ {
		last = put(t, rng, master, i)
	}
	if err := svc.WaitForSlave(context.Background(), last.end, time.Second); !errors.Is(err, ErrSlaveNotAvailable) {
		t.Fatalf("slave %d bytes behind: %v", last.end, err)
	}
}

// TestSlaveStoppedMidway: a real slave that goes away while SYNC puts wait
// makes them time out (or be refused once the link is known to be gone);
// every acknowledged put is on the slave.
func TestSlaveStoppedMidway(t *testing.T) {
	p := newPair(t, fastConfig())
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 20 {
		s := put(t, rng, p.master, i)
		if err := p.svc.WaitForSlave(context.Background(), s.end, 2*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	p.cli.Close()
	s := put(t, rng, p.master, 99)
	err := p.svc.WaitForSlave(context.Background(), s.end, 300*time.Millisecond)
	if !errors.Is(err, ErrSlaveTimeout) && !errors.Is(err, ErrSlaveNotAvailable) {
		t.Fatalf("stopped slave: %v", err)
	}
	waitFor(t, "the master to notice", func() bool { return p.svc.streaming() == 0 })
	if err := p.svc.WaitForSlave(context.Background(), s.end, 300*time.Millisecond); !errors.Is(err, ErrSlaveNotAvailable) {
		t.Fatalf("gone slave: %v", err)
	}
}

// TestSlaveResumesFromItsOffset: a slave restarted (store reopened) reports
// its own end and the master streams from exactly there.
func TestSlaveResumesFromItsOffset(t *testing.T) {
	master := openStore(t, storeConfig(t))
	defer master.Close()
	svc, err := NewService(master, fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	scfg := storeConfig(t)
	slave := openStore(t, scfg)
	cli := NewClient(slave, fastClient(svc.Addr()))
	// An empty slave that connects after the master rolled starts at the
	// master's last segment (RocketMQ): link first, then write.
	waitFor(t, "the slave to stream", func() bool { return svc.streaming() == 1 })
	rng := rand.New(rand.NewPCG(5, 5))
	var all []sent
	for i := range 80 {
		all = append(all, put(t, rng, master, i))
		svc.Notify()
	}
	caughtUp(t, master, slave)
	cli.Close()
	before := slave.ReplicaOffset()
	if err := slave.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 80; i < 160; i++ {
		all = append(all, put(t, rng, master, i))
	}
	slave = openStore(t, scfg)
	defer slave.Close()
	if slave.ReplicaOffset() != before {
		t.Fatalf("reopened slave at %d, was %d", slave.ReplicaOffset(), before)
	}
	cli = NewClient(slave, fastClient(svc.Addr()))
	defer cli.Close()
	waitFor(t, "the new link", func() bool {
		for _, si := range svc.Slaves() {
			if si.RequestOffset == before && si.State == StateTransfer {
				return true
			}
		}
		return false
	})
	caughtUp(t, master, slave)
	sameLog(t, master, slave)
	serves(t, slave, all)
}

// TestMasterShorterThanSlave: a master that comes back with a shorter log
// than its slave refuses to stream to it (classic HA truncates nothing);
// the slave reports ErrMasterBehind and keeps its log; SYNC puts find no
// slave.
func TestMasterShorterThanSlave(t *testing.T) {
	p := newPair(t, fastConfig())
	rng := rand.New(rand.NewPCG(6, 6))
	for i := range 40 {
		put(t, rng, p.master, i)
		p.svc.Notify()
	}
	caughtUp(t, p.master, p.slave)
	slaveEnd := p.slave.ReplicaOffset()

	// A new master with a shorter log (an older copy, a lost tail).
	m2 := openStore(t, storeConfig(t))
	defer m2.Close()
	var last sent
	for i := range 5 {
		last = put(t, rng, m2, i)
	}
	svc2, err := NewService(m2, fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer svc2.Close()
	p.cli.SetMasterAddr(svc2.Addr())
	waitFor(t, "the slave to learn", func() bool { return errors.Is(p.cli.Status().Err, ErrMasterBehind) })
	if svc2.Refused() == 0 {
		t.Fatal("the master did not refuse the slave")
	}
	for _, si := range svc2.Slaves() {
		if si.State != StateRefused || !errors.Is(si.Err, store.ErrReplicaAhead) {
			t.Fatalf("slave connection %+v", si)
		}
	}
	if err := svc2.WaitForSlave(context.Background(), last.end, 200*time.Millisecond); !errors.Is(err, ErrSlaveNotAvailable) {
		t.Fatalf("sync put with only a refused slave: %v", err)
	}
	if got := p.slave.ReplicaOffset(); got != slaveEnd {
		t.Fatalf("slave log changed: %d, was %d", got, slaveEnd)
	}
}

// TestMasterDiesUnderSyncLoad: the master's HA link is torn down abruptly
// while SYNC producers run; every put WaitForSlave acknowledged is on the
// slave, byte for byte.
func TestMasterDiesUnderSyncLoad(t *testing.T) {
	p := newPair(t, fastConfig())
	var mu sync.Mutex
	var acked []sent
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := put(t, rng, p.master, g*100000+i)
				if p.svc.WaitForSlave(context.Background(), s.end, time.Second) == nil {
					mu.Lock()
					acked = append(acked, s)
					mu.Unlock()
				}
			}
		}()
	}
	waitFor(t, "acknowledged puts", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 200
	})
	p.svc.Close() // the link dies mid-stream
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if !p.slave.WaitDispatched(10 * time.Second) {
		t.Fatal("slave dispatch stuck")
	}
	for _, s := range acked {
		if s.end > p.slave.MaxPhyOffset() {
			t.Fatalf("acknowledged put ending at %d, slave holds %d", s.end, p.slave.MaxPhyOffset())
		}
	}
	serves(t, p.slave, acked)
	sameLog(t, p.master, p.slave)
}

// TestSlaveTornTailRecoversAndResumes: a slave that died while a record was
// half written (its first bytes on disk, the rest not) recovers to its last
// complete record and resumes from there.
func TestSlaveTornTailRecoversAndResumes(t *testing.T) {
	master := openStore(t, storeConfig(t))
	defer master.Close()
	svc, err := NewService(master, fastConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	scfg := storeConfig(t)
	slave := openStore(t, scfg)
	cli := NewClient(slave, fastClient(svc.Addr()))
	waitFor(t, "the slave to stream", func() bool { return svc.streaming() == 1 }) // as in TestSlaveResumesFromItsOffset
	rng := rand.New(rand.NewPCG(8, 8))
	var all []sent
	for i := range 50 {
		all = append(all, put(t, rng, master, i))
		svc.Notify()
	}
	caughtUp(t, master, slave)
	cli.Close()
	end := slave.ReplicaOffset()
	if err := slave.Close(); err != nil {
		t.Fatal(err)
	}
	// More on the master; the slave's disk gets the first 100 bytes of the
	// next record, as if it crashed mid-write.
	for i := 50; i < 100; i++ {
		all = append(all, put(t, rng, master, i))
	}
	torn := make([]byte, 100)
	if _, err := master.CommitLog().ReadAt(torn, end); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(scfg.Root, "commitlog", fmt.Sprintf("%020d", end-end%segSize))
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(torn, end%segSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(store.AbortPath(scfg.Root), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	slave = openStore(t, scfg)
	defer slave.Close()
	if got := slave.ReplicaOffset(); got != end {
		t.Fatalf("recovered slave at %d, want %d", got, end)
	}
	cli = NewClient(slave, fastClient(svc.Addr()))
	defer cli.Close()
	caughtUp(t, master, slave)
	sameLog(t, master, slave)
	serves(t, slave, all)
}

package store

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
)

// Crash tests re-execute this test binary as a writer (TestHelperWriter),
// kill it with SIGKILL at a random moment under load, reopen the store in
// the test process and check what survived. The default run covers four
// configurations × 3 cycles (group/mmap, sync/direct, async/pool,
// async/direct) and one cycle of rmqgroup/pwrite; -long (or
// BROKERLAB_LONG=1) runs every write path × flush policy for 8 cycles.
var long = flag.Bool("long", false, "run the long crash matrix")

const helperEnv = "BROKERLAB_STORE_CRASH_WRITER" // "dir|path|policy|seed"

const crashTopic = "CRASH"

// crashConfig is the store config shared by the writer and the checker.
func crashConfig(t testing.TB, dir string, path iopath.Kind, pol flush.Kind) Config {
	cfg := testConfig(t, dir, path, pol) // then bigger files, faster checkpoints
	cfg.CommitLog.Flush.Interval = 10 * time.Millisecond
	cfg.CommitLog.SegmentSize = 256 << 10
	pool := iopath.NewBufferPool(8, cfg.CommitLog.SegmentSize)
	t.Cleanup(func() { pool.Close() })
	cfg.CommitLog.IO.Pool = pool
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 512}
	cfg.Index = index.Config{MaxHashSlots: 512, MaxIndexNum: 4096, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 4 << 20
	cfg.ReadCacheBlockSize = DefaultConfig(dir).ReadCacheBlockSize
	cfg.FlushConsumeQueueThoroughInterval = 50 * time.Millisecond
	cfg.CheckpointInterval = 20 * time.Millisecond
	// A small margin makes recovery start in a recent segment, so the
	// checkpoint's timestamps decide what is re-dispatched.
	cfg.RecoveryTimeMargin = time.Millisecond
	return cfg
}

func bodyHash(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// TestHelperWriter is the child writer of the crash tests; run on its own
// (without the environment variable) it skips. It opens the store,
// prints READY, and puts messages from 4 goroutines until killed (or a
// bound), printing "ACK <queueId> <queueOffset> <bodyHash>" after each Put
// that returned PUT_OK.
func TestHelperWriter(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("child writer of the crash tests: runs only when they re-execute the test binary")
	}
	f := strings.Split(spec, "|")
	seed, _ := strconv.ParseUint(f[3], 10, 64)
	s, err := Open(crashConfig(t, f[0], iopath.Kind(f[1]), flush.Kind(f[2])))
	if err != nil {
		fmt.Printf("ERR open: %v\n", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	write := func(line string) {
		mu.Lock()
		os.Stdout.WriteString(line)
		mu.Unlock()
	}
	write("READY\n")
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	// A tailing consumer: everything it is served ("SAW") must survive the
	// kill, since a consumer may already have acted on it.
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := make([]int64, 4)
		for time.Now().Before(deadline) {
			idle := true
			for q := int32(0); q < 4; q++ {
				res, err := s.GetMessage("tail", crashTopic, q, next[q], 32, 1<<20, nil)
				if err != nil || res.Status != Found {
					continue
				}
				idle = false
				for _, m := range res.Messages {
					rec, err := record.Decode(res.Buffer[m.Pos:m.Pos+int(m.Size)], true)
					if err != nil {
						write(fmt.Sprintf("ERR served a corrupt record at %d/%d: %v\n", q, m.QueueOffset, err))
						continue
					}
					write(fmt.Sprintf("SAW %d %d %s\n", q, m.QueueOffset, bodyHash(rec.Body)))
				}
				next[q] = res.NextBeginOffset
			}
			if idle {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := 0; i < 6000 && time.Now().Before(deadline); i++ {
				m := newMsg(rng, crashTopic, int32(rng.IntN(4)), i, 2000, "t"+strconv.Itoa(g))
				r, err := s.Put(context.Background(), m)
				if err != nil {
					continue
				}
				write(fmt.Sprintf("ACK %d %d %s\n", m.QueueID, r.QueueOffset, bodyHash(m.Body)))
			}
		}(g)
	}
	wg.Wait()
	write("DONE\n")
	time.Sleep(time.Hour) // wait for the kill
}

type ackKey struct {
	q   int32
	off int64
}

// runWriter starts a writer, kills it with SIGKILL after a random delay once
// it is ready, and returns the acknowledged messages and those its tailing
// consumer was served.
func runWriter(t *testing.T, dir string, path iopath.Kind, pol flush.Kind, seed uint64, killAfter time.Duration) (acks, seen map[ackKey]string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%s|%d", helperEnv, dir, path, pol, seed))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1<<16)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	acks, seen = map[ackKey]string{}, map[ackKey]string{}
	handle := func(l string) {
		f := strings.Fields(l)
		switch {
		case len(f) == 4 && (f[0] == "ACK" || f[0] == "SAW"):
			q, _ := strconv.Atoi(f[1])
			off, _ := strconv.ParseInt(f[2], 10, 64)
			if f[0] == "ACK" {
				acks[ackKey{int32(q), off}] = f[3]
			} else {
				seen[ackKey{int32(q), off}] = f[3]
			}
		case strings.HasPrefix(l, "ERR"):
			t.Errorf("writer: %s", l)
		}
	}
	ready := false
	timeout := time.After(30 * time.Second)
	for !ready {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatalf("writer exited before it was ready")
			}
			handle(l)
			ready = l == "READY"
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("writer not ready")
		}
	}
	time.Sleep(killAfter)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		handle(l)
	}
	<-readDone
	_ = cmd.Wait()
	return acks, seen
}

// checkCrashRecovery reopens the store after a kill and checks it: the
// commit log is a clean prefix (every record valid, queue offsets
// contiguous from 0 per queue), the consume queues agree with it, every
// served record passes its CRC, and every message in must is served with
// identical bytes. It returns each queue's recovered max offset.
func checkCrashRecovery(t *testing.T, cfg Config, must map[ackKey]string, afterKill bool) map[int32]int64 {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	defer mustClose(t, s)
	if s.Recovery().Abnormal != afterKill {
		t.Fatalf("abnormal recovery %v, after a kill %v", s.Recovery().Abnormal, afterKill)
	}
	if c := s.Recovery().Corruption; c != nil {
		t.Logf("torn tail cut: %v", c)
	}
	if afterKill {
		rep := s.Recovery()
		t.Logf("recovered: scan from %d to %d, %d records re-dispatched", rep.ScanFrom, rep.End, rep.Redispatched)
	}
	log := s.CommitLog()
	next := map[int32]int64{}
	walkLog(t, log, func(off int64, raw []byte, rec record.Record) {
		if _, err := record.Decode(raw, true); err != nil {
			t.Fatalf("recovered record at %d fails its check: %v", off, err)
		}
		if string(rec.Topic) != crashTopic {
			t.Fatalf("record at %d: topic %s", off, rec.Topic)
		}
		if rec.QueueOffset != next[rec.QueueID] {
			t.Fatalf("queue %d: record at %d has queue offset %d, want %d (not a clean prefix)", rec.QueueID, off, rec.QueueOffset, next[rec.QueueID])
		}
		next[rec.QueueID]++
	})
	for q := int32(0); q < 4; q++ {
		if got := s.GetMaxOffsetInQueue(crashTopic, q); got != next[q] {
			t.Fatalf("queue %d: consume queue max %d, commit log holds %d", q, got, next[q])
		}
		cq, err := s.cq.Queue(crashTopic, q, false)
		if next[q] == 0 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < next[q]; off++ {
			u, err := cq.Get(off)
			if err != nil {
				t.Fatalf("queue %d unit %d: %v", q, off, err)
			}
			_, rec, err := log.ReadRecord(u.PhyOffset, nil)
			if err != nil || rec.QueueID != q || rec.QueueOffset != off || rec.TotalSize != u.Size {
				t.Fatalf("queue %d unit %d → record at %d: %v, queue %d offset %d", q, off, u.PhyOffset, err, rec.QueueID, rec.QueueOffset)
			}
		}
		served := pullAll(t, s, crashTopic, q)
		if int64(len(served)) != next[q] {
			t.Fatalf("queue %d: %d served, %d stored", q, len(served), next[q])
		}
		for off, raw := range served {
			rec, err := record.Decode(raw, true)
			if err != nil {
				t.Fatalf("served record fails its CRC: %v", err)
			}
			if h, ok := must[ackKey{q, off}]; ok && h != bodyHash(rec.Body) {
				t.Fatalf("queue %d offset %d: served body differs from the acknowledged one", q, off)
			}
		}
	}
	for k := range must {
		if k.off >= next[k.q] {
			t.Fatalf("acknowledged message %d/%d lost (queue holds %d)", k.q, k.off, next[k.q])
		}
	}
	return next
}

func crashCycles(t *testing.T, path iopath.Kind, pol flush.Kind, cycles int) {
	dir := t.TempDir()
	cfg := crashConfig(t, dir, path, pol)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	survivors := map[ackKey]string{} // acknowledged and present at a recovery
	for c := 0; c < cycles; c++ {
		acks, seen := runWriter(t, dir, path, pol, seed+uint64(c), time.Duration(20+rng.IntN(200))*time.Millisecond)
		if len(acks) == 0 {
			t.Logf("cycle %d: killed before any acknowledgement", c)
		}
		must := map[ackKey]string{}
		for k, v := range survivors {
			must[k] = v
		}
		// What a consumer was served survives a process crash under every
		// policy and path: dispatch never runs ahead of what left user space.
		for k, v := range seen {
			if old, ok := must[k]; ok && old != v {
				t.Fatalf("cycle %d: queue %d offset %d was served with another body before the kill", c, k.q, k.off)
			}
			must[k] = v
		}
		if pol != flush.Async {
			for k, v := range acks {
				must[k] = v
			}
		}
		maxes := checkCrashRecovery(t, cfg, must, true)
		lost := 0
		for k, v := range acks {
			if k.off < maxes[k.q] {
				survivors[k] = v
			} else {
				lost++
			}
		}
		if pol != flush.Async && lost > 0 {
			t.Fatalf("cycle %d: %d acknowledged messages lost", c, lost)
		}
		// Under async, what survived must be exactly what was acknowledged.
		if pol == flush.Async {
			checkCrashRecovery(t, cfg, survivors, false)
		}
		t.Logf("cycle %d: %d acknowledged, %d served to the consumer, %d lost, queues %v", c, len(acks), len(seen), lost, maxes)
	}
}

func longCrash() bool { return *long || os.Getenv("BROKERLAB_LONG") != "" }

func TestCrashRecoverGroupFlush(t *testing.T) {
	t.Parallel()
	crashCycles(t, iopath.Mmap, flush.Group, 3)
}

func TestCrashRecoverSyncFlush(t *testing.T) {
	t.Parallel()
	crashCycles(t, iopath.Direct, flush.Sync, 3)
}

func TestCrashRecoverAsyncFlushCleanPrefix(t *testing.T) {
	t.Parallel()
	crashCycles(t, iopath.Pool, flush.Async, 3)
}

// TestCrashRecoverMatrix kills a writer under every write path × flush
// policy, 8 cycles each, with -long (or BROKERLAB_LONG=1). Without it, one
// cycle each of rmqgroup and dsync over pwrite and of dsync over direct
// (combinations the other crash tests leave out) runs and the rest of the
// matrix is skipped.
func TestCrashRecoverMatrix(t *testing.T) {
	short := map[string]bool{"pwrite/rmqgroup": true, "pwrite/dsync": true, "direct/dsync": true}
	for _, path := range iopath.Kinds() {
		for _, pol := range flush.AllKinds() {
			t.Run(fmt.Sprintf("path=%s/flush=%s", path, pol), func(t *testing.T) {
				skipNoDSync(t, path, pol)
				cycles := 8
				if !longCrash() {
					if !short[string(path)+"/"+string(pol)] {
						t.Skip("long crash matrix: run with -long or BROKERLAB_LONG=1")
					}
					cycles = 1
				}
				crashCycles(t, path, pol, cycles)
			})
		}
	}
}

// The direct path under async holds appended bytes in its staging buffers:
// a consumer must never be served them before they reach the device.
func TestCrashRecoverDirectAsyncConsumed(t *testing.T) {
	t.Parallel()
	crashCycles(t, iopath.Direct, flush.Async, 3)
}

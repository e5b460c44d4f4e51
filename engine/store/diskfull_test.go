package store

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/vfs"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
)

// Disk-full tests (issue 7): a real small file system (a 64 MiB ext4 image,
// loop-mounted, when running as root with mkfs.ext4 and loop devices), the
// same end to end with injected ENOSPC (always available), and the store's
// disk-usage refusal above DiskSpaceWarningLevelRatio.

// mountLoopExt4 creates a size-byte ext4 image in a temporary directory,
// loop-mounts it and returns the mount point; it is unmounted at Cleanup.
// It skips (with the reason) when the OS cannot do it here.
func mountLoopExt4(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("a loop-mounted ext4 needs root (mount -o loop); running as uid %d (the injected-ENOSPC variant covers this)", os.Geteuid())
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: %v (the injected-ENOSPC variant covers this)", tool, err)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop devices (/dev/loop-control: %v); the injected-ENOSPC variant covers this", err)
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Close()
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4 failed: %v: %s", err, out)
	}
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount -o loop failed (no free loop device or no mount permission in this container): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
			_ = exec.Command("umount", "-l", mnt).Run()
		}
	})
	return mnt
}

// randomBlock backs the bodies of bigFaultMsg.
var randomBlock = func() []byte {
	b := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(99, 100))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}()

// bigFaultMsg is faultMsg with an n-byte body (n <= 512 KiB): a window of
// randomBlock chosen by rng, prefixed with i.
func bigFaultMsg(rng *rand.Rand, i, n int) *record.Message {
	m := faultMsg(rng, i)
	from := rng.IntN(len(randomBlock) - n)
	m.Body = append(strconv.AppendInt(nil, int64(i), 10), randomBlock[from:from+n]...)[:n]
	return m
}

// knownPartialSegmentBug describes the regression TestDiskFullLoopExt4 guards
// against (fixed: a failed preallocation removes the file it created).
const knownPartialSegmentBug = "regression (engine/iopath/base.go openSegmentFile, engine/segment/queue.go create): " +
	"a new segment whose fallocate(2) failed with ENOSPC is left behind with the partial size ext4 had " +
	"reserved (neither 0 nor the segment size); every later roll then fails with a size mismatch " +
	"(CREATE_MAPPED_FILE_FAILED) even after space is freed, and segment.Open refuses to open the store. " +
	"Fix: remove the file when Allocate fails on a file openSegmentFile created (or treat a short last " +
	"file past the recovered end as garbage at open)"

// On a 64 MiB ext4 the store (8 MiB segments, preallocated, async flush)
// fills the file system until creating the next segment fails: puts get
// CREATE_MAPPED_FILE_FAILED, the process is fine, every acknowledged
// message reads back from the commit log (and through the consume queues
// as far as they could be written). The store's own statfs check then marks
// the disk full and refuses puts with SERVICE_NOT_AVAILABLE before touching
// a file; the forced clean pass frees space, puts are accepted again and a
// restart recovers everything still stored. Default: mmap; -long: every
// write path.
func TestDiskFullLoopExt4(t *testing.T) {
	t.Parallel()
	paths := []iopath.Kind{iopath.Mmap}
	if longCrash() {
		paths = iopath.Kinds()
	}
	for _, path := range paths {
		t.Run("path="+string(path), func(t *testing.T) {
			mnt := mountLoopExt4(t, 64<<20)
			cfg := testConfig(t, filepath.Join(mnt, "store"), path, flush.Async)
			cfg.CommitLog.SegmentSize = 8 << 20
			pool := iopath.NewBufferPool(2, cfg.CommitLog.SegmentSize)
			t.Cleanup(func() { pool.Close() })
			cfg.CommitLog.IO.Pool = pool
			cfg.DiskUsage = nil // statfs of the loop-mounted file system
			s := openStore(t, cfg)
			closed := false
			defer func() {
				if !closed {
					_ = s.Close()
				}
			}()
			rng := rand.New(rand.NewPCG(31, 32))
			led := newFaultLedger()
			var failErr error
			var puts int
			for ; puts < 4000 && failErr == nil; puts++ {
				_, failErr = led.put(s, bigFaultMsg(rng, puts, 32<<10), false)
			}
			if failErr == nil {
				t.Fatalf("%d puts of 32 KiB did not fill a 64 MiB file system", puts)
			}
			t.Logf("after %d puts (%d segments): %v", puts, len(s.CommitLog().Segments()), failErr)
			if StatusOf(failErr) != CreateMappedFileFailed {
				t.Fatalf("put on a full file system: %v, want CREATE_MAPPED_FILE_FAILED", failErr)
			}
			if _, err := s.CommitLog().Flush(); err != nil {
				t.Fatalf("flush of the preallocated segments on a full file system: %v", err)
			}
			led.markAllDurable()
			led.checkLogged(t, s)
			if _, err := led.put(s, bigFaultMsg(rng, puts, 32<<10), false); StatusOf(err) != CreateMappedFileFailed {
				t.Fatalf("second put on a full file system: %v", err)
			}
			t.Logf("dispatched %d of %d (consume-queue and index files need space too; dispatch errors %d)",
				s.DispatchedOffset(), s.CommitLog().MaxOffset(), s.Stats().DispatchErrors)

			// The store's statfs check: above 90 % puts are refused up front.
			rep, err := s.CleanOnce(time.Now())
			t.Logf("clean pass: usage %.2f, disk full %v, %d segments deleted", rep.DiskUsage, rep.DiskFull, rep.SegmentsDeleted)
			if err != nil || rep.DiskUsage <= 0.90 || !rep.DiskFull || !s.IsDiskFull() {
				t.Fatalf("clean pass on a full file system: %+v %v", rep, err)
			}
			if _, err := led.put(s, bigFaultMsg(rng, puts+1, 100), false); StatusOf(err) != ServiceNotAvailable || !errors.Is(err, ErrDiskFull) {
				t.Fatalf("put while the disk is marked full: %v", err)
			}
			if rep.SegmentsDeleted == 0 {
				t.Fatalf("the forced clean pass deleted no segment")
			}
			t.Logf("%d acknowledged messages were in deleted segments", led.forgetBelow(s.CommitLog().MinOffset()))
			rep, err = s.CleanOnce(time.Now())
			if err != nil || rep.DiskFull || s.IsDiskFull() {
				t.Fatalf("clean pass after deleting segments: %+v %v", rep, err)
			}
			led.checkServed(t, s, false) // dispatch caught up once space returned
			var bug string
			if _, err := led.put(s, bigFaultMsg(rng, puts+2, 32<<10), true); err != nil {
				if p := partialSegments(t, cfg); StatusOf(err) == CreateMappedFileFailed && len(p) > 0 {
					bug = fmt.Sprintf("put after space was freed: %v (partial files %v)", err, p)
				} else {
					t.Fatalf("put after space was freed: %v", err)
				}
			}
			err = s.Close()
			closed = true
			if err != nil {
				t.Fatalf("close: %v", err)
			}
			s2, err := Open(cfg)
			if err != nil && bug != "" {
				// What the fix would do: drop the partial file past the end.
				bug += fmt.Sprintf("; reopen: %v", err)
				for _, p := range partialSegments(t, cfg) {
					name, _, _ := strings.Cut(p, "=")
					if err := os.Remove(filepath.Join(cfg.Root, "commitlog", name)); err != nil {
						t.Fatal(err)
					}
				}
				s2, err = Open(cfg)
			}
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer mustClose(t, s2)
			led.checkRecovered(t, s2)
			if _, err := led.put(s2, bigFaultMsg(rng, puts+3, 32<<10), true); err != nil {
				t.Fatalf("put after the restart: %v", err)
			}
			led.checkRecovered(t, s2)
			if bug != "" {
				t.Fatalf("%s. Observed: %s", knownPartialSegmentBug, bug)
			}
		})
	}
}

// partialSegments lists commit-log files whose size is neither 0 nor the
// segment size.
func partialSegments(t *testing.T, cfg Config) []string {
	ents, err := os.ReadDir(filepath.Join(cfg.Root, "commitlog"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		fi, err := e.Info()
		if err == nil && fi.Size() != 0 && fi.Size() != cfg.CommitLog.SegmentSize {
			out = append(out, e.Name()+"="+strconv.FormatInt(fi.Size(), 10))
		}
	}
	return out
}

// The always-available variant: ENOSPC injected into segment preallocation
// (fallocate) over every write path. The put gets CREATE_MAPPED_FILE_FAILED
// wrapping ENOSPC, earlier data reads back, and when space "returns" puts
// are accepted again and a restart finds everything.
func TestDiskFullInjectedENOSPC(t *testing.T) {
	t.Parallel()
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			t.Parallel()
			cfg, inj := faultStoreConfig(t, path, flush.Group, 41)
			s := openStore(t, cfg)
			rng := rand.New(rand.NewPCG(41, 42))
			led := newFaultLedger()
			inj.Add(segmentRule(cfg, vfs.OpAllocate, faultfs.FromNth(3), syscall.ENOSPC, 0))
			var err error
			i := 0
			for ; i < 400 && err == nil; i++ {
				_, err = led.put(s, faultMsg(rng, i), true)
			}
			if StatusOf(err) != CreateMappedFileFailed || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("put with preallocation failing: %v", err)
			}
			led.checkServed(t, s, false)
			inj.Clear()
			for j := 0; j < 10; j++ {
				if _, err := led.put(s, faultMsg(rng, i+j), true); err != nil {
					t.Fatalf("put after space returned: %v", err)
				}
			}
			mustClose(t, s)
			s2 := openStore(t, cfg)
			defer mustClose(t, s2)
			led.checkRecovered(t, s2)
		})
	}
}

// Disk usage above DiskSpaceWarningLevelRatio (90 %) refuses puts with
// SERVICE_NOT_AVAILABLE / ErrDiskFull before any file operation (segment
// writes and flushes fail with EIO meanwhile, and no put sees it), reads keep
// working, nothing is written to the commit log; at or below
// DiskSpaceCleanForciblyRatio (85 %) puts are accepted again; a restart
// while refused loses nothing.
func TestDiskFullUsageRefusal(t *testing.T) {
	t.Parallel()
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			t.Parallel()
			cfg, inj := faultStoreConfig(t, iopath.Mmap, pol, 43)
			var usage atomic.Uint64
			usage.Store(math.Float64bits(0.50))
			cfg.DiskUsage = func(string) (float64, error) { return math.Float64frombits(usage.Load()), nil }
			s := openStore(t, cfg)
			rng := rand.New(rand.NewPCG(43, 44))
			led := newFaultLedger()
			for i := 0; i < 20; i++ {
				if _, err := led.put(s, faultMsg(rng, i), pol != flush.Async); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.CommitLog().Flush(); err != nil {
				t.Fatal(err)
			}
			led.markAllDurable()
			usage.Store(math.Float64bits(0.91))
			if rep, err := s.CleanOnce(time.Now()); err != nil || !rep.DiskFull {
				t.Fatalf("91 %%: %+v %v", rep, err)
			}
			end := s.CommitLog().MaxOffset()
			// Every write and flush of a segment fails meanwhile (the log
			// is flushed, so background flushes have nothing to do): a
			// refused put that wrote or waited for a flush would report
			// that error instead.
			var traps []faultfs.RuleID
			for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpMsync, vfs.OpSync} {
				traps = append(traps, inj.Add(segmentRule(cfg, op, faultfs.Always(), syscall.EIO, 0)))
			}
			for i := 20; i < 25; i++ {
				r, err := led.put(s, faultMsg(rng, i), true)
				if StatusOf(err) != ServiceNotAvailable || r.Status != ServiceNotAvailable || !errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.EIO) {
					t.Fatalf("put at 91 %%: %v", err)
				}
			}
			for _, id := range traps {
				inj.Remove(id)
			}
			if s.CommitLog().MaxOffset() != end || s.CommitLog().Err() != nil {
				t.Fatalf("a refused put touched the commit log (end %d → %d, log error %v)", end, s.CommitLog().MaxOffset(), s.CommitLog().Err())
			}
			led.checkServed(t, s, false)
			usage.Store(math.Float64bits(0.87))
			if rep, _ := s.CleanOnce(time.Now()); !rep.DiskFull {
				t.Fatalf("87 %%: accepted again above the clean-forcibly ratio")
			}
			// Restart while refused: the disk-full state is re-evaluated by
			// the cleaner, nothing acknowledged is lost.
			mustClose(t, s)
			s = openStore(t, cfg)
			defer mustClose(t, s)
			led.checkRecovered(t, s)
			usage.Store(math.Float64bits(0.85))
			if rep, _ := s.CleanOnce(time.Now()); rep.DiskFull || s.IsDiskFull() {
				t.Fatalf("85 %%: still refused")
			}
			for i := 25; i < 30; i++ {
				if _, err := led.put(s, faultMsg(rng, i), true); err != nil {
					t.Fatalf("put at 85 %%: %v", err)
				}
			}
			led.checkRecovered(t, s)
		})
	}
}

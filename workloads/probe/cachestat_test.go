//go:build linux

package probe

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// cachestatOrSkip skips where the kernel has no cachestat(2).
func cachestatOrSkip(t testing.TB, path string) {
	t.Helper()
	if _, err := StatFile(path, KindCachestat); err != nil {
		t.Skipf("cachestat(2) not usable here: %v", err)
	}
}

// writeHalfCached writes an 8 MiB file, makes it durable, and evicts every
// other 2 MiB chunk, so about half its pages are cached.
func writeHalfCached(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "00000000000000000000")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size, chunk = 8 << 20, 2 << 20 // chunks cover whole large folios (up to 2 MiB, aligned)
	if _, err := f.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// DONTNEED skips pages still in another CPU's LRU batch: repeat it
	// (bounded) until mincore sees the file partly cached.
	for try := 0; try < 50; try++ {
		for off := int64(0); off < size; off += 2 * chunk {
			if err := unix.Fadvise(int(f.Fd()), off, chunk, unix.FADV_DONTNEED); err != nil {
				t.Fatal(err)
			}
		}
		if s, err := StatFile(path, KindMincore); err != nil {
			t.Fatal(err)
		} else if s.Cached < s.Pages {
			return path
		}
		runtime.Gosched()
	}
	t.Fatal("fadvise DONTNEED never evicted any page of the file")
	return ""
}

// TestCachestatAgreesWithMincore: on the same file at the same moment the
// two probes count the same cached pages (within 1 % + 1 page).
func TestCachestatAgreesWithMincore(t *testing.T) {
	path := writeHalfCached(t)
	cachestatOrSkip(t, path)
	cs, err := StatFile(path, KindCachestat)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := StatFile(path, KindMincore)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Source != KindCachestat || mc.Source != KindMincore || !cs.HasDirty() || mc.HasDirty() {
		t.Fatalf("sources %q %q", cs.Source, mc.Source)
	}
	if cs.Pages != mc.Pages || cs.Pages != (8<<20)/int64(os.Getpagesize()) {
		t.Fatalf("pages %d vs %d", cs.Pages, mc.Pages)
	}
	diff := cs.Cached - mc.Cached
	if diff < 0 {
		diff = -diff
	}
	if diff > cs.Pages/100+1 {
		t.Fatalf("cachestat cached %d, mincore resident %d of %d pages", cs.Cached, mc.Cached, cs.Pages)
	}
	if cs.Cached == 0 {
		t.Fatalf("expected a partly cached file, cached %d of %d", cs.Cached, cs.Pages)
	}
	if cs.Dirty != 0 || cs.Writeback != 0 {
		t.Fatalf("after fsync: dirty %d writeback %d", cs.Dirty, cs.Writeback)
	}
}

// TestCachestatSeesDirtyPages: a buffered write shows up as dirty (or
// already under writeback) until fsync, which leaves neither.
func TestCachestatSeesDirtyPages(t *testing.T) {
	path := writeHalfCached(t)
	cachestatOrSkip(t, path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Someone's sync(2) may write the page back before the probe looks:
	// rewrite until one sample catches it (bounded).
	seen := false
	for i := 0; i < 100 && !seen; i++ {
		if _, err := f.WriteAt(make([]byte, 64<<10), 0); err != nil {
			t.Fatal(err)
		}
		s, err := StatFile(path, KindCachestat)
		if err != nil {
			t.Fatal(err)
		}
		seen = s.Dirty+s.Writeback > 0
	}
	if !seen {
		t.Fatal("a buffered write never showed as dirty or writeback")
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	s, err := StatFile(path, KindCachestat)
	if err != nil || s.Dirty != 0 || s.Writeback != 0 {
		t.Fatalf("after fsync %+v %v", s, err)
	}
}

// TestStatDirFallsBackToMincore: with cachestat reported missing (ENOSYS
// remembered), KindAuto reads mincore and KindCachestat fails clearly.
func TestStatDirFallsBackToMincore(t *testing.T) {
	path := writeHalfCached(t)
	want, err := StatFile(path, KindMincore)
	if err != nil {
		t.Fatal(err)
	}
	was := noCachestat.Swap(true)
	defer noCachestat.Store(was)
	segs, err := StatDir(filepath.Dir(path), KindAuto)
	if err != nil || len(segs) != 1 {
		t.Fatalf("%v %v", segs, err)
	}
	if segs[0].Source != KindMincore || segs[0].HasDirty() || segs[0].Pages != want.Pages {
		t.Fatalf("fallback %+v", segs[0])
	}
	if _, err := StatFile(path, KindCachestat); err == nil {
		t.Fatal("KindCachestat without cachestat must fail")
	}
}

// BenchmarkProbe is the probe's own cost: one reading of N sparse 1 GiB
// segments (the first 1 MiB of each written and cached) by cachestat and
// by mincore.
func BenchmarkProbe(b *testing.B) {
	for _, kind := range []Kind{KindCachestat, KindMincore} {
		for _, n := range []int{1, 16, 256} {
			b.Run(fmt.Sprintf("kind=%s/segments=%d", kind, n), func(b *testing.B) {
				dir := b.TempDir()
				for i := 0; i < n; i++ {
					f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%020d", int64(i)<<30)))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.Write(make([]byte, 1<<20)); err != nil {
						b.Fatal(err)
					}
					if err := f.Truncate(1 << 30); err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
				if kind == KindCachestat {
					cachestatOrSkip(b, filepath.Join(dir, fmt.Sprintf("%020d", 0)))
				}
				b.ResetTimer()
				for b.Loop() {
					segs, err := StatDir(dir, kind)
					if err != nil || len(segs) != n {
						b.Fatalf("%d segments, %v", len(segs), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/segment")
			})
		}
	}
}

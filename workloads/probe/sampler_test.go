package probe

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func writeProc(t *testing.T, root, vmstat, io, stat string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{"vmstat": vmstat, "self/io": io, "self/stat": stat} {
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func statLine(minflt, majflt int) string {
	return "1 (bench) R 0 1 1 0 -1 0 " + strconv.Itoa(minflt) + " 0 " + strconv.Itoa(majflt) + " 0 0 0 0 0 20 0 1 0 1 1 1"
}

func TestSamplerDeltasOnFixtures(t *testing.T) {
	root := t.TempDir()
	writeProc(t, root, vmstatText, ioText, statLine(1000, 10))
	cfg := DefaultSamplerConfig()
	cfg.ProcRoot = root
	seg := t.TempDir()
	if err := os.WriteFile(filepath.Join(seg, "00000000000000000000"), make([]byte, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Dir = seg
	s, err := NewSampler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vm2 := strings.NewReplacer("nr_dirty 1536", "nr_dirty 2048", "pgpgout 7890123", "pgpgout 7922891", "pgmajfault 4321", "pgmajfault 4331").Replace(vmstatText)
	io2 := strings.Replace(ioText, "write_bytes: 323932160", "write_bytes: 357486592", 1)
	writeProc(t, root, vm2, io2, statLine(1500, 13))
	p, err := s.Sample(time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	if p.Vmstat["nr_dirty"] != 2048 || p.Vmstat["pgpgout"] != 32768 || p.Vmstat["pgmajfault"] != 10 || p.Vmstat["pgpgin"] != 0 {
		t.Fatalf("vmstat: gauges are values, counters deltas: %v", p.Vmstat)
	}
	if _, ok := p.Vmstat["pgscan_kswapd"]; ok {
		t.Fatal("a field missing from vmstat must be left out")
	}
	if want := float64(2048*os.Getpagesize()) / (1 << 20); p.DirtyMiB != want {
		t.Fatalf("dirty MiB %v want %v", p.DirtyMiB, want)
	}
	if p.IO["write_bytes"] != 32<<20 || p.IO["rchar"] != 0 {
		t.Fatalf("io deltas %v", p.IO)
	}
	if p.MinFlt != 500 || p.MajFlt != 3 {
		t.Fatalf("faults %d %d", p.MinFlt, p.MajFlt)
	}
	if len(p.Files) != 1 || p.Size != 64<<10 || p.Resident > p.Size {
		t.Fatalf("residency %+v", p)
	}
	// The next sample's deltas start from this one.
	p, err = s.Sample(time.Unix(101, 0))
	if err != nil || p.Vmstat["pgpgout"] != 0 || p.MinFlt != 0 {
		t.Fatalf("second sample %+v %v", p, err)
	}
	if n := len(s.Points()); n != 2 {
		t.Fatalf("%d points", n)
	}
}

func TestSamplerLiveSystem(t *testing.T) {
	s, err := NewSampler(DefaultSamplerConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Fault in fresh memory: minor faults of this process must rise. A
	// new anonymous mapping, not the Go heap (which reuses pages a previous
	// run of the test already faulted in).
	buf, err := unix.Mmap(-1, 0, 8<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	p, err := s.Sample(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Vmstat["nr_dirty"]; !ok {
		t.Fatalf("no nr_dirty in %v", p.Vmstat)
	}
	if p.MinFlt <= 0 {
		t.Fatalf("minflt delta %d after touching 8 MiB", p.MinFlt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	if err := s.Run(ctx, 10*time.Millisecond, func(Point) {
		if n++; n == 3 {
			cancel()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if n < 3 || len(s.Points()) != n+1 {
		t.Fatalf("run took %d points, series %d", n, len(s.Points()))
	}
}

// Sample waits are jittered within [d/2, 3d/2) with mean d, so a series
// does not lock to a periodic process's phase.
func TestJitteredWait(t *testing.T) {
	const d = 100 * time.Millisecond
	var sum time.Duration
	lo, hi := d, time.Duration(0)
	const n = 20000
	for range n {
		w := JitteredWait(d)
		if w < d/2 || w >= 3*d/2 {
			t.Fatalf("wait %v outside [%v, %v)", w, d/2, 3*d/2)
		}
		sum += w
		lo, hi = min(lo, w), max(hi, w)
	}
	if mean := sum / n; mean < 98*time.Millisecond || mean > 102*time.Millisecond {
		t.Fatalf("mean wait %v, want about %v", mean, d)
	}
	if lo > 55*time.Millisecond || hi < 145*time.Millisecond {
		t.Fatalf("waits span only [%v, %v]", lo, hi)
	}
}

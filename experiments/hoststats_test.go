package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePressureFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "proc", "pressure", "io"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePressure(string(b))
	if err != nil || p != (pressure{SomeUs: 8413635, FullUs: 1154415, HaveFull: true}) {
		t.Fatalf("%+v %v", p, err)
	}
	// Older kernels' cpu file has no "full" line.
	p, err = parsePressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n")
	if err != nil || p.SomeUs != 42 || p.HaveFull {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"", "full avg10=0 total=1\n", "some avg10=0.00\n", "some total=x\n"} {
		if _, err := parsePressure(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseDiskstatsFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "proc", "diskstats"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseDiskstats(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := m["vda"]; got != (diskStat{SectorsWritten: 95044408, Writes: 1130436, IOTicksMs: 1010744}) {
		t.Fatalf("vda %+v", got)
	}
	// The 14-field form of older kernels.
	if got := m["nvme0n1"]; got != (diskStat{SectorsWritten: 40000, Writes: 2000, IOTicksMs: 500}) {
		t.Fatalf("nvme0n1 %+v", got)
	}
	if _, err := parseDiskstats("8 0 sda 1 2 3\n"); err == nil {
		t.Fatal("short line parsed")
	}
	if v, err := parseLoadavg("10.39 9.86 4.69 9/165 22831\n"); err != nil || v != 10.39 {
		t.Fatalf("loadavg %v %v", v, err)
	}
}

// Two snapshots from fixture trees give the deltas: stall shares of the
// wall time, device bytes, utilisation and write amplification.
func TestHostExtrasFromFixtures(t *testing.T) {
	a := writeProc(t, "some total=1000000\nfull total=0\n", "253 0 vda 0 0 0 0 100 0 1000 0 0 2000 0\n", "1.00 1 1 1/1 1\n")
	b := writeProc(t, "some total=1500000\nfull total=250000\n", "253 0 vda 0 0 0 0 300 0 21480 0 0 2500 0\n", "2.50 1 1 1/1 1\n")
	t0 := time.Unix(100, 0)
	ha := hostProbe{procRoot: a, devices: []string{"vda1", "vda"}}.snap(t0)
	hb := hostProbe{procRoot: b, devices: []string{"vda1", "vda"}}.snap(t0.Add(2 * time.Second))
	x := hostExtras(ha, hb, 5<<20)
	want := map[string]float64{
		"load1": 2.5, "psi_io_some_pct": 25, "psi_io_full_pct": 12.5, "psi_cpu_some_pct": 25, "psi_memory_some_pct": 25,
		"device_write_bytes": (21480 - 1000) * 512, "device_util_pct": 25, "write_amplification": float64((21480-1000)*512) / float64(5<<20),
	}
	for k, v := range want {
		if got, ok := x[k]; !ok || got < v-1e-9 || got > v+1e-9 {
			t.Errorf("%s = %v (%v), want %v", k, got, ok, v)
		}
	}
	// An unknown device records no disk values.
	hc := hostProbe{procRoot: b, devices: []string{"sdz"}}.snap(t0.Add(time.Second))
	if x := hostExtras(ha, hc, 1); x["device_write_bytes"] != 0 || x["write_amplification"] != 0 {
		t.Errorf("unknown device: %v", x)
	}
}

func writeProc(t *testing.T, psi, disk, load string) string {
	t.Helper()
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pressure"), 0o755)
	for _, r := range []string{"cpu", "io", "memory"} {
		if err := os.WriteFile(filepath.Join(root, "pressure", r), []byte(psi), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "diskstats"), []byte(disk), 0o644)
	os.WriteFile(filepath.Join(root, "loadavg"), []byte(load), 0o644)
	return root
}

func TestCellOrderShuffledPerRepetition(t *testing.T) {
	a, b := cellOrder(12, 7, 0), cellOrder(12, 7, 1)
	if strings.Join(intsStr(a), ",") == strings.Join(intsStr(b), ",") {
		t.Fatalf("repetitions 0 and 1 share the order %v", a)
	}
	if strings.Join(intsStr(a), ",") != strings.Join(intsStr(cellOrder(12, 7, 0)), ",") {
		t.Fatal("the order is not a function of seed and repetition")
	}
	seen := map[int]bool{}
	for _, i := range a {
		seen[i] = true
	}
	if len(seen) != 12 {
		t.Fatalf("not a permutation: %v", a)
	}
}

func intsStr(v []int) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = string(rune('a' + x))
	}
	return out
}

package experiments

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/loopfs"
	"github.com/brokerlab/brokerlab/experiments/result"
)

func TestFSParameter(t *testing.T) {
	for _, bad := range []string{"engine: {fs: zfs}", "engine: {fs: ext4, fs_size: 1MiB}"} {
		if _, err := Parse([]byte("name: x\n" + bad + "\n")); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", bad, err)
		}
	}
	e, err := Parse([]byte(`
name: fs
workload: {producers: 8, size: "fixed:1024"}
matrix:
  - {param: fs, values: [ext4, xfs]}
  - {param: flush, values: [group, async]}
peers: [fio]
`))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range cells {
		seen[c.Exp.Engine.FS]++
		if !strings.Contains(c.Name, "fs="+c.Exp.Engine.FS) {
			t.Errorf("cell %s does not name its fs %q", c.Name, c.Exp.Engine.FS)
		}
	}
	if seen["ext4"] != 2 || seen["xfs"] != 2 {
		t.Fatalf("cells per fs %v", seen)
	}
	jobs := fioPlan(cells)
	perFS := map[string]int{}
	for _, j := range jobs {
		perFS[j.FS]++
		if !strings.HasSuffix(j.Name(), "/fs="+j.FS) {
			t.Errorf("fio job %s does not name its fs %q", j.Name(), j.FS)
		}
		if pc := j.planCell(); pc.Exp.Engine.FS != j.FS {
			t.Errorf("fio plan cell of %s on fs %q", j.Name(), pc.Exp.Engine.FS)
		}
	}
	if perFS["ext4"] == 0 || perFS["ext4"] != perFS["xfs"] || perFS[""] != 0 {
		t.Fatalf("fio jobs per fs %v", perFS)
	}
}

func TestFSRootOfAnUnavailableFileSystem(t *testing.T) {
	f := &fileSystems{reasons: map[string]error{"xfs": loopfs.ErrUnavailable}}
	if r, err := f.root("", "/def"); err != nil || r != "/def" {
		t.Fatalf("own fs: %q %v", r, err)
	}
	if _, err := f.root("xfs", "/def"); !errors.Is(err, loopfs.ErrUnavailable) || !strings.Contains(err.Error(), "skipped") {
		t.Fatalf("unavailable fs: %v", err)
	}
}

// mountsUnder lists the mount points below dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir) {
			out = append(out, f[1])
		}
	}
	return out
}

// TestRunOnLoopFS runs cells on a file system made for the run and checks
// that the mount is recorded and gone afterwards, after a normal end and
// after the run is cancelled in the middle of a cell (Ctrl-C).
func TestRunOnLoopFS(t *testing.T) {
	if err := loopfs.Check("ext4"); err != nil {
		t.Skipf("cannot make a loop-device file system here: %v", err)
	}
	e, err := Parse([]byte(`
name: fsrun
warmup: 100ms
duration: 400ms
interval: 100ms
settle: 1ms
engine: {segment_size: 4MiB, fs: ext4, fs_size: 512MiB, path: pwrite}
workload: {mode: closed, producers: 4, size: "fixed:1024"}
matrix:
  - {param: flush, values: [group]}
`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := t.TempDir()
	o, err := Run(context.Background(), e, Options{OutRoot: out, StoreRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != result.StatusOK || len(o.Cells) != 1 || o.Cells[0].Error != "" || o.Cells[0].Ops == 0 {
		t.Fatalf("status %s cells %+v", o.Status, o.Cells)
	}
	run, err := result.LoadRun(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(run.Manifest.Notes, "\n"), "mkfs.ext4") {
		t.Fatalf("manifest notes do not record the file system: %q", run.Manifest.Notes)
	}
	if m := mountsUnder(t, root); len(m) > 0 {
		t.Fatalf("mounts left after the run: %v", m)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("store root not cleaned: %v", ents)
	}

	e.Duration = Duration(30 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	o, err = Run(ctx, e, Options{OutRoot: out, StoreRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if o.Status != result.StatusInterrupted {
		t.Fatalf("status %s after cancel", o.Status)
	}
	if m := mountsUnder(t, root); len(m) > 0 {
		t.Fatalf("mounts left after a cancelled run: %v", m)
	}
}

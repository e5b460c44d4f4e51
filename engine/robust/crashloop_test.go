package robust

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"
)

// repoRoot is the module root (two levels above this package).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", wd, err)
	}
	return root
}

// TestCrashLoopScript runs scripts/crashloop.sh for two cycles (-n 2; -long:
// 12, every write path × flush policy): namesrv and broker as separate
// processes, network producer load, SIGKILL of the broker at a random
// moment, restart with the next write path, and the check that nothing
// acknowledged under sync/group is lost, nothing corrupt is served and the
// async log is a clean prefix. The script exits non-zero otherwise.
func TestCrashLoopScript(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the crash loop builds two binaries and runs processes")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skipf("bash not installed: %v", err)
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			t.Skipf("the go command is needed to build the binaries: %v", err)
		}
	}
	root := repoRoot(t)
	build := exec.Command(goBin, "build", "-o", t.TempDir(), "./cmd/brokerlab", "./cmd/crashcheck")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cmd/brokerlab or cmd/crashcheck does not build (their own tests report why): %v\n%s", err, out)
	}
	cycles := "2"
	if longRun() {
		cycles = "12"
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join(root, "scripts", "crashloop.sh"), "-n", cycles, "-d", work)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	t.Logf("crashloop.sh -n %s (%v):\n%s", cycles, time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		for _, log := range []string{"broker.log", "produce.log"} {
			if b, rerr := os.ReadFile(filepath.Join(work, log)); rerr == nil {
				t.Logf("%s:\n%s", log, tail(b, 40))
			}
		}
		t.Fatalf("crashloop.sh failed: %v", err)
	}
	m := regexp.MustCompile(`(?m)^cycles=(\d+) acknowledged=(\d+) lost=0 corrupt=0 async_lost=\d+$`).FindSubmatch(out.Bytes())
	if m == nil {
		t.Fatalf("crashloop.sh did not print the totals line with lost=0 corrupt=0")
	}
	if string(m[1]) != cycles || string(m[2]) == "0" {
		t.Fatalf("totals: cycles=%s acknowledged=%s", m[1], m[2])
	}
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

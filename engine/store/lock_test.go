package store

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// A child process that inherited the lock file's descriptor (as every child
// briefly does between fork and exec) must not keep the store locked after
// the store closes: this is what made TestFaultMatrix's reopen flaky with
// flock(2). The child here keeps the descriptor for its whole life, so the
// test fails deterministically with a lock that follows the open file
// description.
func TestLockNotHeldByForkedChild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no fork/exec descriptor inheritance to test on windows")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary to hold an inherited descriptor")
	}
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	s := openStore(t, cfg)
	inherited, err := os.Open(filepath.Join(cfg.Root, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sleep, "30")
	cmd.ExtraFiles = []*os.File{s.lock.f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill() // by PID
		_ = cmd.Wait()
	}()
	_ = inherited.Close()
	mustClose(t, s)

	s2, err := Open(cfg)
	if err != nil {
		t.Fatalf("reopen while a child holds an inherited descriptor: %v", err)
	}
	mustClose(t, s2)
}

// Another process that holds the record lock (here: this test's helper
// child) makes Open fail with ErrLocked.
func TestLockedByOtherProcess(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	// A second process takes the lock file through lockFile directly.
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperTry$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BROKERLAB_LOCK_TRY="+filepath.Join(cfg.Root, "lock"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}

// TestLockHelperTry runs only as TestLockedByOtherProcess's child: it must
// find the lock held.
func TestLockHelperTry(t *testing.T) {
	path := os.Getenv("BROKERLAB_LOCK_TRY")
	if path == "" {
		t.Skip("helper process for TestLockedByOtherProcess")
	}
	f, err := lockFile(path)
	if err == nil {
		f.Close()
		t.Fatal("another process's store lock was taken")
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("lockFile: %v, want ErrLocked", err)
	}
}

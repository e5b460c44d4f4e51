package compat_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
)

// childMasterEnv hands a child master its settings, "nsAddr|brokerName|storeDir".
const childMasterEnv = "BROKERLAB_COMPAT_CHILD_MASTER"

// TestHelperChildMaster is not a test: startChildMaster runs it in a child
// process (this test binary again) to have a SYNC_MASTER it can SIGKILL.
// It starts the master, prints "READY <addr>", prints "SLAVE_OK" once its
// slave (id 1) streams, and serves until its stdin closes (the parent
// closed it or died) or it is killed.
func TestHelperChildMaster(t *testing.T) {
	spec := os.Getenv(childMasterEnv)
	if spec == "" {
		t.Skip("runs only as startChildMaster's child process")
	}
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		t.Fatalf("%s=%q, want nsAddr|brokerName|storeDir", childMasterEnv, spec)
	}
	m := startHABrokerIn(t, parts[0], parts[1], broker.SyncMaster, 0, parts[2])
	fmt.Printf("READY %s\n", m.Addr())
	go func() {
		deadline := time.Now().Add(time.Minute)
		for !m.HAService().IsSlaveOK(1) {
			if time.Now().After(deadline) {
				fmt.Println("SLAVE_TIMEOUT")
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		fmt.Println("SLAVE_OK")
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// childBroker is a master broker in a child process.
type childBroker struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
	lines chan string   // the child's stdout, closed at its end
	done  chan struct{} // closed once the child has been waited for
}

// startChildMaster starts a SYNC_MASTER named name, registered with the
// name server at ns, in a child process over a store in a directory of
// the test's, and returns once it listens. The child is killed (SIGKILL,
// by its PID) and waited for at the end of the test if it still runs.
func startChildMaster(t *testing.T, ns, name string) *childBroker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChildMaster$", "-test.count=1", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), childMasterEnv+"="+ns+"|"+name+"|"+t.TempDir())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childBroker{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		_ = cmd.Wait() // after the last read, as os/exec requires
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	})
	line := c.waitLine("READY ", 30*time.Second)
	c.addr = strings.TrimPrefix(line, "READY ")
	return c
}

// waitLine returns the child's next stdout line starting with prefix,
// failing the test if the child ends or none comes within limit.
func (c *childBroker) waitLine(prefix string, limit time.Duration) string {
	c.t.Helper()
	timeout := time.After(limit)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("child master (pid %d) exited before printing %q", c.cmd.Process.Pid, prefix)
			}
			if strings.HasPrefix(l, prefix) {
				return l
			}
			if l == "SLAVE_TIMEOUT" {
				c.t.Fatalf("child master (pid %d): its slave did not stream within a minute", c.cmd.Process.Pid)
			}
		case <-timeout:
			c.t.Fatalf("child master (pid %d) did not print %q within %v", c.cmd.Process.Pid, prefix, limit)
		}
	}
}

// kill sends SIGKILL to the child by its PID (no shutdown: the broker
// neither unregisters from the name server nor closes its connections
// itself) and waits until it is gone.
func (c *childBroker) kill() {
	c.t.Helper()
	if err := syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		c.t.Fatalf("kill -KILL %d: %v", c.cmd.Process.Pid, err)
	}
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.t.Fatalf("child master (pid %d) still runs 30 s after SIGKILL", c.cmd.Process.Pid)
	}
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		c.t.Fatalf("child master ended with %v, not by SIGKILL", c.cmd.ProcessState)
	}
}

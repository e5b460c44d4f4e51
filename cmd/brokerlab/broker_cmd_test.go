package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

const procLimit = 30 * time.Second

// cliBinary returns this command built once per test binary into a
// directory TestMain removes (every process test shares the build).
func cliBinary(t *testing.T) string {
	t.Helper()
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "brokerlab-cli-")
		if err != nil {
			cli.err = err
			return
		}
		cli.dir = dir
		bin := filepath.Join(dir, "brokerlab")
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
			cli.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		cli.bin = bin
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.bin
}

// cli is the shared build of cliBinary.
var cli struct {
	once     sync.Once
	dir, bin string
	err      error
}

// proc is a running brokerlab process whose stderr is scanned for its
// listen address.
type proc struct {
	cmd    *exec.Cmd
	addr   chan string
	mu     sync.Mutex
	stderr strings.Builder
	done   chan error
}

var addrRE = regexp.MustCompile(`msg="(?:name server started|broker started)".* addr=([0-9.]+:[0-9]+)`)

func start(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), addr: make(chan string, 1), done: make(chan error, 1)}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if m := addrRE.FindStringSubmatch(line); m != nil {
				select {
				case p.addr <- m[1]:
				default:
				}
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) listenAddr(t *testing.T) string {
	t.Helper()
	select {
	case a := <-p.addr:
		return a
	case err := <-p.done:
		t.Fatalf("process exited before listening (%v):\n%s", err, p.log())
	case <-time.After(procLimit):
		t.Fatalf("process did not report its address:\n%s", p.log())
	}
	return ""
}

// stop sends sig and returns the exit code.
func (p *proc) stop(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	return p.wait(t)
}

func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(procLimit):
		t.Fatalf("process did not exit:\n%s", p.log())
	}
	return -1
}

func call(t *testing.T, c *remoting.Client, addr string, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := c.InvokeSync(ctx, addr, req)
	if err != nil {
		t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func TestNamesrvAndBrokerProcesses(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	storeDir := t.TempDir()
	ns := start(t, bin, "namesrv", "--listen", "127.0.0.1:0")
	nsAddr := ns.listenAddr(t)
	brokerArgs := []string{"broker", "--namesrv", nsAddr, "--listen", "127.0.0.1:0", "--store", storeDir,
		"--write-path", "pwrite", "--flush", "group", "--segment-size", "8MiB", "--name", "broker-x", "--cluster", "c1"}
	br := start(t, bin, brokerArgs...)
	addr := br.listenAddr(t)

	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	create := remoting.ExtFields{"topic": "CliT", "readQueueNums": "2", "writeQueueNums": "2", "perm": "6"}
	if resp := call(t, c, addr, protocol.ReqUpdateAndCreateTopic, create, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %v", resp)
	}
	deadline := time.Now().Add(procLimit)
	for {
		rd, err := namesrv.GetRouteInfo(context.Background(), c, nsAddr, "CliT")
		if err == nil && rd.BrokerDatas[0].BrokerName == "broker-x" && rd.BrokerDatas[0].Cluster == "c1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("route never appeared: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	h := protocol.SendMessageHeader{ProducerGroup: "pg", Topic: "CliT", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 1, BornTimestamp: time.Now().UnixMilli()}
	if resp := call(t, c, addr, protocol.ReqSendMessageV2, h.ExtFields(true), []byte("survives")); resp.Code != protocol.RespSuccess {
		t.Fatalf("send: %v", resp)
	}

	if code := br.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("broker exit code %d after SIGTERM:\n%s", code, br.log())
	}
	if _, err := os.Stat(store.AbortPath(storeDir)); !os.IsNotExist(err) {
		t.Fatalf("abort file left after SIGTERM (%v)", err)
	}

	// A restarted broker serves the acknowledged message.
	br = start(t, bin, brokerArgs...)
	addr = br.listenAddr(t)
	pull := remoting.ExtFields{"consumerGroup": "g", "topic": "CliT", "queueId": "1", "queueOffset": "0", "maxMsgNums": "32",
		"sysFlag": "0", "commitOffset": "-1", "suspendTimeoutMillis": "0"}
	resp := call(t, c, addr, protocol.ReqPullMessage, pull, nil)
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("pull after restart: %v", resp)
	}
	if rec, err := record.Decode(resp.Body, true); err != nil || string(rec.Body) != "survives" {
		t.Fatalf("pulled %q (%v)", rec.Body, err)
	}
	if code := br.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("broker exit code %d after SIGINT:\n%s", code, br.log())
	}
	if code := ns.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("namesrv exit code %d:\n%s", code, ns.log())
	}
}

func TestBadInvocationsFail(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "broker.yaml")
	if err := os.WriteFile(badConfig, []byte("name: b\nnoSuchKey: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"broker", "--nope"}, "unknown flag"},
		{"bad write path", []string{"broker", "--store", store, "--write-path", "bogus"}, "--write-path"},
		{"bad flush", []string{"broker", "--store", store, "--flush", "sometimes"}, "--flush"},
		{"bad segment size", []string{"broker", "--store", store, "--segment-size", "big"}, "--segment-size"},
		{"no store", []string{"broker"}, "--store"},
		{"store is a file", []string{"broker", "--namesrv", "", "--listen", "127.0.0.1:0", "--store", notDir}, "cannot open the message store"},
		{"busy broker port", []string{"broker", "--namesrv", "", "--listen", busy.Addr().String(), "--store", store}, "address already in use"},
		{"busy namesrv port", []string{"namesrv", "--listen", busy.Addr().String()}, "address already in use"},
		{"unknown config key", []string{"broker", "--config", badConfig, "--store", store}, "noSuchKey"},
		{"missing config file", []string{"broker", "--config", filepath.Join(store, "nope.yaml"), "--store", store}, "--config"},
		{"bad log level", []string{"namesrv", "--log-level", "loud"}, "--log-level"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), procLimit)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, c.args...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit %v, want a failure; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("output does not mention %q:\n%s", c.want, out)
			}
		})
	}
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

const aclTestFile = `accounts:
  - accessKey: cliAdmin01
    secretKey: cliSecret01
    admin: true
`

// TestBrokerACLFlag runs `brokerlab broker --acl FILE`: unsigned requests
// are refused NO_PERMISSION, the admin's signed ones served, and an edit of
// the file (a global white address for loopback) applies without a restart.
// A file that does not compile keeps the broker from starting.
func TestBrokerACLFlag(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "plain_acl.yml")
	if err := os.WriteFile(file, []byte(aclTestFile), 0o600); err != nil {
		t.Fatal(err)
	}
	br := start(t, bin, "broker", "--namesrv", "", "--listen", "127.0.0.1:0", "--store", filepath.Join(dir, "store"),
		"--acl", file, "--acl-reload-interval", "50ms")
	addr := br.listenAddr(t)
	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	create := func(topic string, sign bool) *remoting.Command {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := remoting.NewRequest(protocol.ReqUpdateAndCreateTopic,
			remoting.ExtFields{"topic": topic, "readQueueNums": "1", "writeQueueNums": "1", "perm": "6"})
		if sign {
			acl.Sign(req.Ext(), nil, req.Version, "cliAdmin01", "cliSecret01", "")
		}
		resp, err := c.InvokeSync(ctx, addr, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := create("AclCliT", false); resp.Code != protocol.RespNoPermission || !strings.Contains(resp.Remark, "carries no AccessKey") {
		t.Fatalf("unsigned create: %v", resp)
	}
	if resp := create("AclCliT", true); resp.Code != protocol.RespSuccess {
		t.Fatalf("admin create: %v", resp)
	}
	// brokerlab admin signs with --access-key/--secret-key; unsigned it is refused.
	adm := start(t, bin, "admin", "updateTopic", "-b", addr, "-t", "AclCliAdmin", "--access-key", "cliAdmin01", "--secret-key", "cliSecret01")
	if code := adm.wait(t); code != 0 {
		t.Fatalf("signed admin updateTopic: exit code %d:\n%s", code, adm.log())
	}
	adm = start(t, bin, "admin", "updateTopic", "-b", addr, "-t", "AclCliAdmin2")
	if code := adm.wait(t); code == 0 || !strings.Contains(adm.log(), "AccessKey") {
		t.Fatalf("unsigned admin updateTopic: exit code %d:\n%s", code, adm.log())
	}
	if err := os.WriteFile(file, []byte("globalWhiteRemoteAddresses: [127.0.0.1]\n"+aclTestFile), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(procLimit)
	for create("AclCliT2", false).Code != protocol.RespSuccess {
		if time.Now().After(deadline) {
			t.Fatalf("the edited ACL file was not applied:\n%s", br.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The line is logged after the new rules apply, and crosses a pipe.
	for !strings.Contains(br.log(), "acl file reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload logged:\n%s", br.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code := br.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("broker exit code %d:\n%s", code, br.log())
	}

	if err := os.WriteFile(file, []byte("accounts:\n  - accessKey: short\n    secretKey: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := start(t, bin, "broker", "--namesrv", "", "--listen", "127.0.0.1:0", "--store", filepath.Join(dir, "store"), "--acl", file)
	if code := bad.wait(t); code == 0 || !strings.Contains(bad.log(), "longer than 6 characters") {
		t.Fatalf("a bad --acl file: exit code %d:\n%s", code, bad.log())
	}
}

func TestACLCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(good, []byte("globalWhiteRemoteAddresses: [10.0.0.*]\n"+aclTestFile+
		"  - accessKey: cliUser001\n    secretKey: cliSecret02\n    topicPerms: [T=PUB|SUB]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(aclTestFile+"    topicPerms: [T=WRITE]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(file string) (string, error) {
		root := newRoot()
		var out strings.Builder
		root.SetOut(&out)
		root.SetArgs([]string{"acl", "check", file})
		err := root.Execute()
		return out.String(), err
	}
	out, err := run(good)
	if err != nil || !strings.Contains(out, "ok, 2 accounts, global white addresses: 10.0.0.*") ||
		!strings.Contains(out, "cliUser001") || !strings.Contains(out, "T=PUB|SUB") {
		t.Fatalf("good file: %v\n%s", err, out)
	}
	if _, err := run(bad); err == nil || !strings.Contains(err.Error(), `"WRITE"`) {
		t.Fatalf("bad file: %v", err)
	}
}

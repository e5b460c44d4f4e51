package main

import (
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestPopStateSurvivesKill9: the broker as a process; ten messages popped
// over POP_MESSAGE with a 2 s invisible time, the even ones acked (each
// ack answered SUCCESS), then SIGKILL. A new broker process on the same
// store gives back every un-acked message once its invisible time is
// over, and none whose ack was answered: the acks and checkpoints live in
// the revive topic, which a kill -9 leaves in the page cache.
func TestPopStateSurvivesKill9(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	ns := start(t, bin, "namesrv", "--listen", "127.0.0.1:0")
	nsAddr := ns.listenAddr(t)
	dir := t.TempDir()
	args := []string{"broker", "--store", dir, "--namesrv", nsAddr, "--listen", "127.0.0.1:0", "--flush", "async",
		"--segment-size", "1MiB", "--broker-name", "broker-p", "--cluster", "cp"}
	b := start(t, bin, args...)
	addr := b.listenAddr(t)
	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()

	create := remoting.ExtFields{"topic": "PopKill", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}
	if resp := call(t, c, addr, protocol.ReqUpdateAndCreateTopic, create, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %d %s", resp.Code, resp.Remark)
	}
	const n = 10
	for i := range n {
		h := protocol.SendMessageHeader{ProducerGroup: "pg", Topic: "PopKill", DefaultTopic: "TBW102", DefaultTopicQueueNums: 1,
			BornTimestamp: time.Now().UnixMilli()}
		if resp := call(t, c, addr, protocol.ReqSendMessageV2, h.ExtFields(true), []byte(strconv.Itoa(i))); resp.Code != protocol.RespSuccess {
			t.Fatalf("send %d: %d %s", i, resp.Code, resp.Remark)
		}
	}
	popHeader := protocol.PopMessageRequestHeader{ConsumerGroup: "g", Topic: "PopKill", QueueID: -1, MaxMsgNums: 32,
		InvisibleTime: 2000, PollTime: 1000, InitMode: protocol.ConsumeInitMin}
	// popUntil pops until it holds want messages (bounded by procLimit).
	popUntil := func(addr string, want int) []record.Record {
		t.Helper()
		var got []record.Record
		deadline := time.Now().Add(procLimit)
		for len(got) < want {
			if time.Now().After(deadline) {
				t.Fatalf("popped %d of %d", len(got), want)
			}
			popHeader.BornTime = time.Now().UnixMilli()
			resp := call(t, c, addr, protocol.ReqPopMessage, popHeader.Fields(), nil)
			switch resp.Code {
			case protocol.RespSuccess:
				got = append(got, decodeRecords(t, resp.Body)...)
			case protocol.RespPullNotFound, protocol.RespPollingTimeout:
			default:
				t.Fatalf("pop: %d %s", resp.Code, resp.Remark)
			}
		}
		return got
	}
	for _, r := range popUntil(addr, n) {
		i, err := strconv.Atoi(string(r.Body))
		if err != nil || i%2 != 0 {
			continue
		}
		ck, ok := r.Property(protocol.PropertyPopCK)
		if !ok {
			t.Fatalf("message %s without POP_CK", r.Body)
		}
		hd, err := pop.ParseHandle(string(ck))
		if err != nil {
			t.Fatal(err)
		}
		ack := protocol.AckMessageRequestHeader{ConsumerGroup: "g", Topic: "PopKill", QueueID: hd.QueueID, ExtraInfo: string(ck), Offset: hd.Offset}
		if resp := call(t, c, addr, protocol.ReqAckMessage, ack.Fields(), nil); resp.Code != protocol.RespSuccess {
			t.Fatalf("ack %d: %d %s", i, resp.Code, resp.Remark)
		}
	}
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.wait(t)

	b2 := start(t, bin, args...)
	addr2 := b2.listenAddr(t)
	// The un-acked five come back (as the retry topic's); an acked one
	// would come back with them, at the same revive time.
	var again []string
	for _, r := range popUntil(addr2, n/2) {
		again = append(again, string(r.Body))
	}
	popHeader.BornTime = time.Now().UnixMilli()
	if resp := call(t, c, addr2, protocol.ReqPopMessage, popHeader.Fields(), nil); resp.Code == protocol.RespSuccess {
		for _, r := range decodeRecords(t, resp.Body) {
			again = append(again, string(r.Body))
		}
	}
	sort.Strings(again)
	if got := strings.Join(again, ","); got != "1,3,5,7,9" {
		t.Fatalf("after kill -9 redelivered %s, want 1,3,5,7,9\nbroker log:\n%s", got, b2.log())
	}
}

// decodeRecords splits a POP/PULL body into its records.
func decodeRecords(t *testing.T, body []byte) []record.Record {
	t.Helper()
	out, err := record.DecodeAll(body, true)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

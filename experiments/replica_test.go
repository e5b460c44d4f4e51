package experiments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/workloads"
)

// TestReplicationParams: replication and rtt are matrix parameters;
// replication needs the loopback broker.
func TestReplicationParams(t *testing.T) {
	if _, err := Parse([]byte(`
name: r
engine: {transport: inproc}
matrix:
  - {param: replication, values: [sync]}
`)); err == nil || !strings.Contains(err.Error(), "replication") {
		t.Fatalf("replication in-process accepted: %v", err)
	}
	for _, bad := range []string{"sometimes", ""} {
		if err := validateEngine(Engine{Path: "mmap", Flush: "async", SegmentSize: 1 << 20, Transport: "loopback", Replication: bad}); err == nil {
			t.Errorf("replication %q accepted", bad)
		}
	}
	e := Experiment{}
	if err := e.set("rtt", "-1ms"); err == nil {
		t.Fatal("negative rtt accepted")
	}
	if err := e.set("rtt", "200us"); err != nil || e.Engine.RTT.D() != 200*time.Microsecond {
		t.Fatalf("rtt 200us: %v %v", e.Engine.RTT, err)
	}
}

// TestBrokerSystemWithSyncReplica: a loopback broker with replication sync
// through a 2 ms link acknowledges a send only once its slave holds it.
func TestBrokerSystemWithSyncReplica(t *testing.T) {
	exp, err := Parse([]byte(`
name: r
engine: {transport: loopback, replication: sync, rtt: 2ms, segment_size: 1MiB}
workload: {mode: closed, producers: 1, size: "fixed:100"}
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := openBrokerSystem(*exp, t.TempDir(), sysHooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic := topicNames(*exp)[0]
	for i := range 5 {
		t0 := time.Now()
		if err := s.Driver().Send(context.Background(), &workloads.Message{Topic: topic, Body: []byte("replicated")}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if d := time.Since(t0); d < 2*time.Millisecond {
			t.Fatalf("a SYNC send through a 2 ms link took %v", d)
		}
		if lag := s.rep.lagBytes(s.st); lag != 0 {
			t.Fatalf("acknowledged send %d with the slave %d bytes behind", i, lag)
		}
	}
	time.Sleep(3 * lagEvery)
	at := s.Stats().ReplicationLagAt
	if at == nil {
		t.Fatal("no replication lag series")
	}
	if lag, ok := at(time.Now()); !ok || lag != 0 {
		t.Fatalf("lag sampled after the last acknowledged send: %d %v", lag, ok)
	}
	if _, ok := at(time.Now().Add(-time.Hour)); ok {
		t.Fatal("a lag sample before the replica started")
	}
}

package broker_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// routeOf asks the name server at addr for topic's route over the wire.
func routeOf(t *testing.T, c *remoting.Client, addr, topic string) (*protocol.TopicRouteData, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return namesrv.GetRouteInfo(ctx, c, addr, topic)
}

func createExt(topic string, queues int) remoting.ExtFields {
	return remoting.ExtFields{"topic": topic, "readQueueNums": strconv.Itoa(queues), "writeQueueNums": strconv.Itoa(queues), "perm": "6"}
}

// TestCreateThenRouteNeverMisses: in a tight loop, a topic created with
// UPDATE_AND_CREATE_TOPIC is routable the moment the create is answered,
// on every name server; a broker delete followed by the name servers'
// delete leaves no route; and a topic created by its first send is
// routable when the send is answered.
func TestCreateThenRouteNeverMisses(t *testing.T) {
	ns2 := startNamesrv(t)
	e := startEnv(t, func(c *broker.Config) { c.NamesrvAddrs = append(c.NamesrvAddrs, ns2.Addr()) })
	nss := []string{e.ns.Addr(), ns2.Addr()}
	const n = 120
	for i := range n {
		topic := "Loop" + strconv.Itoa(i)
		wantCode(t, "create "+topic, e.call(protocol.ReqUpdateAndCreateTopic, createExt(topic, 2), nil), protocol.RespSuccess)
		for _, ns := range nss {
			rd, err := routeOf(t, e.client, ns, topic)
			if err != nil {
				t.Fatalf("iteration %d: route of %s from %s right after the create: %v", i, topic, ns, err)
			}
			if len(rd.BrokerDatas) != 1 || rd.BrokerDatas[0].BrokerAddrs[protocol.MasterID] != e.b.Addr() {
				t.Fatalf("iteration %d: route %+v", i, rd)
			}
		}
		// Delete as the Go admin does: the broker, then every name server.
		wantCode(t, "delete in broker", e.call(protocol.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": topic}, nil), protocol.RespSuccess)
		for _, ns := range nss {
			resp := callWith(t, e.client, ns, protocol.ReqDeleteTopicInNamesrv, remoting.ExtFields{"topic": topic}, nil)
			wantCode(t, "delete in namesrv", resp, protocol.RespSuccess)
			if _, err := routeOf(t, e.client, ns, topic); !errors.Is(err, namesrv.ErrTopicNotExist) {
				t.Fatalf("iteration %d: route of %s after the delete: %v", i, topic, err)
			}
		}
	}
	for i := range n / 2 {
		topic := "Auto" + strconv.Itoa(i)
		e.mustSend(topic, 0, "first", "")
		for _, ns := range nss {
			if _, err := routeOf(t, e.client, ns, topic); err != nil {
				t.Fatalf("iteration %d: route of auto-created %s from %s: %v", i, topic, ns, err)
			}
		}
	}
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestCreateWithNamesrvDown: with one of two name servers down, a create
// (admin or first send) is answered SYSTEM_ERROR naming that name server
// within the register timeout; the broker keeps the topic and the live
// name server has it; once the dead one comes back on its address, the
// periodic registration gives it the route.
func TestCreateWithNamesrvDown(t *testing.T) {
	down := deadAddr(t)
	const timeout = 500 * time.Millisecond
	e := startEnv(t, func(c *broker.Config) {
		c.NamesrvAddrs = append(c.NamesrvAddrs, down)
		c.RegisterTimeout = timeout
		c.RegisterInterval = 50 * time.Millisecond
	})
	start := time.Now()
	resp := e.call(protocol.ReqUpdateAndCreateTopic, createExt("Down", 2), nil)
	took := time.Since(start)
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, down) || !strings.Contains(resp.Remark, "Down") {
		t.Fatalf("create with %s down: %s %q", down, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	if took > timeout+5*time.Second {
		t.Fatalf("create answered after %v, register timeout %v", took, timeout)
	}
	if _, err := routeOf(t, e.client, e.ns.Addr(), "Down"); err != nil {
		t.Fatalf("the live name server lacks the route: %v", err)
	}
	if _, ok := e.b.Topics().Configs()["Down"]; !ok {
		t.Fatal("the broker dropped the topic it could not register everywhere")
	}
	// A first send that creates a topic says the same.
	h := sendHeader("DownAuto", 0, "")
	resp = e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte("x"))
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, down) {
		t.Fatalf("first send with %s down: %s %q", down, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	// The name server comes back on its address: periodic registration repairs it.
	cfg := namesrv.DefaultConfig()
	cfg.Remoting.Addr = down
	cfg.Logger = quiet
	revived := namesrv.New(cfg)
	if err := revived.Start(context.Background()); err != nil {
		t.Skipf("cannot listen on %s again: %v", down, err)
	}
	t.Cleanup(func() { _ = revived.Shutdown(context.Background()) })
	eventually(t, "periodic registration to repair the revived name server", func() bool {
		_, ok1 := revived.TopicRoute("Down")
		_, ok2 := revived.TopicRoute("DownAuto")
		return ok1 && ok2
	})
	// And sends to the topic succeed again.
	e.mustSend("DownAuto", 0, "y", "")
}

// TestCreateWithNamesrvHung: a name server that accepts and never answers
// makes the create answer SYSTEM_ERROR naming it once the register timeout
// passes.
func TestCreateWithNamesrvHung(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	const timeout = 300 * time.Millisecond
	e := startEnv(t, func(c *broker.Config) {
		c.NamesrvAddrs = append(c.NamesrvAddrs, ln.Addr().String())
		c.RegisterTimeout = timeout
	})
	start := time.Now()
	resp := e.call(protocol.ReqUpdateAndCreateTopic, createExt("Hung", 1), nil)
	took := time.Since(start)
	if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, ln.Addr().String()) || !strings.Contains(resp.Remark, "timed out") {
		t.Fatalf("create with a hung name server: %s %q", protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	if took < timeout || took > timeout+5*time.Second {
		t.Fatalf("answered after %v, register timeout %v", took, timeout)
	}
}

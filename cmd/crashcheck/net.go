package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

func newClient() *remoting.Client {
	cfg := remoting.DefaultClientConfig()
	cfg.DialTimeout = 2 * time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return remoting.NewClient(cfg)
}

// call sends one request and waits at most timeout for the reply.
func call(cl *remoting.Client, addr string, timeout time.Duration, code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	return cl.InvokeSync(ctx, addr, req)
}

// freePort prints a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	return nil
}

// runWait polls addr until it answers: a broker must answer GET_MAX_OFFSET
// of TBW102 with SUCCESS (its store is open); a name server any request.
func runWait(args []string) error {
	fs := flag.NewFlagSet("wait", flag.ExitOnError)
	addr := fs.String("addr", "", "address to wait for (127.0.0.1:port)")
	isBroker := fs.Bool("broker", false, "wait for a broker with its store open")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	fs.Parse(args)
	if *addr == "" {
		return errors.New("wait: -addr is required")
	}
	cl := newClient()
	defer cl.Close()
	deadline := time.Now().Add(*timeout)
	var last error
	for time.Now().Before(deadline) {
		var resp *remoting.Command
		var err error
		if *isBroker {
			resp, err = call(cl, *addr, time.Second, protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": protocol.DefaultTopic, "queueId": "0"}, nil)
		} else {
			resp, err = call(cl, *addr, time.Second, protocol.ReqGetBrokerClusterInfo, nil, nil)
		}
		switch {
		case err != nil:
			last = err
			cl.CloseConn(*addr)
		case *isBroker && resp.Code != protocol.RespSuccess:
			last = fmt.Errorf("GET_MAX_OFFSET answered %s %q", protocol.ResponseCodeName(resp.Code), resp.Remark)
		default:
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("wait: %s did not answer within %v: %v", *addr, *timeout, last)
}

// createTopic creates topic with queues read/write queues (idempotent).
func createTopic(cl *remoting.Client, addr, topic string, queues int) error {
	resp, err := call(cl, addr, 5*time.Second, protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
		"topic": topic, "defaultTopic": protocol.DefaultTopic, "readQueueNums": strconv.Itoa(queues),
		"writeQueueNums": strconv.Itoa(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
		"topicSysFlag": "0", "order": "false",
	}, nil)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("create topic %s: %s %q", topic, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return nil
}

// queueOffset asks a broker for GET_MAX_OFFSET or GET_MIN_OFFSET.
func queueOffset(cl *remoting.Client, addr string, code int32, topic string, queueID int32) (int64, error) {
	ext := remoting.ExtFields{"topic": topic}
	ext.SetInt32("queueId", queueID)
	resp, err := call(cl, addr, 5*time.Second, code, ext, nil)
	if err != nil {
		return 0, err
	}
	if resp.Code != protocol.RespSuccess {
		return 0, fmt.Errorf("%s %s/%d: %s %q", protocol.RequestCodeName(code), topic, queueID, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return resp.ExtFields.Int64("offset")
}

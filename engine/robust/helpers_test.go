package robust

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/consumequeue"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/index"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

var long = flag.Bool("long", false, "run the heavier reliability variants")

func longRun() bool { return *long || os.Getenv("BROKERLAB_LONG") != "" }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// callTimeout bounds every request a test makes: a guard against a hang,
// not a latency assertion. The package's tests run in parallel, each with a
// broker of its own, under -race on two cores; a 4 MiB send there has been
// seen to take over 10 s, so the guard is 30 s.
const callTimeout = 30 * time.Second

// brokerEnv is a standalone broker (no name server) over a real store in a
// temporary directory, and a client.
type brokerEnv struct {
	t      testing.TB
	b      *broker.Broker
	bcfg   broker.Config
	scfg   store.Config
	client *remoting.Client
}

// testBrokerConfig is broker.DefaultConfig on 127.0.0.1:0, quiet, with
// short long-polling caps and a long send-queue wait.
func testBrokerConfig() broker.Config {
	cfg := broker.DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	// A restart comes back on the same listen port (start); its HA listener
	// stays ephemeral, not listen port + 1, which another test may hold.
	cfg.HA.ListenAddr = "127.0.0.1:0"
	cfg.Logger = quiet
	cfg.RegisterInterval = time.Hour
	cfg.MaxSuspend = 100 * time.Millisecond
	cfg.ShortPollingTime = 20 * time.Millisecond
	// Sends waiting over SendQueueMaxWait (200 ms) for a worker are
	// answered SYSTEM_BUSY; on a loaded 2-core machine under -race that
	// flow control would hit the sends these tests check.
	cfg.SendQueueMaxWait = 10 * time.Second
	cfg.Remoting.Logger = quiet
	return cfg
}

// testStoreConfig is a small store (4 MiB segments, small consume-queue and
// index files, no cleaner) under dir.
func testStoreConfig(dir string, path iopath.Kind, pol flush.Kind) store.Config {
	cfg := store.DefaultConfig(dir)
	cfg.CommitLog.Path = path
	cfg.CommitLog.Flush = flush.DefaultConfig(pol)
	cfg.CommitLog.Flush.Interval = 5 * time.Millisecond
	cfg.CommitLog.SegmentSize = 4 << 20
	cfg.CommitLog.IO.Pool = nil
	cfg.ConsumeQueue = consumequeue.Config{UnitsPerFile: 2048}
	cfg.Index = index.Config{MaxHashSlots: 1024, MaxIndexNum: 8192, MaxQueryNum: 64}
	cfg.ReadCacheBytes = 4 << 20
	cfg.CleanInterval = 0
	cfg.Logger = quiet
	cfg.DiskUsage = func(string) (float64, error) { return 0.10, nil }
	return cfg
}

// startBroker starts a broker over a fresh store; mutate may change both
// configs before the start.
func startBroker(t testing.TB, mutate func(*broker.Config, *store.Config)) *brokerEnv {
	t.Helper()
	bcfg := testBrokerConfig()
	scfg := testStoreConfig(t.TempDir(), iopath.Mmap, flush.Async)
	if mutate != nil {
		mutate(&bcfg, &scfg)
	}
	e := &brokerEnv{t: t, bcfg: bcfg, scfg: scfg}
	e.start()
	e.client = newClient(t)
	return e
}

// start starts a broker with e's configs (again, after stop).
func (e *brokerEnv) start() {
	e.t.Helper()
	b, err := broker.New(e.bcfg, broker.OpenStore(e.scfg, e.bcfg.DelayLevels))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		e.t.Fatalf("start broker: %v", err)
	}
	e.b = b
	e.bcfg.ListenAddr = b.Addr() // a restart comes back on the same port
	e.t.Cleanup(func() { e.stop() })
}

// stop shuts the broker down (idempotent); it returns Shutdown's error.
func (e *brokerEnv) stop() error {
	if e.b == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := e.b.Shutdown(ctx)
	e.b = nil
	if e.client != nil {
		e.client.Close()
		e.client = newClient(e.t)
	}
	return err
}

func (e *brokerEnv) addr() string { return e.b.Addr() }

func newClient(t testing.TB) *remoting.Client {
	cfg := remoting.DefaultClientConfig()
	cfg.Logger = quiet
	cfg.DialTimeout = 5 * time.Second
	c := remoting.NewClient(cfg)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// call sends one request and fails the test on a transport error.
func (e *brokerEnv) call(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	e.t.Helper()
	resp, err := invoke(e.client, e.addr(), code, ext, body)
	if err != nil {
		e.t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	return resp
}

func invoke(c *remoting.Client, addr string, code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	return c.InvokeSync(ctx, addr, req)
}

func wantCode(t testing.TB, what string, resp *remoting.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("%s: %s (%q), want %s", what, protocol.ResponseCodeName(resp.Code), resp.Remark, protocol.ResponseCodeName(code))
	}
}

func (e *brokerEnv) createTopic(topic string, queues int) {
	e.t.Helper()
	resp := e.call(protocol.ReqUpdateAndCreateTopic, remoting.ExtFields{
		"topic": topic, "defaultTopic": protocol.DefaultTopic, "readQueueNums": strconv.Itoa(queues),
		"writeQueueNums": strconv.Itoa(queues), "perm": "6", "topicFilterType": "SINGLE_TAG",
		"topicSysFlag": "0", "order": "false",
	}, nil)
	wantCode(e.t, "create topic "+topic, resp, protocol.RespSuccess)
}

// sendExt is a SEND_MESSAGE_V2 header (short names).
func sendExt(topic string, queueID int32, props string) remoting.ExtFields {
	return protocol.SendMessageHeader{
		ProducerGroup: "robust", Topic: topic, DefaultTopic: protocol.DefaultTopic, DefaultTopicQueueNums: 8,
		QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Properties: props,
	}.ExtFields(true)
}

func (e *brokerEnv) send(topic string, queueID int32, props string, body []byte) *remoting.Command {
	e.t.Helper()
	return e.call(protocol.ReqSendMessageV2, sendExt(topic, queueID, props), body)
}

func pullExt(group, topic string, queueID int32, offset int64, maxNums int32, sysFlag int32, suspendMs int64) remoting.ExtFields {
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic, "commitOffset": "-1", "subscription": "*",
		"subVersion": "0", "expressionType": "TAG"}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("queueOffset", offset)
	ext.SetInt32("maxMsgNums", maxNums)
	ext.SetInt32("sysFlag", sysFlag)
	ext.SetInt64("suspendTimeoutMillis", suspendMs)
	return ext
}

// pulled is one record a pull returned.
type pulled struct {
	offset int64
	body   []byte
	props  string
}

// maxOffset waits until queue q of topic holds at least want messages
// (dispatch is asynchronous) and returns its max offset.
func (e *brokerEnv) maxOffset(topic string, q int32, want int64) int64 {
	e.t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		resp := e.call(protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": topic, "queueId": strconv.Itoa(int(q))}, nil)
		wantCode(e.t, "max offset", resp, protocol.RespSuccess)
		off, err := resp.ExtFields.Int64("offset")
		if err != nil {
			e.t.Fatal(err)
		}
		if off >= want {
			return off
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s/%d: max offset %d, want at least %d", topic, q, off, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pullQueue reads queue q of topic, once it holds at least want messages,
// from offset 0 to its max offset through PULL_MESSAGE; every record must
// pass its CRC and carry the next offset.
func (e *brokerEnv) pullQueue(c *remoting.Client, topic string, q int32, want int64) []pulled {
	e.t.Helper()
	maxOff := e.maxOffset(topic, q, want)
	var out []pulled
	for off, guard := int64(0), 0; off < maxOff; guard++ {
		if guard > int(maxOff)+100 {
			e.t.Fatalf("pull of %s/%d does not advance at %d", topic, q, off)
		}
		resp, err := invoke(c, e.addr(), protocol.ReqPullMessage, pullExt("robust", topic, q, off, 32, 0, 0), nil)
		if err != nil {
			e.t.Fatalf("pull %s/%d@%d: %v", topic, q, off, err)
		}
		wantCode(e.t, "pull", resp, protocol.RespSuccess)
		for body := resp.Body; len(body) > 0; {
			rec, err := record.Decode(body, true)
			if err != nil {
				e.t.Fatalf("pulled record at %s/%d@%d fails its check: %v", topic, q, off, err)
			}
			if rec.QueueOffset != off {
				e.t.Fatalf("pull %s/%d: record with offset %d, want %d", topic, q, rec.QueueOffset, off)
			}
			out = append(out, pulled{offset: off, body: append([]byte(nil), rec.Body...), props: string(rec.Properties)})
			body = body[rec.TotalSize:]
			off++
		}
	}
	return out
}

// raiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit and
// returns the soft limit in effect.
func raiseFileLimit(t testing.TB) uint64 {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur < lim.Max {
		old := lim.Cur
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Logf("cannot raise RLIMIT_NOFILE from %d to %d: %v", old, lim.Max, err)
			lim.Cur = old
		}
	}
	return lim.Cur
}

// invokeWithin is invoke with its own timeout.
func invokeWithin(c *remoting.Client, addr string, timeout time.Duration, code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	return c.InvokeSync(ctx, addr, req)
}

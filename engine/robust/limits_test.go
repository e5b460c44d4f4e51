package robust

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// Limit tests (issue 7): every limit is accepted exactly at its value and
// refused one past it with the documented behaviour. GUARANTEES.md lists
// them ("Limits").

// frameOf returns the JSON frame of req padded with body bytes so that the
// whole frame (length field included) is exactly size bytes.
func frameOf(t *testing.T, req *remoting.Command, size int) []byte {
	t.Helper()
	req.Body = nil
	base, err := remoting.AppendFrame(nil, req, remoting.SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if size < len(base) {
		t.Fatalf("frame of %d bytes cannot hold the %d-byte header", size, len(base))
	}
	req.Body = make([]byte, size-len(base))
	for i := range req.Body {
		req.Body[i] = 'a' + byte(i%26)
	}
	f, err := remoting.AppendFrame(nil, req, remoting.SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != size {
		t.Fatalf("frame is %d bytes, want %d", len(f), size)
	}
	return f
}

// dialRaw opens a plain TCP connection to addr.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one frame from c (deadline 10 s).
func readResponse(c net.Conn) (*remoting.Command, error) {
	_ = c.SetReadDeadline(time.Now().Add(callTimeout))
	return remoting.ReadFrame(c, 0)
}

// expectClosed waits until the server closes c (a read returns EOF or a
// reset) without answering.
func expectClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(callTimeout))
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	switch {
	case n > 0:
		t.Fatalf("%s: the server answered instead of closing the connection", what)
	case err == nil, errors.As(err, &ne) && ne.Timeout():
		t.Fatalf("%s: connection still open after %v (%v)", what, callTimeout, err)
	}
}

// Max frame (remoting.ServerConfig.MaxFrameBytes, counted with the length
// field): a frame of exactly the limit is processed, one byte more closes
// the connection without an answer.
func TestLimitMaxFrame(t *testing.T) {
	t.Parallel()
	if d := broker.DefaultConfig().Remoting.MaxFrameBytes; d != 16<<20 || remoting.DefaultMaxFrameBytes != 16<<20 {
		t.Fatalf("default max frame %d, want 16 MiB", d)
	}
	const limit = 256 << 10
	e := startBroker(t, func(b *broker.Config, _ *store.Config) { b.Remoting.MaxFrameBytes = limit })
	e.createTopic("FRAME", 1)

	c := dialRaw(t, e.addr())
	req := remoting.NewRequest(protocol.ReqSendMessageV2, sendExt("FRAME", 0, ""))
	if _, err := c.Write(frameOf(t, req, limit)); err != nil {
		t.Fatal(err)
	}
	resp, err := readResponse(c)
	if err != nil {
		t.Fatalf("frame of exactly %d bytes: %v", limit, err)
	}
	wantCode(t, "send in a frame at the limit", resp, protocol.RespSuccess)

	c2 := dialRaw(t, e.addr())
	req2 := remoting.NewRequest(protocol.ReqSendMessageV2, sendExt("FRAME", 0, ""))
	_, _ = c2.Write(frameOf(t, req2, limit+1)) // the server may close before it read everything
	expectClosed(t, c2, "frame one byte over the limit")
	// The broker is fine.
	wantCode(t, "send after the oversized frame", e.send("FRAME", 0, "", []byte("x")), protocol.RespSuccess)
}

// Body size (broker.Config.MaxBodySize and the store's
// commitlog.Config.MaxBodySize, both 4 MiB): exactly the limit is stored,
// one byte more is MESSAGE_ILLEGAL; the broker's own limit applies first.
func TestLimitBodySize(t *testing.T) {
	t.Parallel()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		e := startBroker(t, func(_ *broker.Config, s *store.Config) { s.CommitLog.SegmentSize = 16 << 20 })
		if e.bcfg.MaxBodySize != 4<<20 || store.DefaultConfig("x").CommitLog.MaxBodySize != 4<<20 {
			t.Fatalf("default body limits %d / %d, want 4 MiB", e.bcfg.MaxBodySize, store.DefaultConfig("x").CommitLog.MaxBodySize)
		}
		e.createTopic("BODY", 1)
		body := make([]byte, 4<<20)
		body[0], body[len(body)-1] = 1, 2
		wantCode(t, "4 MiB body", e.send("BODY", 0, "", body), protocol.RespSuccess)
		got := e.pullQueue(e.client, "BODY", 0, 1)
		if len(got) != 1 || len(got[0].body) != 4<<20 || got[0].body[len(body)-1] != 2 {
			t.Fatalf("the 4 MiB message did not read back intact: %d messages, first %d bytes", len(got), len(got[0].body))
		}
		wantCode(t, "4 MiB + 1 body", e.send("BODY", 0, "", make([]byte, 4<<20+1)), protocol.RespMessageIllegal)
	})
	t.Run("broker=64KiB", func(t *testing.T) {
		t.Parallel()
		e := startBroker(t, func(b *broker.Config, _ *store.Config) { b.MaxBodySize = 64 << 10 })
		e.createTopic("BODY", 1)
		wantCode(t, "64 KiB body", e.send("BODY", 0, "", make([]byte, 64<<10)), protocol.RespSuccess)
		resp := e.send("BODY", 0, "", make([]byte, 64<<10+1))
		wantCode(t, "64 KiB + 1 body", resp, protocol.RespMessageIllegal)
		wantCode(t, "empty body", e.send("BODY", 0, "", nil), protocol.RespMessageIllegal)
	})
	t.Run("store=64KiB", func(t *testing.T) {
		t.Parallel()
		e := startBroker(t, func(_ *broker.Config, s *store.Config) { s.CommitLog.MaxBodySize = 64 << 10 })
		e.createTopic("BODY", 1)
		wantCode(t, "64 KiB body", e.send("BODY", 0, "", make([]byte, 64<<10)), protocol.RespSuccess)
		wantCode(t, "64 KiB + 1 body (store limit below the broker's)", e.send("BODY", 0, "", make([]byte, 64<<10+1)), protocol.RespMessageIllegal)
	})
}

// Topic length (record.TopicMaxLen 127, fixed; %RETRY% and %DLQ% topics
// 255): 127 characters are accepted, 128 are INVALID_PARAMETER; a %RETRY%
// topic of 255 is accepted, 256 is INVALID_PARAMETER; any other topic over
// 127 bytes cannot be stored in a V1 record and is MESSAGE_ILLEGAL.
func TestLimitTopicLength(t *testing.T) {
	t.Parallel()
	e := startBroker(t, nil)
	long := func(prefix string, n int) string { return prefix + strings.Repeat("t", n-len(prefix)) }
	wantCode(t, "127-character topic", e.send(long("T", 127), 0, "", []byte("x")), protocol.RespSuccess)
	wantCode(t, "128-character topic", e.send(long("T", 128), 0, "", []byte("x")), protocol.RespInvalidParameter)
	retry := long(record.RetryTopicPrefix, 255)
	wantCode(t, "255-character %RETRY% topic", e.send(retry, 0, "", []byte("x")), protocol.RespSuccess)
	wantCode(t, "256-character %RETRY% topic", e.send(long(record.RetryTopicPrefix, 256), 0, "", []byte("x")), protocol.RespInvalidParameter)
	wantCode(t, "200-character %DLQ% topic", e.send(long(record.DLQTopicPrefix, 200), 0, "", []byte("x")), protocol.RespMessageIllegal)
	got := e.pullQueue(e.client, long("T", 127), 0, 1)
	if len(got) != 1 {
		t.Fatalf("127-character topic: %d messages stored", len(got))
	}
}

// propsOfLen returns a properties string of exactly n bytes with a
// UNIQ_KEY (so the broker adds only CLUSTER).
func propsOfLen(t *testing.T, n int) string {
	t.Helper()
	base := record.EncodeProperties(map[string]string{record.PropertyUniqKey: record.NewUniqID(), "PAD": "x"})
	if n < len(base) {
		t.Fatalf("properties of %d bytes cannot hold the %d-byte base", n, len(base))
	}
	p := record.EncodeProperties(map[string]string{
		record.PropertyUniqKey: record.NewUniqID(), "PAD": strings.Repeat("x", 1+n-len(base)),
	})
	if len(p) != n {
		t.Fatalf("built %d-byte properties, want %d", len(p), n)
	}
	return p
}

// Properties (record.MaxPropertiesLen 32767, the int16 field of a record;
// fixed): the limit applies to the STORED properties, which include what
// the broker adds (CLUSTER, and UNIQ_KEY when the producer sent none), so a
// producer's properties may be at most 32767 minus those; the record whose
// stored properties are exactly 32767 bytes is accepted, one byte more is
// MESSAGE_ILLEGAL (PROPERTIES_SIZE_EXCEEDED).
func TestLimitPropertiesLength(t *testing.T) {
	t.Parallel()
	e := startBroker(t, nil)
	e.createTopic("PROPS", 1)
	added := len(record.AppendProperty([]byte("a\x01b\x02"), record.PropertyCluster, e.bcfg.ClusterName)) - len("a\x01b\x02")
	atLimit := propsOfLen(t, record.MaxPropertiesLen-added)
	wantCode(t, "stored properties of exactly 32767 bytes", e.send("PROPS", 0, atLimit, []byte("x")), protocol.RespSuccess)
	got := e.pullQueue(e.client, "PROPS", 0, 1)
	if len(got) != 1 || len(got[0].props) != record.MaxPropertiesLen {
		t.Fatalf("stored properties: %d messages, want 1 of %d bytes", len(got), record.MaxPropertiesLen)
	}
	wantCode(t, "stored properties of 32768 bytes", e.send("PROPS", 0, propsOfLen(t, record.MaxPropertiesLen-added+1), []byte("x")), protocol.RespMessageIllegal)
	wantCode(t, "producer properties of 32767 bytes", e.send("PROPS", 0, propsOfLen(t, record.MaxPropertiesLen), []byte("x")), protocol.RespMessageIllegal)
	wantCode(t, "producer properties of 32768 bytes", e.send("PROPS", 0, propsOfLen(t, record.MaxPropertiesLen+1), []byte("x")), protocol.RespMessageIllegal)
}

// Connections (remoting.ServerConfig.MaxConns, 10000): MaxConns connections
// are served, the next is closed on accept; after one closes a new one is
// served again.
func TestLimitConnections(t *testing.T) {
	t.Parallel()
	if d := broker.DefaultConfig().Remoting.MaxConns; d != 10000 {
		t.Fatalf("default max connections %d", d)
	}
	const limit = 8
	e := startBroker(t, func(b *broker.Config, _ *store.Config) { b.Remoting.MaxConns = limit })
	maxReq := func() []byte {
		f, err := remoting.AppendFrame(nil, remoting.NewRequest(protocol.ReqGetMaxOffset,
			remoting.ExtFields{"topic": protocol.DefaultTopic, "queueId": "0"}), remoting.SerializeJSON)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	roundTrip := func(c net.Conn) error {
		if _, err := c.Write(maxReq()); err != nil {
			return err
		}
		resp, err := readResponse(c)
		if err != nil {
			return err
		}
		if resp.Code != protocol.RespSuccess {
			return errors.New(protocol.ResponseCodeName(resp.Code))
		}
		return nil
	}
	conns := make([]net.Conn, limit)
	for i := range conns {
		conns[i] = dialRaw(t, e.addr())
		if err := roundTrip(conns[i]); err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, limit, err)
		}
	}
	extra := dialRaw(t, e.addr())
	expectClosed(t, extra, "connection over MaxConns")
	conns[0].Close()
	deadline := time.Now().Add(callTimeout)
	for {
		c := dialRaw(t, e.addr())
		err := roundTrip(c)
		if err == nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no connection served after one of %d closed: %v", limit, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// In-flight requests per connection (remoting.ServerConfig.
// MaxInFlightPerConn, 10000): with MaxInFlightPerConn requests held (long
// polls) on one connection, the next request on it is answered SYSTEM_BUSY
// "too many requests" at once; once the held ones are answered the
// connection is served again.
func TestLimitInFlightPerConnection(t *testing.T) {
	t.Parallel()
	if d := broker.DefaultConfig().Remoting.MaxInFlightPerConn; d != 10000 {
		t.Fatalf("default in-flight limit %d", d)
	}
	const limit = 4
	e := startBroker(t, func(b *broker.Config, _ *store.Config) {
		b.Remoting.MaxInFlightPerConn = limit
		b.MaxSuspend = 20 * time.Second
	})
	e.createTopic("INFLIGHT", limit)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := e.client.Dial(ctx, e.addr())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	codes := make(chan int32, limit)
	for q := int32(0); q < limit; q++ {
		wg.Add(1)
		req := remoting.NewRequest(protocol.ReqPullMessage, pullExt("inflight", "INFLIGHT", q, 0, 32, protocol.PullFlagSuspend, 15000))
		if err := conn.InvokeAsync(ctx, req, func(resp *remoting.Command, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("held pull: %v", err)
				return
			}
			codes <- resp.Code
		}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(callTimeout); e.b.HeldPulls() < limit; {
		select {
		case code := <-codes:
			t.Fatalf("a pull was answered %s before %d were held", protocol.ResponseCodeName(code), limit)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pulls held", e.b.HeldPulls(), limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := conn.Invoke(ctx, remoting.NewRequest(protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": "INFLIGHT", "queueId": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "request over the in-flight limit", resp, protocol.RespSystemBusy)
	if resp.Remark != remoting.RemarkTooManyRequests {
		t.Fatalf("remark %q, want %q", resp.Remark, remoting.RemarkTooManyRequests)
	}
	// Another connection is not affected.
	other := newClient(t)
	if r, err := invoke(other, e.addr(), protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": "INFLIGHT", "queueId": "0"}, nil); err != nil || r.Code != protocol.RespSuccess {
		t.Fatalf("request on another connection: %v %v", r, err)
	}
	for q := int32(0); q < limit; q++ {
		r, err := invoke(other, e.addr(), protocol.ReqSendMessageV2, sendExt("INFLIGHT", q, ""), []byte("wake"))
		if err != nil || r.Code != protocol.RespSuccess {
			t.Fatalf("send to wake the held pull: %v %v", r, err)
		}
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		wantCode(t, "held pull", &remoting.Command{Code: c}, protocol.RespSuccess)
	}
	resp, err = conn.Invoke(ctx, remoting.NewRequest(protocol.ReqGetMaxOffset, remoting.ExtFields{"topic": "INFLIGHT", "queueId": "0"}))
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "request after the held pulls were answered", resp, protocol.RespSuccess)
}

// Idle connections (remoting.ServerConfig.IdleTimeout, 120 s): a connection
// that sends nothing, or stops in the middle of a frame, is closed after
// IdleTimeout.
func TestLimitIdleTimeout(t *testing.T) {
	t.Parallel()
	if d := broker.DefaultConfig().Remoting.IdleTimeout; d != 120*time.Second {
		t.Fatalf("default idle timeout %v", d)
	}
	// 2 s: short enough for a test, long enough that the last send (which
	// creates its topic, fsyncing topics.json) is answered within it on a
	// loaded machine; expectClosed waits up to callTimeout.
	e := startBroker(t, func(b *broker.Config, _ *store.Config) { b.Remoting.IdleTimeout = 2 * time.Second })
	silent := dialRaw(t, e.addr())
	half := dialRaw(t, e.addr())
	if _, err := half.Write([]byte{0, 0, 4, 0, 0, 0, 0, 10, '{'}); err != nil { // 1024-byte frame, 5 bytes sent
		t.Fatal(err)
	}
	expectClosed(t, silent, "silent connection")
	expectClosed(t, half, "connection stalled mid-frame")
	var buf [1]byte
	if _, err := silent.Read(buf[:]); err == nil || !(errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset")) {
		t.Fatalf("read after close: %v", err)
	}
	wantCode(t, "broker after idle closes", e.send("IDLE", 0, "", []byte("x")), protocol.RespSuccess)
}

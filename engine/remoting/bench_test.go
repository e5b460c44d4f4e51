package remoting

// Run:     go test -run '^$' -bench . -benchmem ./engine/remoting/ | tee new.txt
// Compare: benchstat -col /header new.txt      (JSON vs ROCKETMQ headers)

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// benchRequests are the hot requests as the official Go client sends them.
func benchRequests() []struct {
	name string
	cmd  *Command
} {
	send := protocol.SendMessageHeader{ProducerGroup: "bench_pg", Topic: "BenchmarkTest", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 3, BornTimestamp: 1700000000123, MaxReconsumeTimes: 0,
		Properties: "TAGS\x01TagA\x02UNIQ_KEY\x01C0A8000100002A9F0000000000000000\x02", BrokerName: "broker-a"}
	pull := ExtFields{"consumerGroup": "bench_cg", "topic": "BenchmarkTest", "queueId": "1", "queueOffset": "123456",
		"maxMsgNums": "32", "sysFlag": "3", "commitOffset": "123400", "suspendTimeoutMillis": "20000",
		"subscription": "", "subVersion": "0", "expressionType": "TAG", "bname": "broker-a"}
	body := bytes.Repeat([]byte("m"), 1024)
	return []struct {
		name string
		cmd  *Command
	}{
		{"send", &Command{Code: protocol.ReqSendMessage, Language: LanguageGo, Version: protocol.VersionGoClient, Opaque: 77,
			ExtFields: send.ExtFields(false), Body: body}},
		{"sendv2", &Command{Code: protocol.ReqSendMessageV2, Language: LanguageJava, Version: protocol.VersionV5_3_3, Opaque: 77,
			ExtFields: send.ExtFields(true), Body: body}},
		{"pull", &Command{Code: protocol.ReqPullMessage, Language: LanguageGo, Version: protocol.VersionGoClient, Opaque: 77, ExtFields: pull}},
	}
}

var headerTypes = []SerializeType{SerializeJSON, SerializeRocketMQ}

func BenchmarkEncode(b *testing.B) {
	for _, r := range benchRequests() {
		for _, st := range headerTypes {
			b.Run(fmt.Sprintf("req=%s/header=%s", r.name, st), func(b *testing.B) {
				buf, err := AppendFrame(nil, r.cmd, st)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					buf, _ = AppendFrame(buf[:0], r.cmd, st)
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, r := range benchRequests() {
		for _, st := range headerTypes {
			b.Run(fmt.Sprintf("req=%s/header=%s", r.name, st), func(b *testing.B) {
				frame, err := AppendFrame(nil, r.cmd, st)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := DecodeFrame(frame, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeRecycled reads frames as a server connection does and
// releases each request once "answered", as the broker does for sends:
// the frame, Command and map come from pools, so what is left is the cost
// of decoding the header and making its strings.
func BenchmarkDecodeRecycled(b *testing.B) {
	for _, r := range benchRequests() {
		for _, st := range headerTypes {
			b.Run(fmt.Sprintf("req=%s/header=%s", r.name, st), func(b *testing.B) {
				frame, err := AppendFrame(nil, r.cmd, st)
				if err != nil {
					b.Fatal(err)
				}
				rd := bytes.NewReader(frame)
				fr := frameReader{r: rd, extPool: &requestExtPool, recycle: true}
				b.SetBytes(int64(len(frame)))
				b.ReportAllocs()
				for b.Loop() {
					rd.Reset(frame)
					c, err := fr.read(false)
					if err != nil {
						b.Fatal(err)
					}
					c.Release()
				}
			})
		}
	}
}

// BenchmarkInvoke is a loopback round trip through Client and Server with an
// echo processor; conc callers share one connection.
func BenchmarkInvoke(b *testing.B) {
	cfg := DefaultServerConfig()
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv := NewServer(cfg)
	srv.RegisterProcessor(codeEcho, ProcessorFunc(echo), nil)
	if err := srv.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	ccfg := DefaultClientConfig()
	ccfg.Logger = slog.New(slog.DiscardHandler)
	cl := NewClient(ccfg)
	defer cl.Close()
	for _, size := range []int{128, 4096} {
		for _, conc := range []int{1, 16} {
			b.Run(fmt.Sprintf("size=%d/conc=%d", size, conc), func(b *testing.B) {
				body := bytes.Repeat([]byte("x"), size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.SetParallelism(conc)
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						resp, err := cl.InvokeSync(ctx, srv.Addr(), &Command{Code: codeEcho, Body: body})
						if err != nil || resp.Code != protocol.RespSuccess {
							b.Fatal(resp, err)
						}
					}
				})
			})
		}
	}
}

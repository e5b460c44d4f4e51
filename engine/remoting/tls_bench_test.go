package remoting

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// BenchmarkInvokeTLS is BenchmarkInvoke with the port in each TLS mode and
// the client plaintext or TLS: tls=off is the disabled server, peek=plain a
// plaintext client of a permissive server (the cost of the first-byte
// check), tls=on a TLS client (ECDHE handshake once, then AES-GCM records).
func BenchmarkInvokeTLS(b *testing.B) {
	for _, v := range []struct {
		name   string
		mode   TLSMode
		client bool
	}{{"tls=off", TLSDisabled, false}, {"peek=plain", TLSPermissive, false}, {"tls=on", TLSEnforcing, true}} {
		cfg := DefaultServerConfig()
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.TLS = TLSConfig{Mode: v.mode}
		srv := NewServer(cfg)
		srv.RegisterProcessor(codeEcho, ProcessorFunc(echo), nil)
		if err := srv.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		ccfg := DefaultClientConfig()
		ccfg.Logger = slog.New(slog.DiscardHandler)
		if v.client {
			conf, err := TLSClientConfig{}.Load()
			if err != nil {
				b.Fatal(err)
			}
			ccfg.TLS = conf
		}
		cl := NewClient(ccfg)
		for _, size := range []int{128, 4096} {
			for _, conc := range []int{1, 16} {
				b.Run(fmt.Sprintf("%s/size=%d/conc=%d", v.name, size, conc), func(b *testing.B) {
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
		cl.Close()
		_ = srv.Shutdown(context.Background())
	}
}

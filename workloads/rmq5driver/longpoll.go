package rmq5driver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The long-polling workaround. The Go client (v5.1.4) never sets a
// ReceiveMessageRequest's long_polling_timeout (it sends its await duration
// only in its settings and as the call's deadline); brokerlab's gRPC front
// end reads a missing field as "do not hold", so every empty receive came
// back at once and the receive loops spun (thousands of empty receives a
// second, charged to the broker's CPU). RocketMQ's Java proxy holds a call
// without the field for its remaining time less a reserve. New therefore
// installs, once per process, a stream interceptor on the client's
// connections that fills an unset long_polling_timeout with Config.Await
// (of the driver created last: the client makes its connections through a
// process-wide function, rmq.NewRpcClient, and its per-client connection
// options never reach them).
var (
	longPollOnce  sync.Once
	longPollAwait atomic.Int64 // ns
)

func installLongPolling(await time.Duration) {
	longPollAwait.Store(int64(await))
	longPollOnce.Do(func() {
		newRPC := rmq.NewRpcClient
		rmq.NewRpcClient = func(target string, opts ...rmq.RpcClientOption) (rmq.RpcClient, error) {
			opts = append(opts, rmq.WithRpcClientConnOption(
				rmq.WithDialOptions(grpc.WithChainStreamInterceptor(interceptLongPolling))))
			return newRPC(target, opts...)
		}
	})
}

func interceptLongPolling(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return cs, err
	}
	return longPollStream{ClientStream: cs}, nil
}

// longPollStream sets long_polling_timeout on the ReceiveMessageRequests it
// sends.
type longPollStream struct{ grpc.ClientStream }

func (s longPollStream) SendMsg(m any) error {
	if r, ok := m.(*v2.ReceiveMessageRequest); ok && r.LongPollingTimeout == nil {
		r.LongPollingTimeout = durationpb.New(time.Duration(longPollAwait.Load()))
	}
	return s.ClientStream.SendMsg(m)
}

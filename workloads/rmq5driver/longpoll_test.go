package rmq5driver

import (
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
)

type sentStream struct {
	grpc.ClientStream
	sent []any
}

func (s *sentStream) SendMsg(m any) error { s.sent = append(s.sent, m); return nil }

// An unset long_polling_timeout is filled with the await duration; a set
// one and other requests pass unchanged.
func TestLongPollingFilledIn(t *testing.T) {
	installLongPolling(250 * time.Millisecond)
	inner := &sentStream{}
	s := longPollStream{ClientStream: inner}
	unset := &v2.ReceiveMessageRequest{}
	set := &v2.ReceiveMessageRequest{LongPollingTimeout: durationpb.New(time.Second)}
	other := &v2.AckMessageRequest{}
	for _, m := range []any{unset, set, other} {
		if err := s.SendMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if len(inner.sent) != 3 {
		t.Fatalf("sent %d", len(inner.sent))
	}
	if got := unset.GetLongPollingTimeout().AsDuration(); got != 250*time.Millisecond {
		t.Fatalf("unset long polling became %v", got)
	}
	if got := set.GetLongPollingTimeout().AsDuration(); got != time.Second {
		t.Fatalf("set long polling became %v", got)
	}
}

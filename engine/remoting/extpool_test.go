package remoting

import (
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// TestReleaseExtFields: a released map comes back empty (never with the
// previous request's fields), the command forgets it, a nil map is a
// no-op, and an oversized map is not pooled.
func TestReleaseExtFields(t *testing.T) {
	c := &Command{ExtFields: ExtFields{"topic": "T", "queueId": "3"}}
	c.ReleaseExtFields()
	if c.ExtFields != nil {
		t.Fatal("the command still refers to the released map")
	}
	(&Command{}).ReleaseExtFields() // nil: nothing to do
	for range 100 {
		m := NewExtFields(4)
		if len(m) != 0 {
			t.Fatalf("a pooled map came back with %v", m)
		}
		m["k"] = "v"
		(&Command{ExtFields: m}).ReleaseExtFields()
	}
	big := ExtFields{}
	for i := range maxPooledExt + 1 {
		big[itoa64(int64(i))] = "x"
	}
	(&Command{ExtFields: big}).ReleaseExtFields()
	if len(big) != maxPooledExt+1 {
		t.Fatal("an oversized map was cleared into the pool")
	}
	// The decoder takes its maps from the pool: a decoded header holds only
	// its own fields.
	(&Command{ExtFields: ExtFields{"stale": "1"}}).ReleaseExtFields()
	req := NewRequest(protocol.ReqSendMessageV2, ExtFields{"a": "T"})
	frame, err := AppendFrame(nil, req, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHeader(frame[8:], SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ExtFields) != 1 || got.ExtFields["a"] != "T" {
		t.Fatalf("decoded ext fields %v", got.ExtFields)
	}
}

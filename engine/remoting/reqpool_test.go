package remoting

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// sendFrame is a SEND_MESSAGE_V2 frame with every header field and a body.
func sendFrame(t *testing.T, ext ExtFields) []byte {
	t.Helper()
	req := NewRequest(protocol.ReqSendMessageV2, ext)
	req.Body = bytes.Repeat([]byte("b"), 1024)
	frame, err := AppendFrame(nil, req, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func fullSendHeader() ExtFields {
	return protocol.SendMessageHeader{ProducerGroup: "PG", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 8,
		QueueID: 3, BornTimestamp: 1700000000000, Properties: "TAGS\x01a\x02", BrokerName: "broker-a"}.ExtFields(true)
}

// TestServerRequestMapsReused: a server connection decodes requests into
// maps of its own pool (requestExtPool); once a request's map is released
// the next request is decoded into it, so a send header's 14 fields cost
// no allocation: reading a send frame costs what reading a frame with one
// ext value does (its buffer, the Command and the one chunk of the
// header's strArena). Maps released by clients (NewExtFields's pool) are
// not mixed in.
func TestServerRequestMapsReused(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	// One P: a pooled map goes to the P's private slot, which a goroutine
	// moved to another P would not see.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	full, bare := sendFrame(t, fullSendHeader()), sendFrame(t, ExtFields{"b": "TopicA"})
	r := bytes.NewReader(nil)
	fr := frameReader{r: r, extPool: &requestExtPool}
	read := func(frame []byte) *Command {
		r.Reset(frame)
		c, err := fr.read(false)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := read(full)
	if len(first.ExtFields) != 14 || first.ExtFields["b"] != "T" || len(first.Body) != 1024 {
		t.Fatalf("decoded %v, body %d bytes", first.ExtFields, len(first.Body))
	}
	m := reflect.ValueOf(first.ExtFields).UnsafePointer()
	first.ReleaseExtFields()
	NewExtFields(6)["x"] = "y" // a client's map: not from, nor into, the server's pool
	(&Command{ExtFields: ExtFields{"small": "1"}}).ReleaseExtFields()
	second := read(full)
	if reflect.ValueOf(second.ExtFields).UnsafePointer() != m || len(second.ExtFields) != 14 {
		t.Fatal("the next request was not decoded into the released request map")
	}
	second.ReleaseExtFields()

	withExt := testing.AllocsPerRun(200, func() { read(full).ReleaseExtFields() })
	without := testing.AllocsPerRun(200, func() { read(bare).ReleaseExtFields() })
	if withExt != without || withExt > 3 {
		t.Fatalf("reading a send frame allocates %.1f times, a frame with one ext value %.1f (want equal, ≤ 3)", withExt, without)
	}
}

// TestReleasedRequestKeepsDecodedValues: the strings a request's header
// was decoded into do not live in its map, so values read from a request
// stay intact after its map is released and reused for the next request.
func TestReleasedRequestKeepsDecodedValues(t *testing.T) {
	r := bytes.NewReader(nil)
	fr := frameReader{r: r, extPool: &requestExtPool}
	r.Reset(sendFrame(t, fullSendHeader()))
	c, err := fr.read(false)
	if err != nil {
		t.Fatal(err)
	}
	h, err := protocol.ParseSendMessageHeader(c.ExtFields)
	if err != nil {
		t.Fatal(err)
	}
	body := c.Body
	c.ReleaseExtFields()
	other := fullSendHeader()
	other["b"], other["a"], other["i"] = "OtherTopic", "OtherGroup", "KEYS\x01k"
	for range 10 {
		r.Reset(sendFrame(t, other))
		c2, err := fr.read(false)
		if err != nil {
			t.Fatal(err)
		}
		c2.ReleaseExtFields()
	}
	if h.Topic != "T" || h.ProducerGroup != "PG" || h.Properties != "TAGS\x01a\x02" || !bytes.Equal(body, bytes.Repeat([]byte("b"), 1024)) {
		t.Fatalf("a released request's values changed: %+v, body %q...", h, body[:8])
	}
}

// TestResetResponse: a reused response is what NewResponse makes, with
// nothing left of its previous use.
func TestResetResponse(t *testing.T) {
	c := &Command{Code: 9, Opaque: 77, Flag: FlagOneway, Remark: "old", ExtFields: ExtFields{"k": "v"}, Body: []byte("x")}
	c.ResetResponse(protocol.RespSystemBusy, "busy")
	want := NewResponse(protocol.RespSystemBusy, "busy")
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("reset response %+v, want %+v", c, want)
	}
}

// TestEscapedValuesShareTheHeaderChunk: escaped values (the properties'
// \u0001 separators) are unescaped into a pooled scratch buffer and copied
// into the header's strArena chunk, costing no allocation of their own,
// and a value that outgrows its escaped span (invalid UTF-8 becomes
// U+FFFD) leaves the values after it intact.
func TestEscapedValuesShareTheHeaderChunk(t *testing.T) {
	invalid := strings.Repeat("\xff", 16)
	header := []byte("{\"code\":310,\"remark\":\"\xff\xff\xff\\n\",\"extFields\":{\"i\":\"TAGS\\u0001a\\u0002UNIQ_KEY\\u0001u\\u0002\"," +
		"\"p\":\"" + invalid + "\",\"b\":\"after the invalid value\",\"j\":\"x\\u00e9\"}}")
	c, err := DecodeHeader(header, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if c.Remark != "\uFFFD\uFFFD\uFFFD\n" || c.ExtFields["i"] != "TAGS\x01a\x02UNIQ_KEY\x01u\x02" || c.ExtFields["b"] != "after the invalid value" ||
		c.ExtFields["p"] != strings.Repeat("\uFFFD", 16) || c.ExtFields["j"] != "xé" || c.Code != 310 {
		t.Fatalf("decoded %q %q", c.Remark, c.ExtFields)
	}
	if raceEnabled {
		t.Skip("decoding checked; the allocation count is not: sync.Pool drops items at random under -race")
	}
	plain := []byte(`{"code":310,"extFields":{"i":"TAGS a","b":"T"}}`)
	escaped := []byte(`{"code":310,"extFields":{"i":"TAGS\u0001a\u0002","b":"T"}}`)
	decode := func(h []byte) func() {
		return func() {
			c, _ := decodeHeader(h, SerializeJSON, &requestExtPool, nil)
			c.ReleaseExtFields()
		}
	}
	if p, e := testing.AllocsPerRun(100, decode(plain)), testing.AllocsPerRun(100, decode(escaped)); p != e {
		t.Fatalf("a header with escaped values allocates %.1f times, one without %.1f", e, p)
	}
}

// TestBinaryHeaderOneChunk: a ROCKETMQ binary header's remark and ext
// values share one chunk of its strArena: a send header with its dozen
// values costs what a header with one value does.
func TestBinaryHeaderOneChunk(t *testing.T) {
	full := NewRequest(protocol.ReqSendMessageV2, fullSendHeader())
	full.Remark = "r"
	one := NewRequest(protocol.ReqSendMessageV2, ExtFields{"b": "TopicA"})
	encode := func(c *Command) []byte {
		b, err := appendBinaryHeader(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	fullHdr, oneHdr := encode(full), encode(one)
	got, err := decodeHeader(fullHdr, SerializeRocketMQ, nil, nil)
	if err != nil || got.Remark != "r" || !reflect.DeepEqual(got.ExtFields, full.ExtFields) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if raceEnabled {
		t.Skip("decoding checked; the allocation count is not: sync.Pool drops items at random under -race")
	}
	decode := func(h []byte) func() {
		return func() {
			c, _ := decodeHeader(h, SerializeRocketMQ, &requestExtPool, nil)
			c.ReleaseExtFields()
		}
	}
	if f, o := testing.AllocsPerRun(100, decode(fullHdr)), testing.AllocsPerRun(100, decode(oneHdr)); f != o {
		t.Fatalf("a binary send header allocates %.1f times, a one-value header %.1f", f, o)
	}
}

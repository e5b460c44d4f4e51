package remoting

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// within reports whether s's bytes lie inside buf's backing array.
func within(s string, buf []byte) bool {
	if len(s) == 0 || cap(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf[:cap(buf)])))
	return p >= lo && p < lo+uintptr(cap(buf))
}

// headerStrings are the strings a decoded header holds: remark, keys, values.
func headerStrings(c *Command) []string {
	out := []string{c.Remark}
	for k, v := range c.ExtFields {
		out = append(out, k, v)
	}
	return out
}

// TestDecodedStringsDoNotAliasTheFrame: no string decoded from a header —
// plain or escaped, known or unknown key, short or 1 MiB long, JSON or
// ROCKETMQ — points into the frame it was read from, so a topic name kept
// by the broker pins neither the frame (up to 16 MiB) nor a recycled
// frame buffer; overwriting the frame changes none of them.
func TestDecodedStringsDoNotAliasTheFrame(t *testing.T) {
	big := strings.Repeat("p", 1<<20)
	ext := ExtFields{"b": "KeptTopicName", "a": "group", "i": "TAGS\x01a\x02" + big, "customKey": "customValue",
		"c": "TBW102", "e": "3", "esc": "x\u00e9\"y"}
	for _, st := range headerTypes {
		for _, pooled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pooled=%v", st, pooled), func(t *testing.T) {
				req := NewRequest(protocol.ReqSendMessageV2, ext)
				req.Remark = "a remark of some length"
				req.Body = bytes.Repeat([]byte("B"), 4096)
				if pooled { // small enough for the frame pools: read into a recycled buffer
					req.ExtFields = ExtFields{"b": "KeptTopicName", "customKey": "customValue", "esc": "x\u00e9\"y"}
				}
				frame, err := AppendFrame(nil, req, st)
				if err != nil {
					t.Fatal(err)
				}
				var c *Command
				var buf []byte // the buffer the header was decoded from
				if pooled {
					fr := frameReader{r: bytes.NewReader(frame), extPool: &requestExtPool, recycle: true}
					if c, err = fr.read(false); err != nil {
						t.Fatal(err)
					}
					if c.frame == nil {
						t.Fatal("the frame was not read into a pooled buffer")
					}
					buf = *c.frame
				} else {
					if c, _, err = DecodeFrame(frame, DefaultMaxFrameBytes); err != nil {
						t.Fatal(err)
					}
					buf = frame
				}
				want := map[string]string{}
				for k, v := range c.ExtFields {
					want[k] = v
				}
				if want["b"] != "KeptTopicName" || want["esc"] != "x\u00e9\"y" || c.Remark != req.Remark {
					t.Fatalf("decoded remark %q, b %q, esc %q", c.Remark, want["b"], want["esc"])
				}
				for _, s := range headerStrings(c) {
					if within(s, buf) {
						t.Fatalf("%.40q points into the frame buffer", s)
					}
				}
				topic, remark := c.ExtFields["b"], c.Remark
				for i := range buf {
					buf[i] = 'X'
				}
				for k, v := range want {
					if c.ExtFields[k] != v {
						t.Fatalf("%s changed to %.40q when the frame was overwritten", k, c.ExtFields[k])
					}
				}
				c.Release()
				if topic != "KeptTopicName" || remark != req.Remark {
					t.Fatalf("kept strings changed: %q %q", topic, remark)
				}
				if p := want["i"]; !pooled && (within(topic, unsafe.Slice(unsafe.StringData(p), len(p))) || len(p) != len(big)+len("TAGS\x01a\x02")) {
					t.Fatal("the kept topic shares the 1 MiB value's allocation")
				}
			})
		}
	}
}

// TestStrArenaChunks: the arena copies a string into its current chunk of
// arenaChunk bytes if it fits, into a new chunk if it is short, else into
// an allocation of its own, so a kept string pins at most one chunk; no
// string aliases its source, and a chunk's bytes are not written again.
func TestStrArenaChunks(t *testing.T) {
	var a strArena
	src := bytes.Repeat([]byte("abcdefghij"), 100)
	type made struct {
		s    string
		want string
	}
	var all []made
	for i := range 300 {
		n := i % (arenaMaxShared + 20)
		b := src[i%50 : i%50+n]
		room := cap(a.chunk) - len(a.chunk)
		s := a.str(b)
		if s != string(b) || within(s, src) {
			t.Fatalf("str(%q) = %q (aliases source: %v)", b, s, within(s, src))
		}
		shared := within(s, a.chunk)
		switch {
		case n <= 1:
		case shared && cap(a.chunk) != arenaChunk:
			t.Fatalf("a chunk of %d bytes", cap(a.chunk))
		case !shared && (n <= arenaMaxShared || n <= room):
			t.Fatalf("a %d-byte string (%d bytes of room in the chunk) is not in the chunk", n, room)
		case shared && n > room && n > arenaMaxShared:
			t.Fatalf("a %d-byte string that did not fit started a chunk", n)
		}
		all = append(all, made{s, string(b)})
	}
	for _, m := range all {
		if m.s != m.want {
			t.Fatalf("a string changed after later ones were made: %q, want %q", m.s, m.want)
		}
	}
	if a.key([]byte("topic")) != "topic" || a.value([]byte("TBW102")) != "TBW102" || a.value([]byte("false")) != "false" {
		t.Fatal("known keys and values")
	}
	if n := testing.AllocsPerRun(100, func() {
		var a strArena
		_, _, _ = a.key([]byte("topic")), a.value([]byte("false")), a.value([]byte("7"))
	}); n != 0 {
		t.Fatalf("known keys, known values and 1-byte values allocate %.1f times", n)
	}
}

// manyExtJSON is a JSON header with n distinct extFields keys.
func manyExtJSON(opaque int32, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"code":%d,"opaque":%d,"extFields":{`, codeEcho, opaque)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":"v%d"`, i, i)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// manyExtBinary is a ROCKETMQ header with n distinct extFields keys.
func manyExtBinary(t testing.TB, opaque int32, n int) []byte {
	ext := make(ExtFields, n)
	for i := range n {
		ext[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
	}
	b, err := appendBinaryHeader(nil, &Command{Code: codeEcho, Opaque: opaque, ExtFields: ext})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExtFieldsBounded: a header holds at most MaxExtFields extFields;
// one with more decodes (its framing is intact) with ErrTooManyExtFields
// as its HeaderErr and the map cut at the bound, however many keys it
// sends; updating or deleting keys already held is not refused.
func TestExtFieldsBounded(t *testing.T) {
	for _, st := range headerTypes {
		hdr := func(n int) []byte {
			if st == SerializeJSON {
				return manyExtJSON(1, n)
			}
			return manyExtBinary(t, 1, n)
		}
		for _, n := range []int{MaxExtFields - 1, MaxExtFields, MaxExtFields + 1, 100_000} {
			c, err := DecodeHeader(hdr(n), st)
			if err != nil {
				t.Fatalf("%s, %d keys: %v", st, n, err)
			}
			over := n > MaxExtFields
			if got := c.HeaderErr(); (got != nil) != over ||
				(over && (!errors.Is(got, ErrTooManyExtFields) || !errors.Is(got, ErrBadHeaderField) || !IsBadRequest(got))) {
				t.Fatalf("%s, %d keys: header error %v", st, n, got)
			}
			if want := min(n, MaxExtFields); len(c.ExtFields) != want {
				t.Fatalf("%s, %d keys: map of %d, want %d", st, n, len(c.ExtFields), want)
			}
			if over && BadRequestRemark(c.HeaderErr()) != fmt.Sprintf("the header has more than %d extFields", MaxExtFields) {
				t.Fatalf("remark %q", BadRequestRemark(c.HeaderErr()))
			}
		}
	}
	// At the bound: keys held may still be set again or deleted (the
	// merge of a repeated extFields member), and a deleted one makes room.
	var b strings.Builder
	b.WriteString(`{"extFields":{`)
	for i := range MaxExtFields {
		fmt.Fprintf(&b, `"k%d":"v",`, i)
	}
	b.WriteString(`"k0":"again","k1":null,"new":"fits","newer":"refused"}}`)
	c, err := DecodeHeader([]byte(b.String()), SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ExtFields) != MaxExtFields || c.ExtFields["k0"] != "again" || c.ExtFields["new"] != "fits" ||
		c.ExtFields["newer"] != "" || !errors.Is(c.HeaderErr(), ErrTooManyExtFields) {
		t.Fatalf("%d fields, k0=%q new=%q newer=%q, err %v", len(c.ExtFields), c.ExtFields["k0"],
			c.ExtFields["new"], c.ExtFields["newer"], c.HeaderErr())
	}
	checkAgainstModel(t, []byte(b.String()))
	checkAgainstModel(t, manyExtJSON(1, MaxExtFields+3))
}

// TestTooManyExtFieldsAnswered: a request whose header has more than
// MaxExtFields extFields, JSON or ROCKETMQ, is answered SYSTEM_ERROR with
// its opaque, counted as a bad request, and the connection stays usable.
func TestTooManyExtFieldsAnswered(t *testing.T) {
	ts := startTestServer(t, func(c *ServerConfig) { c.BadInputLogInterval = time.Hour }, nil)
	nc, err := net.Dial("tcp", ts.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	binFrame := func(h []byte) []byte {
		return rawFrame(int32(4+len(h)), uint32(SerializeRocketMQ)<<24|uint32(len(h)), h)
	}
	frames := [][]byte{
		jsonFrame(string(manyExtJSON(1, 50_000)), []byte("body")),
		binFrame(manyExtBinary(t, 2, MaxExtFields+1)),
		jsonFrame(`{"code":9001,"opaque":3,"extFields":{"k":"v"}}`, []byte("after")),
		binFrame(manyExtBinary(t, 4, MaxExtFields)),
	}
	for _, f := range frames {
		if _, err := nc.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	got := readResponses(t, br, nc, 1, 2, 3, 4)
	remark := fmt.Sprintf("the header has more than %d extFields", MaxExtFields)
	for _, o := range []int32{1, 2} {
		if r := got[o]; r.Code != protocol.RespSystemError || r.Remark != remark {
			t.Errorf("opaque %d: %s %q, want SYSTEM_ERROR %q", o, protocol.ResponseCodeName(r.Code), r.Remark, remark)
		}
	}
	if r := got[3]; r.Code != protocol.RespSuccess || r.ExtFields["k"] != "v" || string(r.Body) != "after" {
		t.Errorf("the request after them: %+v", r)
	}
	if r := got[4]; r.Code != protocol.RespSuccess || len(r.ExtFields) != MaxExtFields {
		t.Errorf("a header at the bound: %s, %d fields", protocol.ResponseCodeName(r.Code), len(r.ExtFields))
	}
	waitFor(t, "2 bad requests counted", func() bool { return ts.Stats().BadRequests == 2 })
	if st := ts.Stats(); st.BadInputCloses != 0 || ts.ConnCount() != 1 {
		t.Fatalf("stats %+v, %d connections: the connection was closed", st, ts.ConnCount())
	}
}

// TestBadFieldRemarkClipped: a bad-field answer quotes at most
// maxRemarkQuote bytes of the peer's key or value, however long.
func TestBadFieldRemarkClipped(t *testing.T) {
	long := strings.Repeat("k", 100_000)
	for _, h := range []string{
		`{"extFields":{"` + long + `":[1]}}`,
		`{"code":"` + long + `"}`,
		`{"code":1` + strings.Repeat("0", 100_000) + `}`,
		`{"extFields":{"` + strings.Repeat("é", 50_000) + `":{}}}`,
	} {
		c, err := DecodeHeader([]byte(h), SerializeJSON)
		if err != nil || c.HeaderErr() == nil {
			t.Fatalf("%.40s: %v %v", h, err, c.HeaderErr())
		}
		if r := BadRequestRemark(c.HeaderErr()); len(r) > maxRemarkQuote+80 || !strings.Contains(r, "...") || !utf8.ValidString(r) {
			t.Fatalf("remark of %d bytes: %.120s", len(r), r)
		}
	}
}

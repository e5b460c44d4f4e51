package remoting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// sameCommand compares everything a codec carries; nil and empty ext are equal.
func sameCommand(a, b *Command) bool {
	return a.Code == b.Code && a.Language == b.Language && a.Version == b.Version &&
		a.Opaque == b.Opaque && a.Flag == b.Flag && a.Remark == b.Remark &&
		maps.Equal(a.ExtFields, b.ExtFields) && bytes.Equal(a.Body, b.Body)
}

func sampleCommands() map[string]*Command {
	send := protocol.SendMessageHeader{ProducerGroup: "pg", Topic: "T", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 3, BornTimestamp: 1700000000123, Properties: "TAGS\x01T\x02UNIQ_KEY\x01C0A80001\x02", BrokerName: "broker-a"}
	return map[string]*Command{
		"send-v1": {Code: protocol.ReqSendMessage, Language: LanguageGo, Version: protocol.VersionGoClient, Opaque: 3,
			ExtFields: send.ExtFields(false), Body: []byte("hello")},
		"send-v2": {Code: protocol.ReqSendMessageV2, Language: LanguageJava, Version: protocol.VersionV5_3_3, Opaque: -7,
			ExtFields: send.ExtFields(true), Body: bytes.Repeat([]byte{0, 1, 2}, 100)},
		"pull": {Code: protocol.ReqPullMessage, Language: LanguageGo, Version: 317, Opaque: 1 << 30, ExtFields: ExtFields{
			"consumerGroup": "g", "topic": "T", "queueId": "1", "queueOffset": "2", "maxMsgNums": "32",
			"sysFlag": "3", "commitOffset": "1", "suspendTimeoutMillis": "20000", "subscription": "",
			"subVersion": "0", "expressionType": "TAG", "bname": "broker-a"}},
		"response": {Code: protocol.RespPullNotFound, Language: LanguageGo, Version: DefaultVersion, Opaque: 9,
			Flag: FlagResponse, Remark: "OFFSET_OVERFLOW_ONE", ExtFields: ExtFields{"nextBeginOffset": "5",
				"minOffset": "0", "maxOffset": "5", "suggestWhichBrokerId": "0"}},
		"oneway-no-ext": {Code: protocol.ReqNotifyConsumerIDsChanged, Language: LanguageRust, Version: -1, Flag: FlagOneway},
		"unicode-remark": {Code: protocol.RespSystemError, Flag: FlagResponse, Remark: "tab\there \"q\" \\ é 日本 \U0001F600 \x00\x1f",
			ExtFields: ExtFields{"ключ": "значение", "": "empty key"}},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	for name, cmd := range sampleCommands() {
		for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			t.Run(name+"/"+st.String(), func(t *testing.T) {
				frame, err := AppendFrame(nil, cmd, st)
				if err != nil {
					t.Fatal(err)
				}
				got, n, err := DecodeFrame(frame, DefaultMaxFrameBytes)
				if err != nil {
					t.Fatalf("decode: %v\nframe: %q", err, frame)
				}
				if n != len(frame) {
					t.Fatalf("consumed %d of %d bytes", n, len(frame))
				}
				if got.SerializeType != st {
					t.Fatalf("serialize type %v, want %v", got.SerializeType, st)
				}
				if !sameCommand(got, cmd) {
					t.Fatalf("round trip changed the command\n got %+v\nwant %+v", got, cmd)
				}
				// ReadFrame agrees with DecodeFrame.
				got2, err := ReadFrame(bytes.NewReader(frame), DefaultMaxFrameBytes)
				if err != nil || !sameCommand(got2, cmd) {
					t.Fatalf("ReadFrame: %v %+v", err, got2)
				}
			})
		}
	}
}

// TestGoldenJSONFrame builds the frame for the request captured in the spec
// (rocketmq-store.md §10.2) byte by byte.
func TestGoldenJSONFrame(t *testing.T) {
	header := `{"code":105,"extFields":{"topic":"TeZ_Test_Lng"},"flag":0,"language":"JAVA","opaque":0,` +
		`"serializeTypeCurrentRPC":"JSON","version":453}`
	var want []byte
	want = binary.BigEndian.AppendUint32(want, uint32(4+len(header))) // length excludes itself
	want = append(want, 0, 0, 0, byte(len(header)))                   // type 0 = JSON, 24-bit header length
	want = append(want, header...)

	cmd := &Command{Code: protocol.ReqGetRouteInfoByTopic, Language: LanguageJava, Version: 453, ExtFields: ExtFields{"topic": "TeZ_Test_Lng"}}
	got, err := AppendFrame(nil, cmd, SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frame\n got %q\nwant %q", got, want)
	}
	dec, _, err := DecodeFrame(want, 0)
	if err != nil || !sameCommand(dec, cmd) {
		t.Fatalf("decode golden: %v %+v", err, dec)
	}
}

// TestGoldenBinaryFrame builds the same request with a ROCKETMQ binary header (§10.3).
func TestGoldenBinaryFrame(t *testing.T) {
	want := []byte{
		0, 0, 0, 48, // length = 4 + 44
		1, 0, 0, 44, // type 1 = ROCKETMQ, header length 44
		0x00, 0x69, // code 105
		0x00,       // language JAVA
		0x01, 0xC5, // version 453
		0, 0, 0, 0, // opaque
		0, 0, 0, 0, // flag
		0, 0, 0, 0, // remark length 0
		0, 0, 0, 23, // ext length = 2+5+4+12
		0, 5, 't', 'o', 'p', 'i', 'c',
		0, 0, 0, 12, 'T', 'e', 'Z', '_', 'T', 'e', 's', 't', '_', 'L', 'n', 'g',
	}
	cmd := &Command{Code: protocol.ReqGetRouteInfoByTopic, Language: LanguageJava, Version: 453, ExtFields: ExtFields{"topic": "TeZ_Test_Lng"}}
	got, err := AppendFrame(nil, cmd, SerializeRocketMQ)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("frame\n got % x\nwant % x", got, want)
	}
	dec, _, err := DecodeFrame(want, 0)
	if err != nil || !sameCommand(dec, cmd) || dec.SerializeType != SerializeRocketMQ {
		t.Fatalf("decode golden: %v %+v", err, dec)
	}
}

func TestDecodeGoClientHeader(t *testing.T) {
	// As captured from rocketmq-client-go (client-protocol.md §1.2), plus Java extras.
	h := `{"code":10,"language":"GO","version":317,"opaque":3,"flag":0,"remark":"",` +
		`"extFields":{"producerGroup":"p_pg","topic":"T","queueId":"1","sysFlag":"0"},` +
		`"serializeTypeCurrentRPC":"JSON","unknown":{"nested":[1,2.5e3,true,null,{"x":"y"}]}}`
	c, err := DecodeHeader([]byte(h), SerializeJSON)
	if err != nil {
		t.Fatal(err)
	}
	if c.Code != 10 || c.Language != LanguageGo || c.Version != 317 || c.Opaque != 3 || c.ExtFields["queueId"] != "1" {
		t.Fatalf("decoded %+v", c)
	}
	// Field names match case-insensitively; null leaves fields unchanged; JSON
	// language numbers are accepted.
	c, err = DecodeHeader([]byte(` {"CODE":5,"remark":null,"Language":9,"extFields":{"a":null}} `), SerializeJSON)
	if _, has := c.ExtFields["a"]; err != nil || c.Code != 5 || c.Language != LanguageGo || has {
		t.Fatalf("decoded %+v, %v", c, err)
	}
}

func TestDecodeHeaderRejects(t *testing.T) {
	bad := map[string]string{
		"empty":            ``,
		"not object":       `[1]`,
		"null":             `null`,
		"truncated":        `{"code":1`,
		"leading zero":     `{"code":01}`,
		"trailing data":    `{"code":1} x`,
		"bad escape":       `{"remark":"\x"}`,
		"control char":     "{\"remark\":\"a\x01b\"}",
		"trailing comma":   `{"code":1,}`,
		"bad literal":      `{"x":nul}`,
		"unterminated str": `{"remark":"abc`,
	}
	for name, h := range bad {
		if c, err := DecodeHeader([]byte(h), SerializeJSON); !errors.Is(err, ErrMalformedHeader) {
			t.Errorf("%s: %q decoded to %+v, err %v", name, h, c, err)
		}
	}
	deep := `{"x":` + strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth) + `}`
	if _, err := DecodeHeader([]byte(deep), SerializeJSON); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("nesting beyond %d accepted: %v", maxJSONDepth, err)
	}
	binBad := map[string][]byte{
		"short":         {0, 1, 2},
		"remark past":   append(make([]byte, 13), 0, 0, 0, 99, 0, 0, 0, 0),
		"neg remark":    append(make([]byte, 13), 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0),
		"ext past":      append(make([]byte, 17), 0, 0, 0, 9),
		"trailing":      append(make([]byte, 21), 7),
		"key past ext":  append(make([]byte, 17), 0, 0, 0, 6, 0, 9, 'a', 0, 0, 0),
		"neg value len": append(make([]byte, 17), 0, 0, 0, 7, 0, 1, 'a', 0xFF, 0xFF, 0xFF, 0xFF),
	}
	for name, h := range binBad {
		if c, err := DecodeHeader(h, SerializeRocketMQ); !errors.Is(err, ErrMalformedHeader) {
			t.Errorf("binary %s: decoded to %+v, err %v", name, c, err)
		}
	}
}

func TestDecodeFrameRejects(t *testing.T) {
	frame := func(length int32, word uint32, rest ...byte) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(length))
		b = binary.BigEndian.AppendUint32(b, word)
		return append(b, rest...)
	}
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"too large", frame(2000, 2), ErrFrameTooLarge},
		{"negative", frame(-5, 0), ErrBadFrameLength},
		{"short length", frame(2, 0), ErrBadFrameLength},
		{"header past frame", frame(8, 100, 0, 0, 0, 0), ErrBadHeaderLength},
		{"unknown type", frame(6, 7<<24|2, '{', '}'), ErrUnknownSerializeType},
		{"malformed json", frame(8, 4, '{', 'b', 'a', 'd'), ErrMalformedHeader},
		{"truncated", frame(100, 2, '{', '}'), ErrTruncatedFrame},
		{"no length", []byte{0, 0}, ErrTruncatedFrame},
	}
	for _, c := range cases {
		if _, _, err := DecodeFrame(c.b, 1024); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	// ReadFrame checks the length before allocating or reading the content.
	if _, err := ReadFrame(bytes.NewReader(frame(1<<30, 0)), 1024); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("ReadFrame huge: %v", err)
	}
}

func TestBinaryHeaderNotEncodable(t *testing.T) {
	cmd := &Command{Code: 200050} // POP_MESSAGE does not fit the binary int16 code
	if _, err := AppendFrame(nil, cmd, SerializeRocketMQ); !errors.Is(err, ErrHeaderNotEncodable) {
		t.Fatalf("err %v", err)
	}
	if _, err := AppendFrame(nil, cmd, SerializeJSON); err != nil {
		t.Fatalf("JSON carries int32 codes: %v", err)
	}
}

func TestJSONStringEscaping(t *testing.T) {
	got := string(appendJSONString(nil, "a\"\\\n\r\t\x01\x7f\xffé"))
	want := `"a\"\\\n\r\t\u0001` + "\x7f" + `\ufffdé"`
	if got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

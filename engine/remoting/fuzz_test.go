package remoting

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// refHeader is the header struct as encoding/json would decode it; language
// is raw because the decoder accepts any value there.
type refHeader struct {
	Code      int32             `json:"code"`
	Language  json.RawMessage   `json:"language"`
	Version   int32             `json:"version"`
	Opaque    int32             `json:"opaque"`
	Flag      int32             `json:"flag"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

// checkAgainstEncodingJSON fails t if decodeJSONHeader and encoding/json
// disagree on data: both must accept or reject it (except a top-level null,
// which only encoding/json accepts), and accepted headers must be equal.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	var ref refHeader
	refErr := json.Unmarshal(data, &ref)
	got, err := DecodeHeader(data, SerializeJSON)
	if (refErr == nil) != (err == nil) {
		if refErr == nil && string(bytes.TrimSpace(data)) == "null" {
			return
		}
		t.Fatalf("decoder disagrees with encoding/json on %q:\n ours: %v\n  ref: %v", data, err, refErr)
	}
	if err != nil {
		return
	}
	if got.Code != ref.Code || got.Version != ref.Version || got.Opaque != ref.Opaque || got.Flag != ref.Flag ||
		got.Remark != ref.Remark || !maps.Equal(got.ExtFields, ref.ExtFields) || (got.ExtFields == nil) != (ref.ExtFields == nil) {
		t.Fatalf("decoded %q differently:\n ours: %+v\n  ref: %+v", data, got, ref)
	}
	if raw := bytes.TrimSpace(ref.Language); len(raw) > 0 && string(raw) != "null" {
		want := LanguageOther
		var s string
		var n json.Number
		switch {
		case json.Unmarshal(raw, &s) == nil:
			want = languageByName(s)
		case json.Unmarshal(raw, &n) == nil:
			if i, err := n.Int64(); err == nil {
				want = languageByNumber(i)
			}
		}
		if got.Language != want {
			t.Fatalf("language of %q: got %v want %v", data, got.Language, want)
		}
	}
}

func fuzzSeedFrames(f *testing.F) {
	for _, cmd := range sampleCommands() {
		for _, st := range []SerializeType{SerializeJSON, SerializeRocketMQ} {
			b, err := AppendFrame(nil, cmd, st)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

// FuzzDecodeFrame: decoding never panics, and a decoded frame re-encodes (in
// the type it arrived in) to a frame that decodes to the same command.
func FuzzDecodeFrame(f *testing.F) {
	fuzzSeedFrames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd, n, err := DecodeFrame(data, 1<<20)
		if err != nil {
			return
		}
		if n > len(data) {
			t.Fatalf("consumed %d of %d bytes", n, len(data))
		}
		again, err := AppendFrame(nil, cmd, cmd.SerializeType)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", cmd, err)
		}
		cmd2, _, err := DecodeFrame(again, 0)
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", again, err)
		}
		if !sameCommand(cmd, cmd2) {
			t.Fatalf("round trip changed the command\n first %+v\nsecond %+v", cmd, cmd2)
		}
	})
}

// FuzzDecodeHeader: like FuzzDecodeFrame for bare headers of either type, and
// JSON headers are decoded exactly as encoding/json decodes them.
func FuzzDecodeHeader(f *testing.F) {
	for _, cmd := range sampleCommands() {
		f.Add(appendJSONHeader(nil, cmd), byte(SerializeJSON))
		b, _ := appendBinaryHeader(nil, cmd)
		f.Add(b, byte(SerializeRocketMQ))
	}
	f.Add([]byte(`{"CODE":1,"language":[1,{"a":null}],"extFields":{"a":null},"extFields":{"b":"\ud83d\ude00\ud800"}}`), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, st byte) {
		typ := SerializeType(st % 2)
		if typ == SerializeJSON {
			checkAgainstEncodingJSON(t, data)
		}
		cmd, err := DecodeHeader(data, typ)
		if err != nil {
			return
		}
		again, err := EncodeHeader(nil, cmd, typ)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", cmd, err)
		}
		cmd2, err := DecodeHeader(again, typ)
		if err != nil {
			t.Fatalf("decode re-encoded %q: %v", again, err)
		}
		if !sameCommand(cmd, cmd2) {
			t.Fatalf("round trip changed the header\n first %+v\nsecond %+v", cmd, cmd2)
		}
	})
}

func TestJSONDecoderMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{"code":1,"code":null}`, `{"extFields":{"a":"1"},"extFields":{"b":"2"}}`,
		`{"extFields":{"a":"1"},"extFields":null}`, `{"remark":"\ud800x"}`, `{"remark":"\ud83d\ude00"}`,
		`{"remark":"\ud83dx\ude00"}`, "{\"remark\":\"\xff\xfe\"}", `{"language":1e3}`, `{"language":-1}`,
		`{"language":"NODE_JS"}`, `{"opaque":-2147483648}`, `{"opaque":-2147483649}`, `{"code":-0}`,
		`{"Ext":{}}`, `{"EXTFIELDS":{"k":"v"}}`, `{"ſerializeTypeCurrentRPC":1}`, `{"flag":1E2}`,
		`{"x":[1,2,[3,{"y":-0.5e-3}]]}`, `{"x":1.}`, `{"x":.5}`, `{"x":-}`, `{"x":1e}`, `{"x":tru}`,
		` {} `, `{}{}`, `{"a" : "b" , "code" : 3 }`, "{\"remark\":\"\\u00e9\\/\"}",
	} {
		checkAgainstEncodingJSON(t, []byte(s))
	}
}

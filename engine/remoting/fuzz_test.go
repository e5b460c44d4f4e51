package remoting

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"testing"
)

// modelHeader is what the JSON header decoder should produce, computed
// independently with encoding/json: the syntax check is json.Valid plus "the
// top level is an object", the members are walked in order with
// json.Decoder, and each value is read by the rules the decoder documents
// (fastjson's, as the Java broker reads other clients' headers).
type modelHeader struct {
	Code, Version, Opaque, Flag int32
	Remark                      string
	ExtFields                   map[string]string
	Language                    json.RawMessage // last non-null value
	Bad                         bool            // a member had a value of the wrong type
}

func rawKind(raw json.RawMessage) byte {
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// modelInt32 reads an integer member: a number, or a string holding a
// decimal int32; ok=false means a bad field; null leaves *dst.
func modelInt32(raw json.RawMessage, dst *int32) (ok bool) {
	switch k := rawKind(raw); {
	case k == 'n':
		return true
	case k == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return false
		}
		*dst = int32(n)
		return true
	case k == '-' || (k >= '0' && k <= '9'):
		return json.Unmarshal(raw, dst) == nil
	}
	return false
}

// modelScalar reads a string, number or boolean as text.
func modelScalar(raw json.RawMessage) (string, bool) {
	switch k := rawKind(raw); {
	case k == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil
	case k == 't' || k == 'f' || k == '-' || (k >= '0' && k <= '9'):
		return string(raw), true
	}
	return "", false
}

// modelDecode returns the model's header, or ok=false where the decoder
// must report ErrMalformedHeader.
func modelDecode(data []byte) (m modelHeader, ok bool) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if !json.Valid(data) || len(trimmed) == 0 || trimmed[0] != '{' {
		return m, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		panic(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			panic(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			panic(err)
		}
		good := true
		switch matchHeaderField(tok.(string)) {
		case fieldCode:
			good = modelInt32(raw, &m.Code)
		case fieldVersion:
			good = modelInt32(raw, &m.Version)
		case fieldOpaque:
			good = modelInt32(raw, &m.Opaque)
		case fieldFlag:
			good = modelInt32(raw, &m.Flag)
		case fieldRemark:
			if rawKind(raw) != 'n' {
				var s string
				if s, good = modelScalar(raw); good {
					m.Remark = s
				}
			}
		case fieldLanguage:
			if rawKind(raw) != 'n' {
				m.Language = raw
			}
		case fieldExtFields:
			switch rawKind(raw) {
			case 'n':
				m.ExtFields = nil
			case '{':
				if m.ExtFields == nil {
					m.ExtFields = map[string]string{}
				}
				good = modelExt(raw, m.ExtFields)
			default:
				good = false
			}
		}
		m.Bad = m.Bad || !good
	}
	return m, true
}

func modelExt(raw json.RawMessage, ext map[string]string) (good bool) {
	good = true
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		panic(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			panic(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			panic(err)
		}
		k := tok.(string)
		if rawKind(v) == 'n' {
			delete(ext, k)
			continue
		}
		if _, held := ext[k]; !held && len(ext) >= MaxExtFields {
			good = false // refused: the map is full
			continue
		}
		s, ok := modelScalar(v)
		if !ok {
			good = false
			continue
		}
		ext[k] = s
	}
	return good
}

// checkAgainstModel fails t if decodeJSONHeader and the encoding/json model
// disagree on data: both must accept or reject it, agree on whether a member
// had the wrong type, and accepted headers must be equal.
func checkAgainstModel(t *testing.T, data []byte) {
	ref, refOK := modelDecode(data)
	got, err := DecodeHeader(data, SerializeJSON)
	if refOK != (err == nil) {
		t.Fatalf("decoder disagrees with the model on %q:\n ours: %v\n model accepts: %v", data, err, refOK)
	}
	if err != nil {
		if !errors.Is(err, ErrMalformedHeader) {
			t.Fatalf("rejected %q with %v, want ErrMalformedHeader", data, err)
		}
		return
	}
	if bad := got.HeaderErr() != nil; bad != ref.Bad {
		t.Fatalf("bad field in %q: ours %v, model %v", data, got.HeaderErr(), ref.Bad)
	}
	if got.HeaderErr() != nil && !errors.Is(got.HeaderErr(), ErrBadHeaderField) {
		t.Fatalf("header error %v does not wrap ErrBadHeaderField", got.HeaderErr())
	}
	if got.Code != ref.Code || got.Version != ref.Version || got.Opaque != ref.Opaque || got.Flag != ref.Flag ||
		got.Remark != ref.Remark || !maps.Equal(got.ExtFields, ref.ExtFields) || (got.ExtFields == nil) != (ref.ExtFields == nil) {
		t.Fatalf("decoded %q differently:\n ours: %+v %v\nmodel: %+v", data, got, got.ExtFields, ref)
	}
	if raw := bytes.TrimSpace(ref.Language); len(raw) > 0 {
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
// JSON headers are decoded exactly as the encoding/json model reads them.
func FuzzDecodeHeader(f *testing.F) {
	for _, cmd := range sampleCommands() {
		f.Add(appendJSONHeader(nil, cmd), byte(SerializeJSON))
		b, _ := appendBinaryHeader(nil, cmd)
		f.Add(b, byte(SerializeRocketMQ))
	}
	f.Add([]byte(`{"CODE":1,"language":[1,{"a":null}],"extFields":{"a":null},"extFields":{"b":"\ud83d\ude00\ud800"}}`), byte(0))
	f.Add(manyExtJSON(1, MaxExtFields+2), byte(SerializeJSON))
	f.Add(manyExtBinary(f, 1, MaxExtFields+2), byte(SerializeRocketMQ))
	f.Fuzz(func(t *testing.T, data []byte, st byte) {
		typ := SerializeType(st % 2)
		if typ == SerializeJSON {
			checkAgainstModel(t, data)
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

func TestJSONDecoderMatchesModel(t *testing.T) {
	for _, s := range []string{
		`{"code":1,"code":null}`, `{"extFields":{"a":"1"},"extFields":{"b":"2"}}`,
		`{"extFields":{"a":"1"},"extFields":null}`, `{"remark":"\ud800x"}`, `{"remark":"\ud83d\ude00"}`,
		`{"remark":"\ud83dx\ude00"}`, "{\"remark\":\"\xff\xfe\"}", `{"language":1e3}`, `{"language":-1}`,
		`{"language":"NODE_JS"}`, `{"opaque":-2147483648}`, `{"opaque":-2147483649}`, `{"code":-0}`,
		`{"Ext":{}}`, `{"EXTFIELDS":{"k":"v"}}`, `{"ſerializeTypeCurrentRPC":1}`, `{"flag":1E2}`,
		`{"x":[1,2,[3,{"y":-0.5e-3}]]}`, `{"x":1.}`, `{"x":.5}`, `{"x":-}`, `{"x":1e}`, `{"x":tru}`,
		` {} `, `{}{}`, `{"a" : "b" , "code" : 3 }`, "{\"remark\":\"\\u00e9\\/\"}",
		`{"extFields":{"n":8,"f":-1.5e3,"b":false,"t":true,"z":null,"s":"x"}}`, `{"extFields":{"a":"1"},"extFields":{"a":null}}`,
		`{"extFields":{"o":{"x":1}}}`, `{"extFields":{"a":[1]}}`, `{"extFields":"x"}`, `{"extFields":5}`,
		`{"code":"105"}`, `{"code":"+5"}`, `{"code":" 5"}`, `{"code":"x"}`, `{"code":true}`, `{"code":[]}`,
		`{"opaque":{}}`, `{"remark":5}`, `{"remark":true}`, `{"remark":[]}`, `{"flag":2147483648}`,
		// escaped values are unescaped into scratch, reused for the next one;
		// invalid UTF-8 grows a value and must leave the values after it intact
		"{\"remark\":\"\xff\xff\xff\\n\",\"extFields\":{\"a\":\"plain\",\"b\":\"x\\u0001y\\u0002\"}}",
		"{\"extFields\":{\"p\":\"K\\u0001\xff\xfe\\u0002\",\"q\":\"after\",\"r\":\"\\ud83d\\ude00z\"}}",
	} {
		checkAgainstModel(t, []byte(s))
	}
}

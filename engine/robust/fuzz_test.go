package robust

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Fuzz targets for every processor's header parsing (issue 7). The frame
// codec, the JSON and binary headers and the record decoders have their own
// targets in engine/remoting and engine/record; these go one level up:
//
//   - FuzzParseSendMessageHeader and FuzzDecodeHeartbeat call the exported
//     parsers directly;
//   - the others send the fuzzed header (and body) as a request to a broker
//     over loopback TCP (one broker, over a real store, per target) and
//     check that an answer comes back with a known response code and that
//     no processor panicked (the remoting server recovers a panic into a
//     SYSTEM_ERROR whose remark says "panicked"; that fails the target).
//
// A fuzzed header is written as lines "key=value" (ExtFields); seeds are
// in testdata/fuzz/<FuzzName>/ and in fuzzSeeds (regenerate the files with
// BROKERLAB_WRITE_FUZZ_CORPUS=1 go test -run TestWriteFuzzCorpus).
//
//	go test -run '^$' -fuzz FuzzSendMessageV2 -fuzztime 60s ./engine/robust

// parseExt decodes "key=value" lines; a line without '=' is a key with an
// empty value.
func parseExt(s string) remoting.ExtFields {
	ext := remoting.ExtFields{}
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		ext[k] = v
	}
	return ext
}

// formatExt is the inverse of parseExt (keys sorted).
func formatExt(ext map[string]string) string {
	keys := make([]string, 0, len(ext))
	for k := range ext {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(ext[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// fuzzSeed is one seed: a header and a body (Fuzz targets that take a
// selector byte use sel).
type fuzzSeed struct {
	sel  byte
	ext  string
	body []byte
}

func sendSeedExt(short bool, mutate func(h *protocol.SendMessageHeader)) string {
	h := protocol.SendMessageHeader{
		ProducerGroup: "pg", Topic: "FUZZ", DefaultTopic: protocol.DefaultTopic, DefaultTopicQueueNums: 4,
		QueueID: 1, BornTimestamp: 1700000000000, Properties: "KEYS\x01k1\x02TAGS\x01t\x02",
	}
	if mutate != nil {
		mutate(&h)
	}
	return formatExt(h.ExtFields(short))
}

func without(ext string, key string) string {
	m := parseExt(ext)
	delete(m, key)
	return formatExt(m)
}

func with(ext string, key, val string) string {
	m := parseExt(ext)
	m[key] = val
	return formatExt(m)
}

func batchBody(items ...record.BatchItem) []byte {
	var b []byte
	for _, it := range items {
		b = record.AppendBatchItem(b, it)
	}
	return b
}

// sendSeeds are shared by the three send targets (short selects the
// header spelling).
func sendSeeds(short bool) []fuzzSeed {
	base := sendSeedExt(short, nil)
	q := "queueId"
	ts := "bornTimestamp"
	props := "properties"
	if short {
		q, ts, props = "e", "g", "i"
	}
	return []fuzzSeed{
		{ext: base, body: []byte("hello")},
		{ext: without(base, q), body: []byte("missing queue id")},
		{ext: with(base, q, "-1"), body: []byte("broker picks the queue")},
		{ext: with(base, q, "99999"), body: []byte("queue out of range")},
		{ext: with(base, q, "2147483648"), body: []byte("int32 overflow")},
		{ext: with(base, ts, "not-a-number"), body: []byte("x")},
		{ext: with(base, props, "DELAY\x013\x02"), body: []byte("delayed")},
		{ext: with(base, props, "\x01\x02\x02\x01==\x01"), body: []byte("odd separators")},
		{ext: sendSeedExt(short, func(h *protocol.SendMessageHeader) { h.Topic = "%RETRY%cg"; h.ReconsumeTimes = 20 }), body: []byte("to the DLQ")},
		{ext: sendSeedExt(short, func(h *protocol.SendMessageHeader) { h.SysFlag = 4 }), body: []byte("half message")},
		{ext: sendSeedExt(short, func(h *protocol.SendMessageHeader) { h.SysFlag = 1 }), body: []byte("not really zlib")},
		{ext: sendSeedExt(short, func(h *protocol.SendMessageHeader) { h.Topic = "bad/topic name" }), body: []byte("x")},
		{ext: sendSeedExt(short, func(h *protocol.SendMessageHeader) { h.Topic = protocol.ScheduleTopic }), body: []byte("x")},
		{ext: base, body: nil},
		{ext: "", body: []byte("no header at all")},
	}
}

// fuzzSeeds lists every target's seeds.
var fuzzSeeds = map[string][]fuzzSeed{
	"FuzzParseSendMessageHeader": append(sendSeeds(true), sendSeeds(false)...),
	"FuzzSendMessage":            sendSeeds(false),
	"FuzzSendMessageV2":          sendSeeds(true),
	"FuzzSendBatchMessage": {
		{ext: sendSeedExt(true, func(h *protocol.SendMessageHeader) { h.Batch = true; h.Properties = "" }),
			body: batchBody(record.BatchItem{Body: []byte("a"), Properties: "UNIQ_KEY\x01u1\x02"}, record.BatchItem{Body: []byte("b")})},
		{ext: sendSeedExt(true, func(h *protocol.SendMessageHeader) { h.Batch = true }), body: []byte{0, 0, 0, 20, 0, 0}},
		{ext: sendSeedExt(true, func(h *protocol.SendMessageHeader) { h.Batch = true }), body: []byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4}},
		{ext: sendSeedExt(true, func(h *protocol.SendMessageHeader) { h.Batch = true; h.Topic = "%RETRY%g" }), body: batchBody(record.BatchItem{Body: []byte("a")})},
		{ext: sendSeedExt(true, func(h *protocol.SendMessageHeader) { h.Batch = true }), body: batchBody(record.BatchItem{Body: nil})},
	},
	"FuzzPullMessage": {
		{ext: formatExt(pullExt("cg", "FUZZ", 0, 0, 32, 0, 0))},
		{ext: formatExt(pullExt("cg", "FUZZ", 0, 0, 32, protocol.PullFlagSuspend|protocol.PullFlagCommitOffset, 50))},
		{ext: formatExt(pullExt("cg", "FUZZ", 0, -5, 32, 0, 0))},
		{ext: formatExt(pullExt("cg", "FUZZ", 0, 1<<62, 32, 0, 0))},
		{ext: formatExt(pullExt("cg", "FUZZ", -1, 0, -7, 0, 0))},
		{ext: formatExt(pullExt("cg", "NOPE", 3, 0, 0, 0, 0))},
		{ext: with(formatExt(pullExt("cg", "FUZZ", 0, 0, 32, protocol.PullFlagSubscription, 0)), "subscription", "a || b || ")},
		{ext: with(formatExt(pullExt("cg", "FUZZ", 0, 0, 32, protocol.PullFlagSubscription, 0)), "expressionType", "SQL92")},
		{ext: without(formatExt(pullExt("cg", "FUZZ", 0, 0, 32, 0, 0)), "queueOffset")},
		{ext: with(formatExt(pullExt("cg", "FUZZ", 0, 0, 32, 0, 0)), "maxMsgNums", "lots")},
	},
	"FuzzHeartbeat": {
		{body: []byte(`{"clientID":"127.0.0.1@1","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[{"groupName":"cg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"FUZZ","subString":"a || b","tagsSet":["a","b"],"subVersion":1700000000000000000,"expressionType":"TAG"}]}]}`)},
		{body: []byte(`{"clientID":"","consumerDataSet":[{"groupName":"cg"}]}`)},
		{body: []byte(`{"clientID":"x","consumerDataSet":[{"groupName":"a/b","messageModel":"BROADCASTING"}]}`)},
		{body: []byte(`{"clientID":7}`)},
		{body: []byte(`{"clientID":"x","consumerDataSet":null,"producerDataSet":[null,{}]}`)},
		{body: []byte(`[`)},
		{body: nil},
	},
	"FuzzOffsetRequests": {
		{sel: 0, ext: "consumerGroup=cg\ntopic=FUZZ\nqueueId=0\n"},
		{sel: 1, ext: "consumerGroup=cg\ntopic=FUZZ\nqueueId=0\ncommitOffset=5\n"},
		{sel: 1, ext: "consumerGroup=cg\ntopic=FUZZ\nqueueId=0\ncommitOffset=-1\n"},
		{sel: 2, ext: "topic=FUZZ\nqueueId=0\ntimestamp=1700000000000\n"},
		{sel: 2, ext: "topic=FUZZ\nqueueId=0\ntimestamp=-9223372036854775808\n"},
		{sel: 3, ext: "topic=FUZZ\nqueueId=0\n"},
		{sel: 4, ext: "topic=FUZZ\nqueueId=2147483647\n"},
		{sel: 5, ext: "topic=FUZZ\nqueueId=0\n"},
		{sel: 6, ext: "consumerGroup=cg\n"},
		{sel: 7, ext: "clientID=x\nconsumerGroup=cg\nproducerGroup=pg\n"},
		{sel: 3, ext: "topic=\nqueueId=\n"},
	},
	"FuzzConsumerSendMsgBack": {
		{ext: "group=cg\noffset=0\ndelayLevel=0\noriginMsgId=x\noriginTopic=FUZZ\nmaxReconsumeTimes=16\n"},
		{ext: "group=cg\noffset=0\ndelayLevel=-1\n"},
		{ext: "group=cg\noffset=0\ndelayLevel=99\nmaxReconsumeTimes=0\n"},
		{ext: "group=cg\noffset=1\n"},
		{ext: "group=cg\noffset=-1\n"},
		{ext: "group=cg\noffset=9223372036854775807\n"},
		{ext: "group=bad group/\noffset=0\n"},
		{ext: "offset=0\n"},
		{ext: "group=cg\n"},
	},
	"FuzzDecodeHeartbeat": nil, // shares FuzzHeartbeat's seeds
}

func seedsOf(name string) []fuzzSeed {
	if name == "FuzzDecodeHeartbeat" {
		return fuzzSeeds["FuzzHeartbeat"]
	}
	return fuzzSeeds[name]
}

// fuzzEnv is the broker a network fuzz target talks to.
type fuzzEnv struct {
	e *brokerEnv
}

var knownResponseCodes = func() map[int32]bool {
	m := map[int32]bool{}
	for c := int32(0); c < 2000; c++ {
		if name := protocol.ResponseCodeName(c); name != strconv.Itoa(int(c)) {
			m[c] = true
		}
	}
	return m
}()

// newFuzzEnv starts a broker over a real store with topic FUZZ (4 queues)
// holding one message at commit-log offset 0.
func newFuzzEnv(f *testing.F) *fuzzEnv {
	e := startBroker(f, nil)
	e.createTopic("FUZZ", 4)
	wantCode(f, "seed message", e.send("FUZZ", 0, "", []byte("first")), protocol.RespSuccess)
	return &fuzzEnv{e: e}
}

// check sends one fuzzed request and fails t if it gets no answer, an
// unknown response code, or a processor panic.
func (fe *fuzzEnv) check(t *testing.T, code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	t.Helper()
	resp, err := invokeWithin(fe.e.client, fe.e.addr(), callTimeout, code, ext, body)
	if errors.Is(err, remoting.ErrHeaderNotEncodable) {
		return nil // our client will not put it on the wire
	}
	if err != nil {
		t.Fatalf("%s %v: no answer: %v", protocol.RequestCodeName(code), ext, err)
	}
	if strings.Contains(resp.Remark, "panicked") {
		t.Fatalf("%s %v: processor panicked: %s", protocol.RequestCodeName(code), ext, resp.Remark)
	}
	if !knownResponseCodes[resp.Code] {
		t.Fatalf("%s %v: unknown response code %d (%q)", protocol.RequestCodeName(code), ext, resp.Code, resp.Remark)
	}
	if resp.Code != protocol.RespSuccess && resp.Remark == "" && code != protocol.ReqPullMessage {
		t.Fatalf("%s %v: %s without a remark saying why", protocol.RequestCodeName(code), ext, protocol.ResponseCodeName(resp.Code))
	}
	return resp
}

func addSeeds(f *testing.F, name string, withSel bool) {
	for _, s := range seedsOf(name) {
		switch {
		case withSel:
			f.Add(s.sel, s.ext)
		case name == "FuzzHeartbeat" || name == "FuzzDecodeHeartbeat":
			f.Add(s.body)
		default:
			f.Add(s.ext, s.body)
		}
	}
}

// The send header parser: never panics; every error is a *FieldError for a
// missing or malformed field; a parsed header written back (either
// spelling) parses to the same header.
func FuzzParseSendMessageHeader(f *testing.F) {
	addSeeds(f, "FuzzParseSendMessageHeader", false)
	f.Fuzz(func(t *testing.T, extText string, _ []byte) {
		h, err := protocol.ParseSendMessageHeader(parseExt(extText))
		if err != nil {
			var fe *remoting.FieldError
			if !errors.As(err, &fe) || !(errors.Is(err, remoting.ErrMissingField) || errors.Is(err, remoting.ErrMalformedField)) {
				t.Fatalf("parse error is not a missing/malformed field error: %v", err)
			}
			return
		}
		for _, short := range []bool{true, false} {
			h2, err := protocol.ParseSendMessageHeader(h.ExtFields(short))
			if err != nil || !reflect.DeepEqual(h, h2) {
				t.Fatalf("round trip (short=%v): %+v → %+v, %v", short, h, h2, err)
			}
		}
	})
}

// SEND_MESSAGE (10), long names.
func FuzzSendMessage(f *testing.F) {
	addSeeds(f, "FuzzSendMessage", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, extText string, body []byte) {
		fe.check(t, protocol.ReqSendMessage, parseExt(extText), body)
	})
}

// SEND_MESSAGE_V2 (310), short names a..n.
func FuzzSendMessageV2(f *testing.F) {
	addSeeds(f, "FuzzSendMessageV2", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, extText string, body []byte) {
		fe.check(t, protocol.ReqSendMessageV2, parseExt(extText), body)
	})
}

// SEND_BATCH_MESSAGE (320): header and the batch body (record.DecodeBatch).
func FuzzSendBatchMessage(f *testing.F) {
	addSeeds(f, "FuzzSendBatchMessage", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, extText string, body []byte) {
		fe.check(t, protocol.ReqSendBatchMessage, parseExt(extText), body)
	})
}

// PULL_MESSAGE (11), including suspend (held ≤ MaxSuspend 100 ms) and
// subscription flags.
func FuzzPullMessage(f *testing.F) {
	addSeeds(f, "FuzzPullMessage", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, extText string, body []byte) {
		resp := fe.check(t, protocol.ReqPullMessage, parseExt(extText), body)
		if resp != nil && resp.Code == protocol.RespSuccess {
			for b := resp.Body; len(b) > 0; {
				rec, err := record.Decode(b, true)
				if err != nil {
					t.Fatalf("pull served a record that fails its check: %v", err)
				}
				b = b[rec.TotalSize:]
			}
		}
	})
}

// HEART_BEAT (34): the JSON body.
func FuzzHeartbeat(f *testing.F) {
	addSeeds(f, "FuzzHeartbeat", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		fe.check(t, protocol.ReqHeartBeat, nil, body)
	})
}

// broker.DecodeHeartbeat directly: never panics; what it accepts has a
// client id whenever it names groups.
func FuzzDecodeHeartbeat(f *testing.F) {
	addSeeds(f, "FuzzDecodeHeartbeat", false)
	f.Fuzz(func(t *testing.T, body []byte) {
		hb, err := broker.DecodeHeartbeat(body)
		if err != nil {
			return
		}
		if hb.ClientID == "" && (len(hb.ConsumerDataSet) > 0 || len(hb.ProducerDataSet) > 0) {
			t.Fatalf("accepted groups without a client id: %s", body)
		}
	})
}

// offsetRequestCodes are the offset and client requests FuzzOffsetRequests
// picks from with its selector byte.
var offsetRequestCodes = []int32{
	protocol.ReqQueryConsumerOffset, protocol.ReqUpdateConsumerOffset, protocol.ReqSearchOffsetByTimestamp,
	protocol.ReqGetMaxOffset, protocol.ReqGetMinOffset, protocol.ReqGetEarliestMsgStoretime,
	protocol.ReqGetConsumerListByGroup, protocol.ReqUnregisterClient,
}

// QUERY/UPDATE_CONSUMER_OFFSET (14/15), SEARCH_OFFSET_BY_TIMESTAMP (29),
// GET_MAX/MIN_OFFSET (30/31), GET_EARLIEST_MSG_STORETIME (32),
// GET_CONSUMER_LIST_BY_GROUP (38), UNREGISTER_CLIENT (35).
func FuzzOffsetRequests(f *testing.F) {
	addSeeds(f, "FuzzOffsetRequests", true)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, sel byte, extText string) {
		code := offsetRequestCodes[int(sel)%len(offsetRequestCodes)]
		fe.check(t, code, parseExt(extText), nil)
	})
}

// CONSUMER_SEND_MSG_BACK (36): group, commit-log offset (any value: the
// store must refuse offsets that are not a record), delay level.
func FuzzConsumerSendMsgBack(f *testing.F) {
	addSeeds(f, "FuzzConsumerSendMsgBack", false)
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, extText string, body []byte) {
		fe.check(t, protocol.ReqConsumerSendMsgBack, parseExt(extText), body)
	})
}

// Every request code the broker serves, picked by the selector byte from
// its RequestCodes (so a processor added later is fuzzed too, with no
// change here): any custom fields, any body. The seeds, one set per code,
// are made here from the same list (no fields, a garbage body, and the
// header fields every code shares with a typical value), not kept in
// testdata: a selector in a corpus file would name another code once a
// code is added.
func FuzzEveryRequestCode(f *testing.F) {
	fe := newFuzzEnv(f)
	codes := fe.e.b.RequestCodes()
	if len(codes) == 0 || len(codes) > 256 {
		f.Fatalf("RequestCodes: %v", codes)
	}
	typical := formatExt(map[string]string{
		"topic": "FUZZ", "queueId": "0", "consumerGroup": "cg", "group": "cg", "producerGroup": "pg",
		"offset": "0", "timestamp": "0", "clientID": "c", "key": "k", "groupName": "cg",
	})
	for i := range codes {
		f.Add(byte(i), "", []byte(nil))
		f.Add(byte(i), "", []byte("\x00{garbage"))
		f.Add(byte(i), typical, []byte("{}"))
	}
	f.Fuzz(func(t *testing.T, sel byte, extText string, body []byte) {
		fe.check(t, codes[int(sel)%len(codes)], parseExt(extText), body)
	})
}

// TestWriteFuzzCorpus writes fuzzSeeds to testdata/fuzz/<FuzzName>/ when
// BROKERLAB_WRITE_FUZZ_CORPUS is set (and otherwise checks every target
// has a seed directory).
func TestWriteFuzzCorpus(t *testing.T) {
	write := os.Getenv("BROKERLAB_WRITE_FUZZ_CORPUS") != ""
	for name := range fuzzSeeds {
		dir := filepath.Join("testdata", "fuzz", name)
		if !write {
			if ents, err := os.ReadDir(dir); err != nil || len(ents) == 0 {
				t.Errorf("no seed corpus in %s (regenerate with BROKERLAB_WRITE_FUZZ_CORPUS=1)", dir)
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seedsOf(name) {
			var b strings.Builder
			b.WriteString("go test fuzz v1\n")
			switch name {
			case "FuzzOffsetRequests":
				fmt.Fprintf(&b, "byte(%s)\nstring(%s)\n", strconv.QuoteRune(rune(s.sel)), strconv.Quote(s.ext))
			case "FuzzHeartbeat", "FuzzDecodeHeartbeat":
				fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(s.body)))
			default:
				fmt.Fprintf(&b, "string(%s)\n[]byte(%s)\n", strconv.Quote(s.ext), strconv.Quote(string(s.body)))
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

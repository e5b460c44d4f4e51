package broker_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"maps"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/broker/memstore"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// requiredFields lists, per processor, a complete good header and the
// fields it cannot do without: a request missing any one of them is
// answered SYSTEM_ERROR "the custom field <name> is null" (Java's
// RemotingCommand wording), and one with a non-numeric value in a numeric
// field SYSTEM_ERROR naming the field and the value.
func requiredFields() []struct {
	name     string
	code     int32
	ext      remoting.ExtFields
	required []string
	numeric  string // a required numeric field, for the malformed case
} {
	short := sendHeader("T", 0, "").ExtFields(true)
	long := sendHeader("T", 0, "").ExtFields(false)
	return []struct {
		name     string
		code     int32
		ext      remoting.ExtFields
		required []string
		numeric  string
	}{
		{"SEND_MESSAGE", remoting.ReqSendMessage, long,
			[]string{"producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag", "bornTimestamp", "flag"}, "queueId"},
		{"SEND_MESSAGE_V2", remoting.ReqSendMessageV2, short, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "g"},
		{"SEND_BATCH_MESSAGE", remoting.ReqSendBatchMessage, short, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "e"},
		{"CONSUMER_SEND_MSG_BACK", remoting.ReqConsumerSendMsgBack,
			remoting.ExtFields{"group": "g", "offset": "0", "delayLevel": "0", "originTopic": "T"}, []string{"group", "offset"}, "offset"},
		{"PULL_MESSAGE", remoting.ReqPullMessage, pullExt("g", "T", 0, 0, 32, 0, 0),
			[]string{"consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag"}, "queueOffset"},
		{"QUERY_CONSUMER_OFFSET", remoting.ReqQueryConsumerOffset,
			remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "0"}, []string{"consumerGroup", "topic", "queueId"}, "queueId"},
		{"UPDATE_CONSUMER_OFFSET", remoting.ReqUpdateConsumerOffset,
			remoting.ExtFields{"consumerGroup": "g", "topic": "T", "queueId": "0", "commitOffset": "1"},
			[]string{"consumerGroup", "topic", "queueId", "commitOffset"}, "commitOffset"},
		{"GET_MAX_OFFSET", remoting.ReqGetMaxOffset, remoting.ExtFields{"topic": "T", "queueId": "0"}, []string{"topic", "queueId"}, "queueId"},
		{"GET_MIN_OFFSET", remoting.ReqGetMinOffset, remoting.ExtFields{"topic": "T", "queueId": "0"}, []string{"topic", "queueId"}, "queueId"},
		{"GET_EARLIEST_MSG_STORETIME", remoting.ReqGetEarliestMsgStoretime, remoting.ExtFields{"topic": "T", "queueId": "0"},
			[]string{"topic", "queueId"}, "queueId"},
		{"SEARCH_OFFSET_BY_TIMESTAMP", remoting.ReqSearchOffsetByTimestamp,
			remoting.ExtFields{"topic": "T", "queueId": "0", "timestamp": "0"}, []string{"topic", "queueId", "timestamp"}, "timestamp"},
		{"GET_CONSUMER_LIST_BY_GROUP", remoting.ReqGetConsumerListByGroup, remoting.ExtFields{"consumerGroup": "g"},
			[]string{"consumerGroup"}, ""},
		{"UNREGISTER_CLIENT", remoting.ReqUnregisterClient, remoting.ExtFields{"clientID": "c", "producerGroup": "p"},
			[]string{"clientID"}, ""},
		{"UPDATE_AND_CREATE_TOPIC", remoting.ReqUpdateAndCreateTopic,
			remoting.ExtFields{"topic": "NEWT", "readQueueNums": "2", "writeQueueNums": "2", "perm": "6"},
			[]string{"topic", "readQueueNums", "writeQueueNums"}, "readQueueNums"},
		{"DELETE_TOPIC_IN_BROKER", remoting.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": "GONE"}, []string{"topic"}, ""},
		{"QUERY_MESSAGE", remoting.ReqQueryMessage, remoting.ExtFields{"topic": "T", "key": "k", "maxNum": "1"},
			[]string{"topic", "key"}, ""},
		{"VIEW_MESSAGE_BY_ID", remoting.ReqViewMessageByID, remoting.ExtFields{"offset": "0"}, []string{"offset"}, "offset"},
	}
}

func TestEveryProcessorAnswersMissingFields(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("T", 2)
	e.mustSend("T", 0, "x", "")
	bad := uint64(0)
	for _, p := range requiredFields() {
		t.Run(p.name, func(t *testing.T) {
			for _, f := range p.required {
				ext := maps.Clone(p.ext)
				delete(ext, f)
				resp := e.call(p.code, ext, []byte("body"))
				bad++
				want := "the custom field <" + f + "> is null"
				if resp.Code != remoting.RespSystemError || resp.Remark != want {
					t.Errorf("without %s: %s %q, want SYSTEM_ERROR %q", f, remoting.ResponseCodeName(resp.Code), resp.Remark, want)
				}
			}
			if p.numeric != "" {
				ext := maps.Clone(p.ext)
				ext[p.numeric] = "12x"
				resp := e.call(p.code, ext, []byte("body"))
				bad++
				want := `the custom field <` + p.numeric + `> is malformed: "12x" (invalid syntax)`
				if resp.Code != remoting.RespSystemError || resp.Remark != want {
					t.Errorf("%s=12x: %s %q, want SYSTEM_ERROR %q", p.numeric, remoting.ResponseCodeName(resp.Code), resp.Remark, want)
				}
			}
		})
	}
	// Bodies that do not decode.
	for _, c := range []struct {
		name string
		code int32
	}{{"HEART_BEAT", remoting.ReqHeartBeat}, {"LOCK_BATCH_MQ", remoting.ReqLockBatchMQ}, {"UNLOCK_BATCH_MQ", remoting.ReqUnlockBatchMQ}} {
		resp := e.call(c.code, nil, []byte("{not json"))
		bad++
		if resp.Code != remoting.RespSystemError || !strings.Contains(resp.Remark, "invalid character") {
			t.Errorf("%s with a bad body: %s %q", c.name, remoting.ResponseCodeName(resp.Code), resp.Remark)
		}
	}
	resp := e.call(4242, nil, nil)
	bad++
	if resp.Code != remoting.RespRequestCodeNotSupported || resp.Remark != "request type 4242 not supported" {
		t.Errorf("unknown code: %s %q", remoting.ResponseCodeName(resp.Code), resp.Remark)
	}
	if st := e.b.Stats(); st.BadRequests != bad || st.BadInputCloses != 0 {
		t.Fatalf("stats %+v, want %d bad requests, no closes", st, bad)
	}
	// Every good header is still good (the table is not vacuous).
	for _, p := range requiredFields() {
		if p.code == remoting.ReqSendBatchMessage || p.code == remoting.ReqConsumerSendMsgBack {
			continue // need a batch body / a stored record at the offset
		}
		if resp := e.call(p.code, p.ext, []byte("body")); resp.Code == remoting.RespSystemError &&
			strings.HasPrefix(resp.Remark, "the custom field") {
			t.Errorf("%s complete header refused: %q", p.name, resp.Remark)
		}
	}
}

// rawFrame frames a hand-written JSON header and a body.
func rawFrame(header string, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	b = append(b, header...)
	return append(b, body...)
}

// jsonHeader writes a request header with ext values as given (raw JSON).
func jsonHeader(code int32, opaque int32, flag int32, ext map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"code":` + strconv.Itoa(int(code)) + `,"opaque":` + strconv.Itoa(int(opaque)) +
		`,"flag":` + strconv.Itoa(int(flag)) + `,"language":"JAVA","version":475,"extFields":{`)
	i := 0
	for k, v := range ext {
		if i > 0 {
			b.WriteByte(',')
		}
		i++
		b.WriteString(strconv.Quote(k) + ":" + v)
	}
	b.WriteString("}}")
	return b.String()
}

func quoted(ext remoting.ExtFields) map[string]string {
	out := make(map[string]string, len(ext))
	for k, v := range ext {
		out[k] = strconv.Quote(v)
	}
	return out
}

// TestPipelinedGoodAndBadRequests writes good sends, bad sends (missing
// fields, a header member of the wrong type, numbers where strings are
// expected), a bad pull and a held long-poll pull back to back on one
// connection: every request but the oneway one is answered with its own
// opaque, the good sends are stored, and the connection stays up.
func TestPipelinedGoodAndBadRequests(t *testing.T) {
	e := startEnv(t, nil)
	e.createTopic("P", 1)
	nc, err := net.Dial("tcp", e.b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)

	var frames []byte
	want := map[int32]int32{} // opaque → response code
	opaque := int32(100)
	next := func() int32 { opaque++; return opaque }
	// A pull held by long polling, in flight while the rest is processed.
	held := next()
	frames = append(frames, rawFrame(jsonHeader(remoting.ReqPullMessage, held, 0,
		quoted(pullExt("g", "P", 0, 0, 32, remoting.PullFlagSuspend, 5000))), nil)...)
	want[held] = remoting.RespSuccess
	good := 0
	for i := range 30 {
		h := sendHeader("P", 0, "").ExtFields(true)
		o := next()
		switch i % 5 {
		case 0: // good, with numbers and booleans as a typed serializer writes them
			ext := quoted(h)
			for _, k := range []string{"d", "e", "f", "g", "h", "j", "l"} {
				ext[k] = h[k]
			}
			ext["k"], ext["m"] = "false", "false"
			frames = append(frames, rawFrame(jsonHeader(remoting.ReqSendMessageV2, o, 0, ext), []byte("m"+strconv.Itoa(i)))...)
			want[o] = remoting.RespSuccess
			good++
		case 1: // missing topic
			delete(h, "b")
			frames = append(frames, rawFrame(jsonHeader(remoting.ReqSendMessageV2, o, 0, quoted(h)), []byte("x"))...)
			want[o] = remoting.RespSystemError
		case 2: // a queue id that is an object
			ext := quoted(h)
			ext["e"] = `{"id":0}`
			frames = append(frames, rawFrame(jsonHeader(remoting.ReqSendMessageV2, o, 0, ext), []byte("x"))...)
			want[o] = remoting.RespSystemError
		case 3: // oneway and bad: no answer
			delete(h, "a")
			frames = append(frames, rawFrame(jsonHeader(remoting.ReqSendMessageV2, o, remoting.FlagOneway, quoted(h)), []byte("x"))...)
		case 4: // good, plain strings
			frames = append(frames, rawFrame(jsonHeader(remoting.ReqSendMessageV2, o, 0, quoted(h)), []byte("s"+strconv.Itoa(i)))...)
			want[o] = remoting.RespSuccess
			good++
		}
	}
	badPull := pullExt("g", "P", 0, 0, 32, 0, 0)
	delete(badPull, "queueOffset")
	o := next()
	frames = append(frames, rawFrame(jsonHeader(remoting.ReqPullMessage, o, 0, quoted(badPull)), nil)...)
	want[o] = remoting.RespSystemError
	if _, err := nc.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(waitLimit))
	got := map[int32]*remoting.Command{}
	for len(got) < len(want) {
		r, err := remoting.ReadFrame(br, 0)
		if err != nil {
			t.Fatalf("after %d of %d answers: %v", len(got), len(want), err)
		}
		if _, ok := want[r.Opaque]; !ok || got[r.Opaque] != nil {
			t.Fatalf("unexpected or repeated answer %v", r)
		}
		got[r.Opaque] = r
	}
	for o, code := range want {
		if got[o].Code != code {
			t.Errorf("opaque %d: %s %q, want %s", o, remoting.ResponseCodeName(got[o].Code), got[o].Remark, remoting.ResponseCodeName(code))
		}
	}
	if max := e.store.MaxOffset("P", 0); max != int64(good) {
		t.Fatalf("%d messages stored, want %d", max, good)
	}
	// The oneway ones are counted when processed, with no answer to wait for.
	eventually(t, "19 bad requests counted (6 missing, 6 wrong type, 6 oneway, 1 pull)", func() bool {
		return e.b.Stats().BadRequests == 19
	})
	if st := e.b.Stats(); st.BadInputCloses != 0 {
		t.Fatalf("stats %+v: a connection closed", st)
	}
}

// FuzzBrokerRequestKeepsConnection sends a fuzzed request — any code the
// broker serves (or an unknown one), any custom fields, any body — on one
// long-lived connection, followed by a good GET_MAX_OFFSET: the connection
// never closes, and both are answered.
func FuzzBrokerRequestKeepsConnection(f *testing.F) {
	codes := []int32{remoting.ReqSendMessage, remoting.ReqSendMessageV2, remoting.ReqSendBatchMessage,
		remoting.ReqConsumerSendMsgBack, remoting.ReqPullMessage, remoting.ReqHeartBeat, remoting.ReqUnregisterClient,
		remoting.ReqQueryConsumerOffset, remoting.ReqUpdateConsumerOffset, remoting.ReqGetConsumerListByGroup,
		remoting.ReqLockBatchMQ, remoting.ReqUnlockBatchMQ, remoting.ReqQueryMessage, remoting.ReqViewMessageByID,
		remoting.ReqUpdateAndCreateTopic, remoting.ReqDeleteTopicInBroker, remoting.ReqGetAllTopicConfig,
		remoting.ReqGetAllSubscriptionGroupConfig, remoting.ReqGetMaxOffset, remoting.ReqGetMinOffset,
		remoting.ReqSearchOffsetByTimestamp, remoting.ReqGetEarliestMsgStoretime, remoting.ReqEndTransaction, 4242}
	for i, p := range requiredFields() {
		var b strings.Builder
		for k, v := range p.ext {
			b.WriteString(k + "=" + v + "\n")
		}
		f.Add(byte(i), b.String(), []byte("body"))
	}
	f.Add(byte(5), "", []byte(`{"clientID":"c","consumerDataSet":[{"groupName":"g"}]}`))
	cfg := testConfig()
	cfg.MaxSuspend = 20 * time.Millisecond
	b, err := broker.New(cfg, broker.WithStore(memstore.New()))
	if err != nil {
		f.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		f.Fatal(err)
	}
	defer func() { _ = b.Shutdown(context.Background()) }()
	var nc net.Conn
	var br *bufio.Reader
	opaque := int32(0)
	f.Fuzz(func(t *testing.T, sel byte, extLines string, body []byte) {
		if len(extLines) > 4096 || len(body) > 1<<16 {
			return
		}
		if nc == nil {
			if nc, err = net.Dial("tcp", b.Addr()); err != nil {
				t.Fatal(err)
			}
			br = bufio.NewReader(nc)
		}
		ext := remoting.ExtFields{}
		for _, line := range strings.Split(extLines, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				ext[k] = v
			}
		}
		opaque += 2
		req := &remoting.Command{Code: codes[int(sel)%len(codes)], Opaque: opaque, ExtFields: ext, Body: body}
		good := &remoting.Command{Code: remoting.ReqGetMaxOffset, Opaque: opaque + 1, ExtFields: remoting.ExtFields{"topic": "T", "queueId": "0"}}
		frame, err := remoting.AppendFrame(nil, req, remoting.SerializeJSON)
		if err != nil {
			t.Fatal(err)
		}
		if frame, err = remoting.AppendFrame(frame, good, remoting.SerializeJSON); err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(waitLimit))
		for seen := 0; seen < 2; seen++ {
			r, err := remoting.ReadFrame(br, 0)
			if err != nil {
				t.Fatalf("connection closed by %s %v: %v", remoting.RequestCodeName(req.Code), ext, err)
			}
			if !r.IsResponse() { // a push (NOTIFY_CONSUMER_IDS_CHANGED after a fuzzed heartbeat)
				seen--
				continue
			}
			if r.Opaque != opaque && r.Opaque != opaque+1 {
				t.Fatalf("answer for opaque %d, want %d or %d", r.Opaque, opaque, opaque+1)
			}
			if strings.Contains(r.Remark, "panicked") {
				t.Fatalf("%s %v: %s", remoting.RequestCodeName(req.Code), ext, r.Remark)
			}
		}
	})
}

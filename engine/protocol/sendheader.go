package protocol

import "strconv"

// SendMessageHeader is the custom header of SEND_MESSAGE (10), SEND_MESSAGE_V2
// (310) and SEND_BATCH_MESSAGE (320).
//
// On the wire SEND_MESSAGE uses the long names (producerGroup, topic, ...) and
// V2/batch the one-letter names a..n (SendMessageRequestHeaderV2). The official
// Go client sends 10 with long names plus "bname", and 320 with short names
// (i = "" for a batch, m = "true"); the Java client sends 310/320 with short names.
// ParseSendMessageHeader accepts either spelling for every code.
type SendMessageHeader struct {
	ProducerGroup         string // a, required
	Topic                 string // b, required
	DefaultTopic          string // c, required (normally "TBW102")
	DefaultTopicQueueNums int32  // d, required
	QueueID               int32  // e, required; negative ⇒ broker picks
	SysFlag               int32  // f, required (bit0 = body zlib-compressed)
	BornTimestamp         int64  // g, required, ms
	Flag                  int32  // h, required (user flag)
	Properties            string // i, "k\x01v\x02..."
	ReconsumeTimes        int32  // j
	UnitMode              bool   // k
	MaxReconsumeTimes     int32  // l; 0 when absent
	Batch                 bool   // m
	BrokerName            string // n (long form "bname")
}

// sendHeaderV2Names pairs each V2 short key with its long name.
var sendHeaderV2Names = [...]struct{ short, long string }{
	{"a", "producerGroup"}, {"b", "topic"}, {"c", "defaultTopic"}, {"d", "defaultTopicQueueNums"},
	{"e", "queueId"}, {"f", "sysFlag"}, {"g", "bornTimestamp"}, {"h", "flag"}, {"i", "properties"},
	{"j", "reconsumeTimes"}, {"k", "unitMode"}, {"l", "maxReconsumeTimes"}, {"m", "batch"}, {"n", "bname"},
}

// ExpandSendHeaderV2 returns a copy of ext with the V2 short keys a..n renamed
// to their long names; other keys are copied unchanged.
func ExpandSendHeaderV2(ext map[string]string) map[string]string {
	out := make(map[string]string, len(ext))
	for k, v := range ext {
		out[k] = v
	}
	for _, n := range sendHeaderV2Names {
		if v, ok := ext[n.short]; ok {
			delete(out, n.short)
			out[n.long] = v
		}
	}
	return out
}

// CompactSendHeaderV2 is the inverse of ExpandSendHeaderV2.
func CompactSendHeaderV2(ext map[string]string) map[string]string {
	out := make(map[string]string, len(ext))
	for k, v := range ext {
		out[k] = v
	}
	for _, n := range sendHeaderV2Names {
		if v, ok := ext[n.long]; ok {
			delete(out, n.long)
			out[n.short] = v
		}
	}
	return out
}

// sendHeaderLookup finds a field under its long or short name.
type sendHeaderLookup struct {
	ext   map[string]string
	err   error
	short bool // the header uses the V2 short names: missing fields are reported by those
}

func (l *sendHeaderLookup) raw(i int) (key, val string, ok bool) {
	n := sendHeaderV2Names[i]
	if v, ok := l.ext[n.long]; ok {
		return n.long, v, true
	}
	if v, ok := l.ext[n.short]; ok {
		return n.short, v, true
	}
	if n.long == "bname" { // some senders spell n out as brokerName
		if v, ok := l.ext["brokerName"]; ok {
			return "brokerName", v, true
		}
	}
	if l.short {
		return n.short, "", false
	}
	return n.long, "", false
}

func (l *sendHeaderLookup) str(i int, required bool) string {
	k, v, ok := l.raw(i)
	if !ok && required && l.err == nil {
		l.err = &FieldError{Key: k, Err: ErrMissingField}
	}
	return v
}

func (l *sendHeaderLookup) int(i int, bits int, required bool) int64 {
	k, v, ok := l.raw(i)
	if !ok {
		if required && l.err == nil {
			l.err = &FieldError{Key: k, Err: ErrMissingField}
		}
		return 0
	}
	n, err := ParseIntField(k, v, bits)
	if err != nil && l.err == nil {
		l.err = err
	}
	return n
}

func (l *sendHeaderLookup) bool(i int) bool {
	k, v, ok := l.raw(i)
	if !ok {
		return false
	}
	b, err := ParseBoolField(k, v)
	if err != nil && l.err == nil {
		l.err = err
	}
	return b
}

// ParseSendMessageHeader decodes a send header written with long or short
// keys (a request's remoting.ExtFields).
// The first missing required field or malformed value is returned as a
// *FieldError, named as the header spells its fields (a header with any of
// the short keys a..h is taken for SendMessageRequestHeaderV2: a missing
// topic is "b").
func ParseSendMessageHeader(ext map[string]string) (SendMessageHeader, error) {
	l := sendHeaderLookup{ext: ext}
	for _, n := range sendHeaderV2Names[:8] {
		if _, ok := ext[n.short]; ok {
			l.short = true
			break
		}
	}
	h := SendMessageHeader{
		ProducerGroup:         l.str(0, true),
		Topic:                 l.str(1, true),
		DefaultTopic:          l.str(2, true),
		DefaultTopicQueueNums: int32(l.int(3, 32, true)),
		QueueID:               int32(l.int(4, 32, true)),
		SysFlag:               int32(l.int(5, 32, true)),
		BornTimestamp:         l.int(6, 64, true),
		Flag:                  int32(l.int(7, 32, true)),
		Properties:            l.str(8, false),
		ReconsumeTimes:        int32(l.int(9, 32, false)),
		UnitMode:              l.bool(10),
		MaxReconsumeTimes:     int32(l.int(11, 32, false)),
		Batch:                 l.bool(12),
		BrokerName:            l.str(13, false),
	}
	return h, l.err
}

// ExtFields encodes the header (as a request's remoting.ExtFields) with the
// V2 short keys (short) or the long names that SEND_MESSAGE (10) uses. Every
// field is written, as the Go client does.
func (h SendMessageHeader) ExtFields(short bool) map[string]string {
	e := make(map[string]string, len(sendHeaderV2Names))
	vals := [...]string{
		h.ProducerGroup, h.Topic, h.DefaultTopic, fmtInt32(h.DefaultTopicQueueNums), fmtInt32(h.QueueID),
		fmtInt32(h.SysFlag), strconv.FormatInt(h.BornTimestamp, 10), fmtInt32(h.Flag), h.Properties, fmtInt32(h.ReconsumeTimes),
		strconv.FormatBool(h.UnitMode), fmtInt32(h.MaxReconsumeTimes), strconv.FormatBool(h.Batch), h.BrokerName,
	}
	for i, n := range sendHeaderV2Names {
		if short {
			e[n.short] = vals[i]
		} else {
			e[n.long] = vals[i]
		}
	}
	return e
}

func fmtInt32(n int32) string { return strconv.FormatInt(int64(n), 10) }

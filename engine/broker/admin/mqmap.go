package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// mqEntry is one entry of a map keyed by MessageQueue; value is its JSON.
type mqEntry struct {
	mq    protocol.MessageQueue
	value []byte
}

// appendMQMap appends a fastjson map keyed by MessageQueue, in fastjson's
// form for non-string keys: the key is the queue's JSON object itself,
// {"brokerName":"b","queueId":0,"topic":"T"}:value (not valid standard
// JSON; the Java tools and the Go client's ResetOffsetBody decoder read
// exactly this compact form). Entries are written sorted by topic, then
// queue id.
func appendMQMap(dst []byte, entries []mqEntry) []byte {
	slices.SortFunc(entries, func(a, b mqEntry) int {
		if c := strings.Compare(a.mq.Topic, b.mq.Topic); c != 0 {
			return c
		}
		return int(a.mq.QueueID) - int(b.mq.QueueID)
	})
	dst = append(dst, '{')
	for i, e := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"brokerName":`...)
		dst = appendJSONString(dst, e.mq.BrokerName)
		dst = append(dst, `,"queueId":`...)
		dst = strconv.AppendInt(dst, int64(e.mq.QueueID), 10)
		dst = append(dst, `,"topic":`...)
		dst = appendJSONString(dst, e.mq.Topic)
		dst = append(dst, "}:"...)
		dst = append(dst, e.value...)
	}
	return append(dst, '}')
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of numbers and strings are passed
	}
	return b
}

// ParseMQMap splits a fastjson map keyed by MessageQueue (as appendMQMap
// writes it, or Java's broker) into its keys and raw values. It is the
// decoder admin tools need for TopicStatsTable, ConsumeStats and
// ResetOffsetBody offset tables, which encoding/json cannot read.
func ParseMQMap(b []byte) (map[protocol.MessageQueue]json.RawMessage, error) {
	out := map[protocol.MessageQueue]json.RawMessage{}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, errMQMap
	}
	rest := bytes.TrimSpace(b[1 : len(b)-1])
	for len(rest) > 0 {
		if rest[0] != '{' {
			return nil, errMQMap
		}
		var mq protocol.MessageQueue
		kd := json.NewDecoder(bytes.NewReader(rest))
		if err := kd.Decode(&mq); err != nil {
			return nil, errMQMap
		}
		rest = bytes.TrimSpace(rest[kd.InputOffset():])
		if len(rest) == 0 || rest[0] != ':' {
			return nil, errMQMap
		}
		rest = bytes.TrimSpace(rest[1:])
		vd := json.NewDecoder(bytes.NewReader(rest))
		var raw json.RawMessage
		if err := vd.Decode(&raw); err != nil {
			return nil, errMQMap
		}
		out[mq] = raw
		rest = bytes.TrimSpace(rest[vd.InputOffset():])
		if len(rest) > 0 {
			if rest[0] != ',' {
				return nil, errMQMap
			}
			rest = bytes.TrimSpace(rest[1:])
		}
	}
	return out, nil
}

// FieldOf returns the raw value of a top-level field of a fastjson body
// whose values may be MessageQueue-keyed maps (so encoding/json cannot
// decode the whole body).
func FieldOf(body []byte, field string) (json.RawMessage, bool) {
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' {
		return nil, false
	}
	rest := bytes.TrimSpace(body[1 : len(body)-1])
	for len(rest) > 0 {
		kd := json.NewDecoder(bytes.NewReader(rest))
		var key string
		if err := kd.Decode(&key); err != nil {
			return nil, false
		}
		rest = bytes.TrimSpace(rest[kd.InputOffset():])
		if len(rest) == 0 || rest[0] != ':' {
			return nil, false
		}
		rest = bytes.TrimSpace(rest[1:])
		n := rawValueLen(rest)
		if n <= 0 {
			return nil, false
		}
		if key == field {
			return json.RawMessage(rest[:n]), true
		}
		rest = bytes.TrimSpace(rest[n:])
		if len(rest) > 0 && rest[0] == ',' {
			rest = bytes.TrimSpace(rest[1:])
		}
	}
	return nil, false
}

// rawValueLen is the length of the JSON-ish value at the start of b,
// balancing braces and brackets outside strings (object keys may be objects).
func rawValueLen(b []byte) int {
	depth, inStr, esc := 0, false, false
	for i, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
				if depth == 0 {
					return i + 1
				}
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return i
		}
	}
	return len(b)
}

var errMQMap = errors.New("broker: not a fastjson map keyed by MessageQueue")

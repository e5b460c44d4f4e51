package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// ErrMalformedBody reports a body that does not decode.
var ErrMalformedBody = errors.New("protocol: malformed body")

// EncodeTopicRouteData writes rd as compact JSON with sorted keys, as the Java
// name server does. With standard false the brokerAddrs keys are unquoted
// numbers ({0:"ip:port"}, fastjson's default); with standard true they are
// quoted ({"0":"ip:port"}), as Java sends to clients of version ≥ 401.
func EncodeTopicRouteData(rd *TopicRouteData, standard bool) []byte {
	b := []byte(`{"brokerDatas":[`)
	for i := range rd.BrokerDatas {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBrokerData(b, &rd.BrokerDatas[i], standard)
	}
	b = append(b, `],"filterServerTable":{`...)
	for i, addr := range slices.Sorted(maps.Keys(rd.FilterServerTable)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, addr)
		b = append(b, ':')
		b = appendStrings(b, rd.FilterServerTable[addr])
	}
	b = append(b, '}')
	if rd.OrderTopicConf != "" {
		b = append(b, `,"orderTopicConf":`...)
		b = appendString(b, rd.OrderTopicConf)
	}
	b = append(b, `,"queueDatas":[`...)
	for i, q := range rd.QueueDatas {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"brokerName":`...)
		b = appendString(b, q.BrokerName)
		b = append(b, `,"perm":`...)
		b = strconv.AppendInt(b, int64(q.Perm), 10)
		b = append(b, `,"readQueueNums":`...)
		b = strconv.AppendInt(b, int64(q.ReadQueueNums), 10)
		b = append(b, `,"topicSysFlag":`...)
		b = strconv.AppendInt(b, int64(q.TopicSysFlag), 10)
		b = append(b, `,"writeQueueNums":`...)
		b = strconv.AppendInt(b, int64(q.WriteQueueNums), 10)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// EncodeClusterInfo writes ci like EncodeTopicRouteData writes routes.
func EncodeClusterInfo(ci *ClusterInfo, standard bool) []byte {
	b := []byte(`{"brokerAddrTable":{`)
	for i, name := range slices.Sorted(maps.Keys(ci.BrokerAddrTable)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, name)
		b = append(b, ':')
		bd := ci.BrokerAddrTable[name]
		b = appendBrokerData(b, &bd, standard)
	}
	b = append(b, `},"clusterAddrTable":{`...)
	for i, cluster := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, cluster)
		b = append(b, ':')
		b = appendStrings(b, ci.ClusterAddrTable[cluster])
	}
	return append(b, "}}"...)
}

func appendBrokerData(b []byte, bd *BrokerData, standard bool) []byte {
	b = append(b, `{"brokerAddrs":{`...)
	for i, id := range slices.Sorted(maps.Keys(bd.BrokerAddrs)) {
		if i > 0 {
			b = append(b, ',')
		}
		if standard {
			b = append(b, '"')
		}
		b = strconv.AppendInt(b, id, 10)
		if standard {
			b = append(b, '"')
		}
		b = append(b, ':')
		b = appendString(b, bd.BrokerAddrs[id])
	}
	b = append(b, `},"brokerName":`...)
	b = appendString(b, bd.BrokerName)
	b = append(b, `,"cluster":`...)
	b = appendString(b, bd.Cluster)
	b = append(b, `,"enableActingMaster":`...)
	b = strconv.AppendBool(b, bd.EnableActingMaster)
	if bd.ZoneName != "" {
		b = append(b, `,"zoneName":`...)
		b = appendString(b, bd.ZoneName)
	}
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// DecodeTopicRouteData parses a route in either key style.
func DecodeTopicRouteData(b []byte) (*TopicRouteData, error) {
	var rd TopicRouteData
	if err := json.Unmarshal(QuoteNumericKeys(b), &rd); err != nil {
		return nil, fmt.Errorf("%w: topic route: %w", ErrMalformedBody, err)
	}
	return &rd, nil
}

// DecodeClusterInfo parses cluster info in either key style.
func DecodeClusterInfo(b []byte) (*ClusterInfo, error) {
	var ci ClusterInfo
	if err := json.Unmarshal(QuoteNumericKeys(b), &ci); err != nil {
		return nil, fmt.Errorf("%w: cluster info: %w", ErrMalformedBody, err)
	}
	return &ci, nil
}

// QuoteNumericKeys rewrites fastjson's unquoted numeric object keys
// ({0:"a"}) as standard JSON ({"0":"a"}); everything else is copied as is.
// It returns b itself when there is nothing to rewrite.
func QuoteNumericKeys(b []byte) []byte {
	var out []byte
	var stack []byte // open containers, '{' or '['
	copied := 0
	expectKey := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			expectKey = false
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '{':
			stack = append(stack, c)
			expectKey = true
		case c == '[':
			stack = append(stack, c)
			expectKey = false
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case expectKey && (c == '-' || (c >= '0' && c <= '9')):
			j := i + 1
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			out = append(out, b[copied:i]...)
			out = append(out, '"')
			out = append(out, b[i:j]...)
			out = append(out, '"')
			copied = j
			i = j - 1
			expectKey = false
		default:
			expectKey = false
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

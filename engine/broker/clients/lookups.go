package clients

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// ClientCount is a number of live client connections sharing a language
// and version (RocketMQ's producer and consumer connection metrics). For
// consumers, Group and ConsumeType (CONSUME_PASSIVELY for push,
// CONSUME_ACTIVELY for pull, CONSUME_POP) are set too.
type ClientCount struct {
	Group, ConsumeType string
	Language           string // remoting.Language's name ("GO", "JAVA")
	Version            int32
	Count              int
}

func (t *Table) Counts() (producers, consumers []ClientCount) {
	type key struct {
		group, consumeType, lang string
		version                  int32
	}
	prod, cons := map[key]int{}, map[key]int{}
	t.mu.Lock()
	for _, ids := range t.mu.producers {
		for id := range ids {
			if ci := t.mu.clients[id]; ci != nil {
				prod[key{lang: ci.language.String(), version: ci.version}]++
			}
		}
	}
	for name, g := range t.mu.consumers {
		for id := range g.members {
			if ci := t.mu.clients[id]; ci != nil {
				cons[key{group: name, consumeType: g.consumeType, lang: ci.language.String(), version: ci.version}]++
			}
		}
	}
	t.mu.Unlock()
	flat := func(m map[key]int) []ClientCount {
		out := make([]ClientCount, 0, len(m))
		for k, n := range m {
			out = append(out, ClientCount{Group: k.group, ConsumeType: k.consumeType, Language: k.lang, Version: k.version, Count: n})
		}
		slices.SortFunc(out, func(a, b ClientCount) int {
			if c := strings.Compare(a.Group, b.Group); c != 0 {
				return c
			}
			if c := strings.Compare(a.Language, b.Language); c != 0 {
				return c
			}
			return int(a.Version) - int(b.Version)
		})
		return out
	}
	return flat(prod), flat(cons)
}

// ProducerConnByID is ProducerManager.findChannel: the connection of a client
// that announced a producer group, or nil.
func (t *Table) ProducerConnByID(clientID string) *remoting.Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	ci := t.mu.clients[clientID]
	if ci == nil || len(ci.producerGroups) == 0 {
		return nil
	}
	return ci.conn
}

// ProducerConn picks a live connection of a producer group, round robin
// (ProducerManager.getAvailableChannel); nil if none.
func (t *Table) ProducerConn(group string, seq uint32) *remoting.Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.mu.producers[group]))
	for id := range t.mu.producers[group] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i := range ids {
		ci := t.mu.clients[ids[(int(seq%uint32(len(ids)))+i)%len(ids)]]
		if ci != nil && ci.conn != nil && ci.conn.Err() == nil {
			return ci.conn
		}
	}
	return nil
}

// SubscriptionJSON renders a stored subscription with its tags and their
// hash codes, as SubscriptionData carries them.
func SubscriptionJSON(s *Subscription) protocol.SubscriptionData {
	out := protocol.SubscriptionData{ClassFilterMode: s.ClassFilter, ExpressionType: s.ExpressionType, SubString: s.SubString,
		SubVersion: s.SubVersion, Topic: s.Topic, TagsSet: []string{}, CodeSet: []int32{}}
	if s.ExpressionType == ExpressionTag {
		expr := strings.TrimSpace(s.SubString)
		if expr != "" && expr != "*" {
			for _, tag := range strings.Split(expr, "||") {
				if tag = strings.TrimSpace(tag); tag != "" && !slices.Contains(out.TagsSet, tag) {
					out.TagsSet = append(out.TagsSet, tag)
					out.CodeSet = append(out.CodeSet, record.JavaStringHash(tag))
				}
			}
		}
	}
	return out
}

// getConsumerList handles GET_CONSUMER_LIST_BY_GROUP (38): every live
// member, the caller included (the Go client drops all its queues on an
// empty list).
func (s *Service) getConsumerList(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("consumerGroup")
	if err != nil {
		return nil, err
	}
	ids := s.Members(group)
	if len(ids) == 0 {
		return responsef(protocol.RespSystemError, "no consumer for this group, %s", group), nil
	}
	body, err := json.Marshal(struct {
		ConsumerIDList []string `json:"consumerIdList"`
	}{ids})
	if err != nil {
		return nil, err
	}
	resp := success()
	resp.Body = body
	return resp, nil
}

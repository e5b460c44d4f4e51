package broker

import (
	"context"
	"net/netip"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// newPop builds the POP service (engine/broker/pop) on the broker's
// store, topics, offsets and subscription groups.
func (b *Broker) newPop() *pop.Service {
	c := b.cfg
	pc := pop.DefaultConfig(c.BrokerName, c.ClusterName)
	pc.MaxRetryTimes = c.MaxReconsumeTimes
	pc.Slave = c.Role == Slave
	return pop.New(pop.Deps{
		Config:  pc,
		Store:   popStore{b},
		Offsets: txnOffsets{b},
		Topic: func(name string) (protocol.TopicConfig, bool) {
			return b.topics.Get(name)
		},
		CreateTopic: func(tc protocol.TopicConfig) (protocol.TopicConfig, error) {
			cur, _, _, err := b.topics.CreateIfAbsent(tc)
			return cur, err
		},
		RetryMaxTimes: b.groupRetryMaxTimes,
		CompileFilter: func(typ, expr string) (pop.Filter, error) {
			f, err := compileFilter(expr, typ)
			if err != nil || f == nil {
				return nil, err
			}
			return f, nil
		},
		StoreHost: func() netip.AddrPort { return b.storeHost },
		Logger:    b.log,
	})
}

// Pop is the broker's POP service (the gRPC front end calls it directly).
func (b *Broker) Pop() *pop.Service { return b.pop }

// popStore is the broker's store as engine/broker/pop reads and writes it.
type popStore struct{ b *Broker }

func (p popStore) Read(group, topic string, queueID int32, offset int64, n int, f pop.Filter) pop.ReadResult {
	mf, _ := f.(MessageFilter)
	res := p.b.store.Get(group, topic, queueID, offset, n, mf)
	out := pop.ReadResult{Buffer: res.Buffer, NextBeginOffset: res.NextBeginOffset, MinOffset: res.MinOffset, MaxOffset: res.MaxOffset}
	switch res.Status {
	case GetFound:
		out.Status = pop.ReadFound
	case GetNoMatchedMessage, GetOffsetFoundNull:
		out.Status = pop.ReadNoMatched
	case GetOffsetTooSmall:
		out.Status = pop.ReadOffsetTooSmall
	case GetOffsetOverflowBadly, GetOffsetOverflowOne:
		out.Status = pop.ReadOffsetOverflow
	default:
		out.Status = pop.ReadOther
	}
	return out
}

func (p popStore) Put(ctx context.Context, m *record.Message) (pop.PutResult, error) {
	res, err := p.b.store.Put(ctx, m)
	phys, _ := res.firstPhys()
	return pop.PutResult{Stored: res.Status.Stored(), Status: res.Status.String(), QueueOffset: res.QueueOffset, PhysOffset: phys}, err
}

func (p popStore) MinOffset(topic string, queueID int32) int64 {
	return p.b.store.MinOffset(topic, queueID)
}
func (p popStore) MaxOffset(topic string, queueID int32) int64 {
	return p.b.store.MaxOffset(topic, queueID)
}
func (p popStore) InMemory(topic string, queueID int32, offset int64) bool {
	return p.b.store.InMemory(topic, queueID, offset)
}
func (p popStore) ReadRecord(physOffset int64) ([]byte, error) {
	return p.b.store.ReadRecord(physOffset)
}

package broker

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/admin"
	"github.com/brokerlab/brokerlab/engine/broker/txn"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Transaction group and properties (MixAll, MessageConst,
// TransactionalMessageUtil), defined by engine/broker/txn.
const (
	TransGroup                             = txn.TransGroup
	PropertyTransactionPreparedQueueOffset = txn.PropertyTransactionPreparedQueueOffset
	PropertyTransactionCheckTimes          = txn.PropertyTransactionCheckTimes
	PropertyTransactionID                  = txn.PropertyTransactionID
	PropertyCheckImmunityTime              = txn.PropertyCheckImmunityTime
)

// ErrTxnOpNotStored reports an op record the store did not take (the half
// is then checked again after a restart).
var ErrTxnOpNotStored = txn.ErrOpNotStored

// newTxn builds the transaction service (END_TRANSACTION and the check
// service) on the broker's store, topics, client table and send path.
func (b *Broker) newTxn() *txn.Service {
	c := b.cfg
	return txn.New(txn.Deps{
		Config: txn.Config{Slave: c.Role == Slave, BrokerName: c.BrokerName,
			CheckInterval: c.TransactionCheckInterval, Timeout: c.TransactionTimeout, CheckMax: c.TransactionCheckMax},
		Store:   txnStore{b},
		Offsets: txnOffsets{b},
		CreateTopic: func(tc protocol.TopicConfig) error {
			_, _, _, err := b.topics.CreateIfAbsent(tc)
			return err
		},
		StoreCommitted: b.storeCommitted,
		ProducerConn:   b.clients.ProducerConn,
		StoreHost:      func() netip.AddrPort { return b.storeHost },
		Context:        b.ctx,
		Stop:           b.stop,
		Logger:         b.log,
	})
}

// storeCommitted stores a committed half in its real topic: a DELAY level
// applies from here on, as Java's put hooks do, and so does a timer.
func (b *Broker) storeCommitted(ctx context.Context, m *record.Message) *remoting.Command {
	b.applyDelay(m)
	if resp := b.delay.DivertTimer(m); resp != nil {
		return resp
	}
	res, err := b.store.Put(ctx, m)
	if !res.Status.Stored() {
		return putResponse(res, err)
	}
	return nil
}

// endTransactionExecutor is END_TRANSACTION's executor
// (endTransactionThreadPoolNums).
func (b *Broker) endTransactionExecutor() *remoting.Executor {
	cpus := runtime.NumCPU()
	return b.server.NewExecutor("end-transaction", remoting.ExecutorConfig{Workers: 8 + 2*cpus, QueueSize: 100000})
}

// txnStore is the broker's store as engine/broker/txn reads and writes it
// (b.store is set by Start).
type txnStore struct{ b *Broker }

func (t txnStore) Read(group, topic string, queueID int32, offset int64, n int) txn.ReadResult {
	res := t.b.store.Get(group, topic, queueID, offset, n, nil)
	out := txn.ReadResult{Buffer: res.Buffer, NextBeginOffset: res.NextBeginOffset}
	switch res.Status {
	case GetFound:
		out.Status = txn.ReadFound
	case GetOffsetFoundNull:
		out.Status = txn.ReadOffsetFoundNull
	case GetOffsetOverflowBadly:
		out.Status = txn.ReadOffsetOverflowBadly
	case GetOffsetTooSmall:
		out.Status = txn.ReadOffsetTooSmall
	default:
		out.Status = txn.ReadOther
	}
	return out
}

func (t txnStore) Put(ctx context.Context, m *record.Message) (txn.PutResult, error) {
	res, err := t.b.store.Put(ctx, m)
	return txn.PutResult{Stored: res.Status.Stored(), Status: res.Status.String(), QueueOffset: res.QueueOffset,
		PhysOffsets: res.PhysOffsets, StoreTimestamp: res.StoreTimestamp}, err
}

func (t txnStore) ReadRecord(physOffset int64) ([]byte, error) {
	return t.b.store.ReadRecord(physOffset)
}

func (t txnStore) MinOffset(topic string, queueID int32) int64 {
	return t.b.store.MinOffset(topic, queueID)
}

// txnOffsets is the broker's consumer offsets (b.offsets is set by Start).
type txnOffsets struct{ b *Broker }

func (t txnOffsets) Query(group, topic string, queueID int32) (int64, bool) {
	return t.b.offsets.Query(group, topic, queueID)
}

func (t txnOffsets) Commit(group, topic string, queueID int32, offset int64) {
	t.b.offsets.Commit(group, topic, queueID, offset)
}

// txnLiveKeys are the check knobs under Java's BrokerConfig names
// (milliseconds), read by GET_BROKER_CONFIG and changed at once by
// UPDATE_BROKER_CONFIG: the check service reads them before every scan,
// as Java's does.
func (b *Broker) txnLiveKeys() map[string]admin.LiveKey {
	msKey := func(get func() time.Duration, set func(d time.Duration), min int64) admin.LiveKey {
		return admin.LiveKey{
			Get: func() string { return strconv.FormatInt(get().Milliseconds(), 10) },
			Set: func(v string) error {
				ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil || ms < min {
					return fmt.Errorf("not a number of milliseconds ≥ %d: %q", min, v)
				}
				set(time.Duration(ms) * time.Millisecond)
				return nil
			},
		}
	}
	return map[string]admin.LiveKey{
		"transactionCheckInterval": msKey(b.txn.CheckInterval, b.txn.SetCheckInterval, 1),
		"transactionTimeOut":       msKey(b.txn.CheckTimeout, b.txn.SetCheckTimeout, 0),
		"transactionCheckMax": {
			Get: func() string { return strconv.Itoa(b.txn.CheckMax()) },
			Set: func(v string) error {
				n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
				if err != nil || n < 1 {
					return fmt.Errorf("not a positive count: %q", v)
				}
				b.txn.SetCheckMax(int(n))
				return nil
			},
		},
	}
}

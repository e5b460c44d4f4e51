package broker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/delay"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Timer message properties (MessageConst), defined by engine/broker/delay.
const (
	PropertyTimerDeliverMS = delay.PropertyTimerDeliverMS
	PropertyTimerDelaySec  = delay.PropertyTimerDelaySec
	PropertyTimerDelayMS   = delay.PropertyTimerDelayMS
	PropertyTimerOutMS     = delay.PropertyTimerOutMS
	PropertyTimerEnqueueMS = delay.PropertyTimerEnqueueMS
	PropertyTimerDequeueMS = delay.PropertyTimerDequeueMS
	PropertyTimerDelUniq   = delay.PropertyTimerDelUniq
)

// TimerStats is a snapshot of the timer service (delay.TimerStats).
type TimerStats = delay.TimerStats

// newDelay builds the delay-level scheduler and the timer wheel on the
// broker's store and consumer offsets (started by Start on a master).
func (b *Broker) newDelay() *delay.Service {
	c := b.cfg
	return delay.New(delay.Deps{
		Config: delay.Config{
			DelayLevels: c.DelayLevels, ScheduleCheckInterval: c.ScheduleCheckInterval,
			TimerEnable: c.TimerEnable, TimerPrecision: c.TimerPrecision, TimerMaxDelay: c.TimerMaxDelay,
			TimerLoadWindow: c.TimerLoadWindow, TimerMaxLoaded: c.TimerMaxLoaded, TimerFlushInterval: c.TimerFlushInterval,
		},
		Store:     delayStore{b},
		Offsets:   b.offsets,
		StoreHost: b.storeHost,
		Logger:    b.log,
	})
}

// delayStore is the broker's store as engine/broker/delay reads and writes
// it.
type delayStore struct{ b *Broker }

func (d delayStore) Read(group, topic string, queueID int32, offset int64, n int) delay.ReadResult {
	res := d.b.store.Get(group, topic, queueID, offset, n, nil)
	out := delay.ReadResult{Buffer: res.Buffer, NextBeginOffset: res.NextBeginOffset}
	switch res.Status {
	case GetFound:
		out.Status = delay.ReadFound
	case GetNoMatchedMessage:
		out.Status = delay.ReadNoMatchedMessage
	case GetMessageWasRemoving:
		out.Status = delay.ReadMessageWasRemoving
	case GetOffsetFoundNull:
		out.Status = delay.ReadOffsetFoundNull
	case GetOffsetOverflowBadly:
		out.Status = delay.ReadOffsetOverflowBadly
	case GetOffsetTooSmall:
		out.Status = delay.ReadOffsetTooSmall
	default:
		out.Status = delay.ReadOther
	}
	return out
}

func (d delayStore) Put(m *record.Message) (delay.PutResult, error) {
	res, err := d.b.store.Put(d.b.ctx, m)
	return delay.PutResult{
		Stored:  res.Status.Stored(),
		Illegal: res.Status == PutMessageIllegal || res.Status == PutPropertiesSizeExceeded,
		Status:  res.Status.String(),
	}, err
}

func (d delayStore) MinOffset(topic string, queueID int32) int64 {
	return d.b.store.MinOffset(topic, queueID)
}

func (d delayStore) MaxOffset(topic string, queueID int32) int64 {
	return d.b.store.MaxOffset(topic, queueID)
}

// TimerStats returns the timer service's statistics (zero before Start).
func (b *Broker) TimerStats() TimerStats {
	if b.delay == nil {
		return TimerStats{}
	}
	return b.delay.TimerStats()
}

// timerProperties are the timer and lite pull settings under Java's key
// names, for GET_BROKER_CONFIG.
func (b *Broker) timerProperties() map[string]string {
	c := b.cfg
	return map[string]string{
		"timerWheelEnable":                strconv.FormatBool(c.TimerEnable),
		"timerPrecisionMs":                strconv.FormatInt(c.TimerPrecision.Milliseconds(), 10),
		"timerMaxDelaySec":                strconv.FormatInt(int64(c.TimerMaxDelay/time.Second), 10),
		"timerFlushIntervalMs":            strconv.FormatInt(c.TimerFlushInterval.Milliseconds(), 10),
		"litePullMessageEnable":           strconv.FormatBool(c.LitePullEnable),
		"litePullMessageThreadPoolNums":   strconv.FormatInt(int64(c.LitePullExecutor.Workers), 10),
		"litePullThreadPoolQueueCapacity": strconv.FormatInt(int64(c.LitePullExecutor.QueueSize), 10),
	}
}

// registerLitePull registers LITE_PULL_MESSAGE (361): Java's
// PullMessageProcessor serves it exactly as PULL_MESSAGE (same header, same
// long polling: the lite pull consumer sets the suspend flag and
// brokerSuspendMaxTimeMillis), on its own executor, refused with
// NO_PERMISSION when litePullMessageEnable is off.
func (b *Broker) registerLitePull() {
	ex := b.server.NewExecutor("lite-pull", b.cfg.LitePullExecutor)
	b.handle(protocol.ReqLitePullMessage, b.litePullMessage, ex)
}

func (b *Broker) litePullMessage(ctx context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if !b.cfg.LitePullEnable {
		resp := responsef(protocol.RespNoPermission, "the broker[%s] for lite pull consumer is forbidden", b.addr)
		echoPullOffset(resp, req)
		return resp, nil
	}
	return b.pullMessage(ctx, conn, req)
}

func (c *Config) validateTimer() error {
	switch {
	case c.TimerPrecision < time.Millisecond || c.TimerPrecision > time.Second:
		return fmt.Errorf("%w: timer precision must be between 1ms and 1s, got %v", ErrBadConfig, c.TimerPrecision)
	case c.TimerMaxDelay <= 0:
		return fmt.Errorf("%w: timer max delay must be positive", ErrBadConfig)
	case c.TimerLoadWindow < 2*c.TimerPrecision:
		return fmt.Errorf("%w: timer load window %v must be at least two precisions", ErrBadConfig, c.TimerLoadWindow)
	case c.TimerMaxLoaded < 16:
		return fmt.Errorf("%w: timer max loaded must be at least 16", ErrBadConfig)
	case c.TimerFlushInterval <= 0:
		return fmt.Errorf("%w: timer flush interval must be positive", ErrBadConfig)
	}
	return nil
}

// recallMessage handles RECALL_MESSAGE (370): the timer's delete marker
// (delay.Service.Recall).
func (b *Broker) recallMessage(_ context.Context, conn *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	if resp := b.refuseOnSlave(); resp != nil {
		return resp, nil
	}
	h, err := protocol.ParseRecallMessageHeader(req.ExtFields)
	if err != nil {
		return nil, err
	}
	_, exists := b.topics.Get(h.Topic)
	return b.delay.Recall(delay.RecallRequest{Header: h, BrokerName: b.cfg.BrokerName, TopicExists: exists,
		BornHost: bornHost(conn)}), nil
}

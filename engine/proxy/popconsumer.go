package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/pop"
)

// popConsumer is the broker's POP service as a Consumer.
type popConsumer struct{ s *pop.Service }

// PopConsumer adapts the broker's POP service (broker.Pop) to Consumer.
func PopConsumer(s *pop.Service) Consumer { return popConsumer{s} }

func handleErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pop.ErrInvalidHandle) {
		return fmt.Errorf("%w: %w", ErrInvalidHandle, err)
	}
	return err
}

func (c popConsumer) Pop(ctx context.Context, req PopRequest) ([]PoppedMessage, error) {
	msgs, err := c.s.Pop(ctx, pop.Request{Group: req.Group, Topic: req.Topic, QueueID: req.QueueID, MaxMessages: req.MaxMessages,
		Invisible: req.Invisible, Poll: req.Poll, FIFO: req.FIFO, ExpressionType: req.ExpressionType, Expression: req.Expression,
		ClientID: req.ClientID, InitMode: req.InitMode})
	if err != nil {
		return nil, handleErr(err)
	}
	out := make([]PoppedMessage, len(msgs))
	for i, m := range msgs {
		out[i] = PoppedMessage{Record: m.Record, Handle: m.Handle, DeliveryAttempt: m.DeliveryAttempt}
	}
	return out, nil
}

func (c popConsumer) Ack(group, topic, handle string) error {
	return handleErr(c.s.Ack(group, topic, handle))
}

func (c popConsumer) ChangeInvisible(group, topic, handle string, d time.Duration) (string, error) {
	h, err := c.s.ChangeInvisible(group, topic, handle, d)
	return h, handleErr(err)
}

func (c popConsumer) ToDLQ(group, topic, handle string) error {
	return handleErr(c.s.ToDLQ(group, topic, handle))
}

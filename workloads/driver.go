package workloads

import (
	"context"
	"errors"
)

// Message is one message to send. Body is owned by the Driver once Send is
// called.
type Message struct {
	Topic   string
	QueueID int32
	Keys    string // space-separated keys, RocketMQ style; "" for none
	Tags    string // "" for none
	Body    []byte
}

// A Driver is the system under test as the producers see it.
type Driver interface {
	// Name identifies the system in results ("engine", "broker", "nats", "fake").
	Name() string
	// Send returns when the system acknowledges m under its own durability
	// policy. It must honour ctx cancellation where the system allows it.
	Send(ctx context.Context, m *Message) error
	// Close releases the driver; no call may be in progress.
	Close() error
}

// A Source is the system under test as the consumers see it. Offsets are
// logical: the index of a message within its (topic, queue).
type Source interface {
	// Pull reads up to max messages of (topic, queueID) starting at offset and
	// returns their bodies and the offset after the last one returned. With
	// nothing new it returns no bodies, next == offset and a nil error.
	Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) (bodies [][]byte, next int64, err error)
	// MaxOffset is the offset the next message of (topic, queueID) will get.
	MaxOffset(topic string, queueID int32) (int64, error)
}

// A ByteLocator is an optional Source extension: OffsetBytesBehind returns
// the offset of the oldest message such that the bodies from it to the end of
// (topic, queueID) total at most bytes (the engine answers from its consume
// queue's size fields). Lagging consumers without it estimate from the mean
// size of the last messages.
type ByteLocator interface {
	OffsetBytesBehind(topic string, queueID int32, bytes int64) (int64, error)
}

// QueueRef names one queue.
type QueueRef struct {
	Topic   string `json:"topic"`
	QueueID int32  `json:"queue_id"`
}

// ErrClosed is returned by the fake (and may be by real drivers) after Close.
var ErrClosed = errors.New("workloads: driver closed")

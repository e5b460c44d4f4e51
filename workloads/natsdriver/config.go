package natsdriver

import (
	"fmt"
	"time"
)

// Config configures the embedded server and the driver.
type Config struct {
	Dir string // JetStream store directory (required by Open and StartServer); the server adds jetstream/ below it

	// SyncAlways is sync_interval: always: fsync after every flush.
	SyncAlways bool
	// SyncInterval is the periodic fsync interval when SyncAlways is false;
	// 0 takes the server default (2 min).
	SyncInterval time.Duration

	Topics []string // streams created by Open: Topics x [0, Queues)
	Queues int      // queues per topic (1)

	MaxBytes int64 // per-stream byte limit, oldest messages discarded; <= 0: unlimited
	Replicas int   // stream replicas; only 1 (a single server) is possible

	// AsyncWindow > 0 switches Send to windowed async publishing (see the
	// package doc); 0 is a synchronous publish per Send.
	AsyncWindow int
	// MaxAsyncPending bounds async publishes awaiting their ack; a Send
	// beyond it blocks until acks arrive (up to RequestTimeout). 0: 4096.
	MaxAsyncPending int

	// Loopback makes the server listen on 127.0.0.1 (a free port) and the
	// client connect to it over TCP, so the comparison with a broker driven
	// over loopback TCP is like for like; false keeps the in-process pipe.
	Loopback bool

	PullMaxBytes   int           // cap on the body bytes one Pull asks for (8 MiB)
	MaxPayload     int32         // largest message body the server accepts (8 MiB)
	RequestTimeout time.Duration // bound on API calls, Pull and Send when ctx has no deadline (10 s)
}

// DefaultConfig is one queue of no topics (streams are created on first
// Send), periodic sync at the server default, synchronous publishing.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:            dir,
		Queues:         1,
		Replicas:       1,
		PullMaxBytes:   8 << 20,
		MaxPayload:     8 << 20,
		RequestTimeout: 10 * time.Second,
	}
}

// withDefaults fills zero fields and validates the result.
func (c Config) withDefaults() (Config, error) {
	def := DefaultConfig(c.Dir)
	if c.Queues == 0 {
		c.Queues = def.Queues
	}
	if c.Replicas == 0 {
		c.Replicas = def.Replicas
	}
	if c.PullMaxBytes == 0 {
		c.PullMaxBytes = def.PullMaxBytes
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = def.MaxPayload
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = def.RequestTimeout
	}
	if c.MaxAsyncPending == 0 {
		c.MaxAsyncPending = 4096
	}
	switch {
	case c.Replicas != 1:
		return c, fmt.Errorf("%w: replicas %d (a single embedded server supports 1)", ErrConfig, c.Replicas)
	case c.Queues < 0, c.AsyncWindow < 0, c.MaxAsyncPending < 0, c.PullMaxBytes < 0, c.MaxPayload < 0,
		c.SyncInterval < 0, c.RequestTimeout < 0:
		return c, fmt.Errorf("%w: negative queues, window, pending, pull bytes, payload, sync interval or timeout", ErrConfig)
	}
	for _, t := range c.Topics {
		if t == "" {
			return c, fmt.Errorf("%w: empty topic name", ErrConfig)
		}
	}
	return c, nil
}

package rmq5driver

import "time"

// Config configures a Driver. Start from DefaultConfig.
type Config struct {
	// Name is Driver.Name ("rocketmq5").
	Name string
	// Endpoint is the gRPC MessagingService ("host:port": brokerlab's
	// `broker --grpc-listen`, RocketMQ's proxy). Required.
	Endpoint string
	// Topics are the topics the producer sends to: the client fetches their
	// routes when it starts and waits for the service's settings over them
	// (it never starts without one). Sends to other topics fetch their
	// route on first use. Required.
	Topics []string
	// Consume starts the simple consumer in New, subscribed to Topics, while
	// the producer starts (each waits about a second for the service's
	// settings); otherwise it starts on the first Pull or MaxOffset.
	Consume bool
	// ConsumerGroup is the simple consumer's group. The broker's POP
	// service spreads a group's messages over its consumers, so two drivers
	// of one group split the messages between them.
	ConsumerGroup string
	// SendTimeout bounds each send when its context has no earlier deadline
	// (3 s, as rmqdriver).
	SendTimeout time.Duration
	// MaxAttempts is how often the client tries a send (its default, 3:
	// the first try and two retries, as rmqdriver's Retries 2).
	MaxAttempts int
	// ReceiveBatch is the most messages one ReceiveMessage asks for (32,
	// the harness's pull batch).
	ReceiveBatch int
	// Invisible is the invisible duration of a received message: how long
	// the broker waits for its ack before delivering it again (30 s; the
	// proxy refuses less than its minimum, 10 s by default).
	Invisible time.Duration
	// Await is the simple consumer's await duration (100 ms: a caught-up
	// consumer comes back quickly, as rmqdriver's capped hold). The client
	// sends it only as the receive call's deadline (with its request
	// timeout on top); the broker's gRPC front end holds an empty receive
	// for that deadline less its reserve, as Java's proxy does.
	Await time.Duration
	// Receivers is the number of receive loops (each receives a batch, hands
	// its bodies over and acks each message before receiving again) (2).
	Receivers int
	// PullHold is how long Pull waits for a message of its queue before it
	// returns none (50 ms).
	PullHold time.Duration
	// TLS selects TLS on the gRPC connection (off: the remoting port the
	// harness compares with is plain TCP). The client keeps this as a
	// process-wide setting: the first driver created decides it.
	TLS bool
	// LogDir is where the client writes its log ("" = a temporary
	// directory made by New and removed by Close; never ~/logs).
	LogDir string
	// LogLevel is the client's log level: debug, info, warn or error
	// ("error").
	LogLevel string
}

// DefaultConfig is a driver for the gRPC front end at 127.0.0.1:8081.
func DefaultConfig() Config {
	return Config{
		Name:          "rocketmq5",
		Endpoint:      "127.0.0.1:8081",
		ConsumerGroup: "brokerlab_rmq5_consumer",
		SendTimeout:   3 * time.Second,
		MaxAttempts:   3,
		ReceiveBatch:  32,
		Invisible:     30 * time.Second,
		Await:         100 * time.Millisecond,
		Receivers:     2,
		PullHold:      50 * time.Millisecond,
		LogLevel:      "error",
	}
}

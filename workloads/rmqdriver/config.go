package rmqdriver

import "time"

// Config configures a Driver. Start from DefaultConfig.
type Config struct {
	// Name is Driver.Name ("rocketmq").
	Name string
	// Namesrv lists the name servers ("host:port", several separated by
	// ';' or ','). Required.
	Namesrv string
	// ProducerGroup and ConsumerGroup are the client's groups.
	ProducerGroup string
	ConsumerGroup string
	// InstanceName names the client instance; "" picks one unique to the
	// driver (the client shares one instance among producers and consumers
	// of the same name in a process).
	InstanceName string
	// SendTimeout bounds each send (the client's default, 3 s).
	SendTimeout time.Duration
	// Retries is how often the client retries a failed send (its default, 2).
	Retries int
	// RouteTTL is how long a topic's queue list is cached (30 s).
	RouteTTL time.Duration
	// LogLevel is the client's log level: debug, info, warn, error or
	// fatal ("error").
	LogLevel string
}

// DefaultConfig is a driver for the name server at 127.0.0.1:9876.
func DefaultConfig() Config {
	return Config{
		Name:          "rocketmq",
		Namesrv:       "127.0.0.1:9876",
		ProducerGroup: "brokerlab_rmq_producer",
		ConsumerGroup: "brokerlab_rmq_consumer",
		SendTimeout:   3 * time.Second,
		Retries:       2,
		RouteTTL:      30 * time.Second,
		LogLevel:      "error",
	}
}

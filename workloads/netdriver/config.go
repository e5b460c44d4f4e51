package netdriver

import (
	"time"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Config configures a Driver. Start from DefaultConfig.
type Config struct {
	// Name is Driver.Name ("broker").
	Name string
	// Namesrv lists name servers ("host:port", several separated by ';').
	Namesrv string
	// Broker is a broker address used directly when Namesrv is empty.
	Broker string
	// ProducerGroup and ConsumerGroup go into the request headers.
	ProducerGroup string
	ConsumerGroup string
	// Timeout bounds each request (3 s, the Go client's send timeout).
	Timeout time.Duration
	// RouteTTL is how long a route is cached (30 s, the clients' refresh).
	RouteTTL time.Duration
	// CreateQueues, when > 0, creates an unknown topic with that many queues
	// on every master broker (UPDATE_AND_CREATE_TOPIC) on first use.
	CreateQueues int32
	// Batch > 1 groups concurrent Sends of one queue into batches of up to
	// Batch messages; MaxInFlightBatches bounds the batches of one queue in
	// flight at once (2).
	Batch              int
	MaxInFlightBatches int
	// Client configures the remoting client (one connection per broker).
	Client remoting.ClientConfig
	// TLS dials name servers and brokers over TLS (TLS 1.2+), accepting any
	// server certificate as the official clients do (WithTls(true)), unless
	// Client.TLS is set, which is then used as it is.
	TLS bool
}

// DefaultConfig is a driver for the broker at 127.0.0.1:10911, without a
// name server, sending one message per request.
func DefaultConfig() Config {
	return Config{
		Name:               "broker",
		Broker:             "127.0.0.1:10911",
		ProducerGroup:      "brokerlab_producer",
		ConsumerGroup:      "brokerlab_consumer",
		Timeout:            3 * time.Second,
		RouteTTL:           30 * time.Second,
		MaxInFlightBatches: 2,
		Client:             remoting.DefaultClientConfig(),
	}
}

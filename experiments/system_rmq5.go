package experiments

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/workloads/rmq5driver"
)

// startGRPCFront serves the gRPC front end (engine/proxy, as `brokerlab
// broker --grpc-listen 127.0.0.1:0`) of a started broker: client=rocketmq5
// cells, in this process or in the child.
func startGRPCFront(b *broker.Broker, log *slog.Logger) (*proxy.Server, error) {
	p, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0", Broker: b, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("experiments: grpc front end: %w", err)
	}
	if err := p.Start(context.Background()); err != nil {
		return nil, fmt.Errorf("experiments: grpc front end: %w", err)
	}
	return p, nil
}

// openV5Client is the official RocketMQ 5 Go client as the cell's producers
// and consumers (workloads/rmq5driver), over gRPC at endpoint (its log in a
// temporary directory, errors only).
func openV5Client(exp Experiment, endpoint string) (*rmq5driver.Driver, error) {
	cfg := rmq5driver.DefaultConfig()
	cfg.Endpoint = endpoint
	cfg.Topics = topicNames(exp)
	cfg.ConsumerGroup = ConsumerGroup
	cfg.Consume = exp.Workload.Tailing > 0 // starts beside the producer
	d, err := rmq5driver.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("experiments: RocketMQ 5 client: %w", err)
	}
	return d, nil
}

// validateRocketMQ5Consumers refuses a client=rocketmq5 cell with more
// than one tailing consumer or any lagging one: one POP group shares its
// messages instead of giving each consumer all of them. Checked on whole
// cells (Cells), as validateDSync: a matrix axis may set the client.
func validateRocketMQ5Consumers(c *Cell) error {
	w := c.Exp.Workload
	if c.Exp.Engine.Client == ClientRocketMQ5 && (w.Tailing > 1 || w.Lagging > 0) {
		return fmt.Errorf("%w: cell %s: engine.client = rocketmq5 takes at most one tailing consumer and no lagging one (workload tailing %d, lagging %d)", ErrConfig, c.Name, w.Tailing, w.Lagging)
	}
	return nil
}

package experiments

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/workloads/rmqdriver"
)

// rmqMaxHold caps how long the broker holds a pull that finds nothing in
// client=rocketmq cells: the official client always asks for 20 s and
// ignores its context meanwhile, so a caught-up consumer would otherwise
// sit out whole intervals (brokerlab's netdriver never asks for a hold).
const rmqMaxHold = 100 * time.Millisecond

// startLoopbackNamesrv starts the in-process name server a client=rocketmq
// cell's broker registers with: the official client finds brokers only
// through one.
func startLoopbackNamesrv(log *slog.Logger) (*namesrv.Server, error) {
	cfg := namesrv.DefaultConfig()
	cfg.Remoting.Addr = "127.0.0.1:0"
	cfg.Logger = log
	ns := namesrv.New(cfg)
	if err := ns.Start(context.Background()); err != nil {
		return nil, fmt.Errorf("experiments: name server for the official client: %w", err)
	}
	return ns, nil
}

// openOfficialClient is the official Apache RocketMQ Go client as the
// cell's producers and consumers (workloads/rmqdriver), through ns.
func openOfficialClient(ns string) (*rmqdriver.Driver, error) {
	cfg := rmqdriver.DefaultConfig()
	cfg.Namesrv = ns
	cfg.ProducerGroup = "brokerlab_bench_producer"
	cfg.ConsumerGroup = ConsumerGroup
	d, err := rmqdriver.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("experiments: official client: %w", err)
	}
	return d, nil
}

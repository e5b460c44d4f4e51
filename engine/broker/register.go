package broker

import (
	"context"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
)

// kickRegister asks the registration loop to register now (a topic
// changed). It never blocks; kicks coalesce.
func (b *Broker) kickRegister() {
	select {
	case b.regKick <- struct{}{}:
	default:
	}
}

// registerLoop registers every RegisterInterval and on every kick until
// Shutdown.
func (b *Broker) registerLoop() {
	defer close(b.regDone)
	t := time.NewTicker(b.cfg.RegisterInterval)
	defer t.Stop()
	for {
		select {
		case <-b.regStop:
			return
		case <-t.C:
		case <-b.regKick:
		}
		b.registerAll()
	}
}

// registerAll sends REGISTER_BROKER with the whole topic table to every name
// server at once and waits for them (each bounded by RegisterTimeout).
func (b *Broker) registerAll() {
	if len(b.cfg.NamesrvAddrs) == 0 {
		return
	}
	req := namesrv.RegisterBrokerRequest{
		ClusterName: b.cfg.ClusterName,
		BrokerName:  b.cfg.BrokerName,
		BrokerAddr:  b.addr,
		BrokerID:    namesrv.MasterID,
		Body:        namesrv.RegisterBrokerBody{FilterServerList: []string{}, TopicConfigSerializeWrapper: b.topics.wrapper()},
	}
	var wg sync.WaitGroup
	for _, ns := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RegisterTimeout)
			defer cancel()
			if _, err := namesrv.RegisterBroker(ctx, b.ns, ns, req); err != nil {
				b.log.Warn("register broker failed", "namesrv", ns, "err", err)
				return
			}
			b.log.Debug("registered", "namesrv", ns, "topics", len(req.Body.TopicConfigSerializeWrapper.TopicConfigTable),
				"dataVersion", req.Body.TopicConfigSerializeWrapper.DataVersion.Counter)
		}()
	}
	wg.Wait()
}

// unregisterAll sends UNREGISTER_BROKER to every name server at once.
func (b *Broker) unregisterAll() {
	var wg sync.WaitGroup
	for _, ns := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RegisterTimeout)
			defer cancel()
			err := namesrv.UnregisterBroker(ctx, b.ns, ns, namesrv.UnregisterBrokerRequest{
				ClusterName: b.cfg.ClusterName, BrokerName: b.cfg.BrokerName, BrokerAddr: b.addr, BrokerID: namesrv.MasterID})
			if err != nil {
				b.log.Warn("unregister broker failed", "namesrv", ns, "err", err)
			}
		}()
	}
	wg.Wait()
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
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

// ErrNotRegistered reports a name server that did not take a registration
// (down, timed out, or answered an error). The broker's own state is kept;
// the periodic registration sends it again.
var ErrNotRegistered = errors.New("broker: name server did not take the registration")

// registrar serialises REGISTER_BROKER rounds (Java's synchronized
// registerBrokerAll: two rounds in flight could reach a name server out of
// order, an older topic table overwriting a newer one) and remembers, per
// name server, the newest DataVersion counter it took, so that a caller
// waiting for a change is answered by any round that carried it.
type registrar struct {
	mu     sync.Mutex       // held for a whole round
	lastOK map[string]int64 // name server → newest counter it took; under mu
	last   struct {         // the last round; under mu
		version int64
		err     error
		end     time.Time
	}
	covered atomic.Int64 // min of lastOK over the name servers: every one has this
}

// registerAll runs one registration round (periodic and on kicks) and logs
// the name servers that did not take it.
func (b *Broker) registerAll() {
	b.reg.mu.Lock()
	defer b.reg.mu.Unlock()
	if err := b.registerRoundLocked(); err != nil {
		b.log.Warn("register broker failed", "err", err)
	}
}

// awaitRegistered returns once every configured name server took a
// registration whose DataVersion counter is at least version — a round that
// started after the change it stands for — running one if none did. It
// fails with ErrNotRegistered naming each name server that did not take it
// (within RegisterTimeout). Callers queued behind a round that carried
// their change and ended while they waited share its outcome instead of
// running another round each.
func (b *Broker) awaitRegistered(version int64) error {
	if len(b.cfg.NamesrvAddrs) == 0 || version <= b.reg.covered.Load() {
		return nil
	}
	arrived := time.Now()
	b.reg.mu.Lock()
	defer b.reg.mu.Unlock()
	if version <= b.reg.covered.Load() {
		return nil
	}
	if b.reg.last.err != nil && b.reg.last.version >= version && b.reg.last.end.After(arrived) {
		return b.reg.last.err
	}
	return b.registerRoundLocked()
}

// routeResponse is nil once every name server took the registration of a
// change to topic at version, else SYSTEM_ERROR naming the name servers
// that did not (the broker keeps the change; the periodic registration
// sends it again).
func (b *Broker) routeResponse(topic, what string, version int64) *remoting.Command {
	if err := b.awaitRegistered(version); err != nil {
		return responsef(protocol.RespSystemError, "topic[%s] %s on broker %s, but not registered with every name server "+
			"(the broker retries every %v): %v", topic, what, b.cfg.BrokerName, b.cfg.RegisterInterval, err)
	}
	return nil
}

// registerRoundLocked sends REGISTER_BROKER with the whole topic table to
// every name server at once and waits for them (each bounded by
// RegisterTimeout). REQUIRES: b.reg.mu held.
func (b *Broker) registerRoundLocked() error {
	if len(b.cfg.NamesrvAddrs) == 0 {
		return nil
	}
	wrapper := b.topics.Wrapper()
	version := wrapper.DataVersion.Counter
	req := namesrv.RegisterBrokerRequest{
		ClusterName: b.cfg.ClusterName,
		BrokerName:  b.cfg.BrokerName,
		BrokerAddr:  b.addr,
		BrokerID:    protocol.MasterID,
		Body:        protocol.RegisterBrokerBody{FilterServerList: []string{}, TopicConfigSerializeWrapper: wrapper},
	}
	errs := make([]error, len(b.cfg.NamesrvAddrs))
	b.toEveryNamesrv(func(ctx context.Context, i int, ns string) {
		if _, err := b.registerWithHA(ctx, ns, req); err != nil {
			errs[i] = fmt.Errorf("%w: %s: %w", ErrNotRegistered, ns, err)
			return
		}
		b.log.Debug("registered", "namesrv", ns, "topics", len(wrapper.TopicConfigTable), "dataVersion", version)
	})
	if b.reg.lastOK == nil {
		b.reg.lastOK = make(map[string]int64, len(b.cfg.NamesrvAddrs))
	}
	covered := int64(math.MaxInt64)
	for i, ns := range b.cfg.NamesrvAddrs {
		if errs[i] == nil {
			b.reg.lastOK[ns] = max(b.reg.lastOK[ns], version)
		}
		covered = min(covered, b.reg.lastOK[ns])
	}
	b.reg.covered.Store(covered)
	err := errors.Join(errs...)
	b.reg.last.version, b.reg.last.err, b.reg.last.end = version, err, time.Now()
	return err
}

// unregisterAll sends UNREGISTER_BROKER to every name server at once.
func (b *Broker) unregisterAll() {
	b.toEveryNamesrv(func(ctx context.Context, _ int, ns string) {
		err := namesrv.UnregisterBroker(ctx, b.ns, ns, namesrv.UnregisterBrokerRequest{
			ClusterName: b.cfg.ClusterName, BrokerName: b.cfg.BrokerName, BrokerAddr: b.addr, BrokerID: b.cfg.BrokerID})
		if err != nil {
			b.log.Warn("unregister broker failed", "namesrv", ns, "err", err)
		}
	})
}

// toEveryNamesrv calls f for every name server (i its index in
// NamesrvAddrs) at once, each with its own RegisterTimeout, and returns
// when all have returned.
func (b *Broker) toEveryNamesrv(f func(ctx context.Context, i int, ns string)) {
	var wg sync.WaitGroup
	for i, ns := range b.cfg.NamesrvAddrs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), b.cfg.RegisterTimeout)
			defer cancel()
			f(ctx, i, ns)
		})
	}
	wg.Wait()
}

package experiments

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/ha"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/workloads/netdelay"
)

// replica is a loopback broker's slave for the replication variable: a
// store of its own (mmap, asynchronous flush, as RocketMQ slaves usually
// run) fed by an HA client, through a netdelay relay when the link has a
// round-trip time.
type replica struct {
	st    *store.Store
	cli   *ha.Client
	relay *netdelay.Relay

	mu      sync.Mutex
	samples []lagSample // guarded by mu
	stop    chan struct{}
	done    chan struct{}
}

// lagSample is the replication lag (bytes the master has and the slave
// not yet) at one instant.
type lagSample struct {
	t     time.Time
	bytes int64
}

// lagEvery is how often the replication lag is sampled; maxLagSamples
// bounds the samples kept (about 28 h at 10 per second).
const (
	lagEvery      = 100 * time.Millisecond
	maxLagSamples = 1 << 20
)

// haRole is the master role a replication setting asks for.
func haRole(replication string) broker.BrokerRole {
	if replication == "sync" {
		return broker.SyncMaster
	}
	return broker.AsyncMaster
}

// startReplica opens the slave store under dir/slave and connects it to
// the broker's HA service, through a relay adding en.RTT, and waits until
// the master streams to it (a SYNC send would otherwise be
// SLAVE_NOT_AVAILABLE).
func startReplica(en Engine, dir string, b *broker.Broker, seed uint64, log *slog.Logger) (*replica, error) {
	svc := b.HAService()
	if svc == nil {
		return nil, errors.New("experiments: the broker runs no HA service")
	}
	r := &replica{}
	target := b.HAAddr()
	if en.RTT > 0 {
		relay, err := netdelay.New(netdelay.ForRTT("127.0.0.1:0", target, en.RTT.D(), seed))
		if err != nil {
			return nil, err
		}
		r.relay, target = relay, relay.Addr()
	}
	sc := store.DefaultConfig(filepath.Join(dir, "slave"))
	sc.CommitLog.Path = iopath.Mmap
	sc.CommitLog.Flush = flush.DefaultConfig(flush.Async)
	sc.CommitLog.SegmentSize = int64(en.SegmentSize)
	sc.Logger = log
	st, err := store.Open(sc)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("experiments: slave store: %w", err)
	}
	r.st = st
	r.cli = ha.NewClient(st, ha.ClientConfig{MasterAddr: target, Logger: log})
	deadline := time.Now().Add(30 * time.Second)
	for !svc.IsSlaveOK(1) {
		if time.Now().After(deadline) {
			r.close()
			return nil, errors.New("experiments: the slave did not connect to the master within 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	master := b.Store().(broker.EngineStore).EngineStore()
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go r.sample(master)
	return r, nil
}

// sample records the replication lag every lagEvery until close.
func (r *replica) sample(master *store.Store) {
	defer close(r.done)
	t := time.NewTicker(lagEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			lag := r.lagBytes(master)
			r.mu.Lock()
			if len(r.samples) < maxLagSamples {
				r.samples = append(r.samples, lagSample{now, lag})
			}
			r.mu.Unlock()
		}
	}
}

// lagAt is the last lag sampled at or before t (false before the first).
func (r *replica) lagAt(t time.Time) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.samples), func(i int) bool { return r.samples[i].t.After(t) })
	if i == 0 {
		return 0, false
	}
	return r.samples[i-1].bytes, true
}

// lagBytes is how far the slave's stored log is behind the master's.
func (r *replica) lagBytes(master *store.Store) int64 {
	return max(0, master.MaxPhyOffset()-r.st.ReplicaOffset())
}

func (r *replica) close() error {
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
	}
	var errs []error
	if r.cli != nil {
		errs = append(errs, r.cli.Close())
	}
	if r.st != nil {
		errs = append(errs, r.st.Close())
	}
	if r.relay != nil {
		errs = append(errs, r.relay.Close())
	}
	return errors.Join(errs...)
}

// configureHA sets a loopback broker's role for the replication setting
// (its HA service on an ephemeral loopback port).
func configureHA(bc *broker.Config, en Engine, log *slog.Logger) {
	if en.Replication == "" || en.Replication == "none" {
		return
	}
	bc.Role = haRole(en.Replication)
	bc.HA = ha.Config{ListenAddr: "127.0.0.1:0", Logger: log}
}

package experiments

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/engine/vfs/faultfs"
	"github.com/brokerlab/brokerlab/workloads"
	"github.com/brokerlab/brokerlab/workloads/netdriver"
	"github.com/brokerlab/brokerlab/workloads/rmq5driver"
	"github.com/brokerlab/brokerlab/workloads/rmqdriver"
)

// brokerSystem is the engine behind the broker, driven over loopback TCP
// with brokerlab's remoting client: the store plus the wire, framing and the
// broker's processors.
type brokerSystem struct {
	b   *broker.Broker
	st  *store.Store
	d   *netdriver.Driver
	inj interface{ Stall(time.Duration) }
	cfg store.Config
	rep *replica // the slave with replication async or sync
	// stages is the broker's per-stage breakdown of sends (engine.stages).
	stages *broker.StageRecorder
	// With client=rocketmq the official client drives the cell (d only
	// creates the topics) through the in-process name server ns.
	rd *rmqdriver.Driver
	ns *namesrv.Server
	// With client=rocketmq5 the official RocketMQ 5 client drives the cell
	// (r5) over the broker's gRPC front end px.
	r5 *rmq5driver.Driver
	px *proxy.Server
}

// brokerConfigs are the broker and store configs of a cell whose broker
// listens on 127.0.0.1: loopback cells and process cells (child.go) share
// them, so both measure the same broker.
func brokerConfigs(en Engine, dir string, producers int, h sysHooks, log *slog.Logger) (broker.Config, store.Config, *faultfs.Injector, error) {
	sc, inj, err := engineConfig(en, dir, h)
	if err != nil {
		return broker.Config{}, store.Config{}, nil, err
	}
	bc := broker.DefaultConfig()
	bc.ListenAddr = "127.0.0.1:0"
	bc.NamesrvAddrs = nil
	bc.SendWorkers = max(bc.SendWorkers, producers)
	bc.Logger, sc.Logger = log, log
	return bc, sc, inj, nil
}

// driverConfig is brokerlab's client configured for exp (TLS, queues to
// create, batching); the caller says where the broker is.
func driverConfig(exp Experiment) netdriver.Config {
	dc := netdriver.DefaultConfig()
	dc.TLS = exp.Engine.TLS
	dc.CreateQueues = int32(exp.Workload.Queues)
	dc.Batch = exp.Workload.Batch
	return dc
}

// dialBroker is brokerlab's client for the broker at addr, with the
// experiment's topics created (loopback and process cells).
func dialBroker(exp Experiment, addr string) (*netdriver.Driver, error) {
	dc := driverConfig(exp)
	dc.Broker = addr
	d, err := netdriver.New(dc)
	if err != nil {
		return nil, err
	}
	for _, t := range topicNames(exp) {
		if err := d.CreateTopic(context.Background(), t, int32(exp.Workload.Queues)); err != nil {
			d.Close()
			return nil, fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	return d, nil
}

func openBrokerSystem(exp Experiment, dir string, h sysHooks) (_ *brokerSystem, err error) {
	// Only warnings and errors: a run's output is its progress lines.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bc, sc, inj, err := brokerConfigs(exp.Engine, dir, exp.Workload.Producers, h, quiet)
	if err != nil {
		return nil, err
	}
	if exp.Engine.TLS {
		bc.Remoting.TLS = remoting.TLSConfig{Mode: remoting.TLSEnforcing}
	}
	configureHA(&bc, exp.Engine, quiet)
	var ns *namesrv.Server
	if exp.Engine.Client == ClientRocketMQ {
		if ns, err = startLoopbackNamesrv(quiet); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = ns.Shutdown(context.Background())
			}
		}()
		bc.NamesrvAddrs = []string{ns.Addr()}
		bc.MaxSuspend = rmqMaxHold
	}
	b, err := broker.New(bc, broker.OpenStore(sc, bc.DelayLevels))
	if err != nil {
		return nil, err
	}
	var stages *broker.StageRecorder
	if exp.Engine.Stages {
		stages = b.RecordStages()
	}
	if err := b.Start(context.Background()); err != nil {
		return nil, err
	}
	st := b.Store().(broker.EngineStore).EngineStore() // OpenStore's
	d, err := dialBroker(exp, b.Addr())
	if err != nil {
		b.Shutdown(context.Background())
		return nil, err
	}
	var rd *rmqdriver.Driver
	if ns != nil {
		if rd, err = openOfficialClient(ns.Addr()); err != nil {
			d.Close()
			b.Shutdown(context.Background())
			return nil, err
		}
	}
	var px *proxy.Server
	var r5 *rmq5driver.Driver
	if exp.Engine.Client == ClientRocketMQ5 {
		if px, err = startGRPCFront(b, quiet); err == nil {
			if r5, err = openV5Client(exp, px.Addr()); err != nil {
				_ = px.Shutdown(context.Background())
			}
		}
		if err != nil {
			d.Close()
			b.Shutdown(context.Background())
			return nil, err
		}
	}
	var rep *replica
	if exp.Engine.Replication != "none" {
		if rep, err = startReplica(exp.Engine, dir, b, uint64(exp.Seed), quiet); err != nil {
			if rd != nil {
				rd.Close()
			}
			if r5 != nil {
				r5.Close()
				_ = px.Shutdown(context.Background())
			}
			d.Close()
			b.Shutdown(context.Background())
			return nil, err
		}
	}
	return &brokerSystem{b: b, st: st, d: d, rd: rd, ns: ns, r5: r5, px: px, cfg: sc, rep: rep, stages: stages, inj: stallFunc(func(t time.Duration) { stallNext(inj, t) })}, nil
}

// StageRecorder is the broker's send-stage recorder (nil without engine.stages).
func (s *brokerSystem) StageRecorder() *broker.StageRecorder { return s.stages }

type stallFunc func(time.Duration)

func (f stallFunc) Stall(d time.Duration) { f(d) }

func (s *brokerSystem) Driver() workloads.Driver {
	if s.r5 != nil {
		return s.r5
	}
	if s.rd != nil {
		return s.rd
	}
	return s.d
}

func (s *brokerSystem) Source() workloads.Source {
	if s.r5 != nil {
		return s.r5
	}
	if s.rd != nil {
		return s.rd
	}
	return s.d
}
func (s *brokerSystem) SegmentDir() string    { return commitlog.SegmentDir(s.cfg.Root) }
func (s *brokerSystem) Stall(d time.Duration) { s.inj.Stall(d) }

func (s *brokerSystem) Stats() sysStats {
	if s.st == nil {
		return sysStats{CacheHitRate: -1}
	}
	st := storeStats(s.st)
	if s.rep != nil {
		st.ReplicationLagAt = s.rep.lagAt
	}
	return st
}

func (s *brokerSystem) Settle(timeout time.Duration) error {
	if s.st != nil && !s.st.WaitDispatched(timeout) {
		return fmt.Errorf("experiments: dispatch still behind after %v", timeout)
	}
	return nil
}

func (s *brokerSystem) Close() error {
	var rderr error
	if s.rd != nil { // first: its consumers persist offsets to the broker
		rderr = s.rd.Close()
	}
	if s.r5 != nil { // the RocketMQ 5 client, then its front end
		rderr = s.r5.Close()
		_ = s.px.Shutdown(context.Background())
	}
	derr := s.d.Close()
	if derr == nil {
		derr = rderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rerr error
	if s.rep != nil { // the slave goes first: its link ends without a warning
		rerr = s.rep.close()
	}
	berr := s.b.Shutdown(ctx)
	if berr == nil {
		berr = rerr
	}
	if s.ns != nil {
		_ = s.ns.Shutdown(ctx)
	}
	if p := s.cfg.CommitLog.IO.Pool; p != nil {
		p.Close()
	}
	if berr != nil {
		return berr
	}
	return derr
}

// remoteSystem is a broker somewhere else, found through its name server
// (--namesrv host:port): only what the wire shows is measured.
type remoteSystem struct{ d *netdriver.Driver }

func openRemoteSystem(exp Experiment, namesrv string) (*remoteSystem, error) {
	dc := driverConfig(exp)
	dc.Namesrv = namesrv
	d, err := netdriver.New(dc)
	if err != nil {
		return nil, err
	}
	return &remoteSystem{d: d}, nil
}

func (s *remoteSystem) Driver() workloads.Driver   { return s.d }
func (s *remoteSystem) Source() workloads.Source   { return s.d }
func (s *remoteSystem) SegmentDir() string         { return "" }
func (s *remoteSystem) Stats() sysStats            { return sysStats{CacheHitRate: -1} }
func (s *remoteSystem) Stall(time.Duration)        {}
func (s *remoteSystem) Settle(time.Duration) error { return nil }
func (s *remoteSystem) Close() error               { return s.d.Close() }

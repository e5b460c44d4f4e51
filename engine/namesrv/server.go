package namesrv

import (
	"context"
	"log/slog"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Config configures a name server.
type Config struct {
	Remoting remoting.ServerConfig // listener and limits; Addr defaults to 127.0.0.1:9876

	// BrokerTimeout drops a broker that has not registered for this long,
	// unless its registration carried heartbeatTimeoutMillis.
	BrokerTimeout time.Duration
	// ScanInterval is how often brokers are checked against their timeout.
	ScanInterval time.Duration
	// Now is the clock liveness is measured with (nil = time.Now); tests inject one.
	Now func() time.Time

	// DeleteTopicWithBrokerRegistration drops a broker's queue data for topics
	// its registration no longer lists (Java's namesrv option, default false).
	DeleteTopicWithBrokerRegistration bool

	DefaultExecutor remoting.ExecutorConfig // every request but route queries
	ClientExecutor  remoting.ExecutorConfig // GET_ROUTEINFO_BY_TOPIC
	Logger          *slog.Logger            // nil = slog.Default(); also used by remoting if its Logger is nil
}

// DefaultConfig: 127.0.0.1:9876, 120 s broker timeout scanned every 5 s, and
// Java's pools (16 workers / 10000 queued, 8 / 50000 for route queries).
func DefaultConfig() Config {
	rc := remoting.DefaultServerConfig()
	rc.Addr = "127.0.0.1:9876"
	return Config{
		Remoting:        rc,
		BrokerTimeout:   120 * time.Second,
		ScanInterval:    5 * time.Second,
		DefaultExecutor: remoting.ExecutorConfig{Workers: 16, QueueSize: 10000},
		ClientExecutor:  remoting.ExecutorConfig{Workers: 8, QueueSize: 50000},
	}
}

// Server is a name server. Its methods are safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	routes *routeTable
	rs     *remoting.Server

	stopScan chan struct{}
	scanDone chan struct{}
}

// New builds a name server; Start begins serving.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, routes: newRouteTable(cfg.DeleteTopicWithBrokerRegistration), now: cfg.Now}
	s.log = cfg.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cfg.BrokerTimeout <= 0 {
		s.cfg.BrokerTimeout = 120 * time.Second
	}
	if s.cfg.ScanInterval <= 0 {
		s.cfg.ScanInterval = 5 * time.Second
	}
	rc := cfg.Remoting
	if rc.Logger == nil {
		rc.Logger = s.log
	}
	s.rs = remoting.NewServer(rc)
	def := s.rs.NewExecutor("namesrv-default", cfg.DefaultExecutor)
	client := s.rs.NewExecutor("namesrv-client", cfg.ClientExecutor)
	s.rs.RegisterProcessor(protocol.ReqGetRouteInfoByTopic, remoting.ProcessorFunc(s.getRouteInfo), client)
	for code, fn := range map[int32]remoting.ProcessorFunc{
		protocol.ReqRegisterBroker:                s.registerBroker,
		protocol.ReqUnregisterBroker:              s.unregisterBroker,
		protocol.ReqGetBrokerClusterInfo:          s.getBrokerClusterInfo,
		protocol.ReqGetAllTopicListFromNameserver: s.getAllTopicList,
		protocol.ReqDeleteTopicInNamesrv:          s.deleteTopic,
		protocol.ReqGetTopicsByCluster:            s.getTopicsByCluster,
		protocol.ReqQueryDataVersion:              s.queryDataVersion,
		protocol.ReqBrokerHeartbeat:               s.brokerHeartbeat,
	} {
		s.rs.RegisterProcessor(code, fn, def)
	}
	s.rs.RegisterDefaultProcessor(remoting.NotSupported, def)
	s.rs.OnConnClose(s.connClosed)
	return s
}

// Start listens and starts the liveness scan.
func (s *Server) Start(ctx context.Context) error {
	if err := s.rs.Start(ctx); err != nil {
		return err
	}
	s.stopScan = make(chan struct{})
	s.scanDone = make(chan struct{})
	go s.scanLoop()
	return nil
}

// Addr is the listening address, "" before Start.
func (s *Server) Addr() string { return s.rs.Addr() }

// Shutdown stops the scan and the remoting server (see remoting.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error {
	if s.stopScan != nil {
		select {
		case <-s.stopScan:
		default:
			close(s.stopScan)
		}
		<-s.scanDone
	}
	return s.rs.Shutdown(ctx)
}

// TopicRoute returns a copy of topic's route, as GET_ROUTEINFO_BY_TOPIC would.
func (s *Server) TopicRoute(topic string) (*protocol.TopicRouteData, bool) {
	return s.routes.topicRoute(topic)
}

// protocol.ClusterInfo returns a copy of the broker and cluster tables.
func (s *Server) ClusterInfo() *protocol.ClusterInfo { return s.routes.clusterInfo() }

func (s *Server) scanLoop() {
	defer close(s.scanDone)
	t := time.NewTicker(s.cfg.ScanInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopScan:
			return
		case <-t.C:
			s.scanNotActive()
		}
	}
}

// scanNotActive drops expired brokers and closes their connections.
func (s *Server) scanNotActive() {
	removed, conns := s.routes.scanNotActive(s.now())
	for _, k := range removed {
		s.log.Warn("namesrv: broker expired", "cluster", k.cluster, "addr", k.addr)
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

func (s *Server) connClosed(c *remoting.Conn) {
	for _, k := range s.routes.connClosed(c) {
		s.log.Info("namesrv: broker connection closed, broker removed", "cluster", k.cluster, "addr", k.addr)
	}
}

// Stats returns the name server's bad-input counters (requests answered
// with an error because of what they carried, connections closed on
// framing errors).
func (s *Server) Stats() remoting.ServerStats { return s.rs.Stats() }

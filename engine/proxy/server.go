package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Errors of the proxy.
var (
	ErrBadConfig = errors.New("proxy: bad config")
	ErrStarted   = errors.New("proxy: already started")
)

// RocketMQ's ProxyConfig defaults.
const (
	DefaultMaxBodySize        = 4 << 20
	DefaultInvisible          = 60 * time.Second
	DefaultLongPollingTimeout = 20 * time.Second
	defaultRequestTimeout     = 3 * time.Second
)

// Config configures a Server.
type Config struct {
	// Listen is the gRPC listen address (RocketMQ's proxy: 8081).
	Listen string
	// Broker is the started broker the proxy serves.
	Broker *broker.Broker
	// TLS is the remoting port's TLS setting. The gRPC port accepts TLS and
	// plaintext on one port, as RocketMQ's proxy does (its clients use TLS
	// by default), and only TLS when the mode is enforcing; the certificate
	// is the configured one, or an ephemeral self-signed one.
	TLS remoting.TLSConfig
	// BrokerTLS, if set, is used on the proxy's remoting connection to the
	// broker (needed when the broker's remoting port enforces TLS).
	BrokerTLS *tls.Config
	// ACL, if set, checks every call (see the package doc).
	ACL *acl.Checker
	// Consumer serves ReceiveMessage, AckMessage, ChangeInvisibleDuration and
	// ForwardMessageToDeadLetterQueue; nil uses the broker's POP service.
	Consumer Consumer
	// MaxBodySize bounds a message body (DefaultMaxBodySize when 0).
	MaxBodySize int
	// SkipMessageTypeCheck turns off the proxy's enableTopicMessageTypeCheck
	// (a send whose type differs from the topic's message.type is refused).
	SkipMessageTypeCheck bool
	// LongPolling is the long-polling timeout the server's settings give
	// consumers (30 s when 0).
	LongPolling time.Duration
	// MinInvisible is the shortest invisible duration ReceiveMessage accepts
	// (minInvisibleTimeMillsForRecv, 10 s when 0).
	MinInvisible time.Duration
	// Auto-renewal of the leases of messages received with auto_renew (the
	// push consumer), as Java's ReceiptHandleManager; zero values are
	// Java's defaults. Every RenewPeriod (5 s) the leases ending within
	// RenewAhead (10 s) of clients still connected are extended by
	// RenewDelays (1m 3m 5m 10m 30m 1h, one step per renewal) for up to
	// RenewMax (3 h), then given back after the group's retry delay; a
	// client gone (its Telemetry stream ended, or NotifyClientTermination)
	// has its leases made visible after ClearInvisible (1 s).
	RenewPeriod, RenewAhead, RenewMax, ClearInvisible time.Duration
	RenewDelays                                       []time.Duration
	Logger                                            *slog.Logger
}

// Server serves MessagingService for one broker. Safe for concurrent use.
type Server struct {
	v2.UnimplementedMessagingServiceServer

	cfg   Config
	log   *slog.Logger
	b     *broker.Broker
	rc    *remoting.Client
	grpc  *grpc.Server
	ln    net.Listener
	addr  string
	start atomic.Bool

	sessions sessionTable
	txns     txnTable
	leases   leaseTable
	queueSeq atomic.Uint32
	wg       sync.WaitGroup
	// stop is cancelled by Shutdown: long polls (receive, pull) end at once.
	stop       context.Context
	cancelStop context.CancelFunc
}

// New validates cfg and builds a server; Start listens.
func New(cfg Config) (*Server, error) {
	if cfg.Broker == nil || cfg.Broker.Addr() == "" {
		return nil, fmt.Errorf("%w: no started broker", ErrBadConfig)
	}
	if cfg.Listen == "" {
		return nil, fmt.Errorf("%w: no listen address", ErrBadConfig)
	}
	if cfg.Consumer == nil && cfg.Broker.Pop() != nil {
		cfg.Consumer = PopConsumer(cfg.Broker.Pop())
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = DefaultMaxBodySize
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{cfg: cfg, log: log.With("component", "grpc-proxy"), b: cfg.Broker}
	s.sessions.init()
	s.stop, s.cancelStop = context.WithCancel(context.Background())
	s.txns.init()
	s.leases.init()
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = s.log
	ccfg.TLS = cfg.BrokerTLS
	ccfg.RequestProcessor = remoting.ProcessorFunc(s.brokerRequest)
	s.rc = remoting.NewClient(ccfg)
	return s, nil
}

// Start listens on Config.Listen and serves until Shutdown.
func (s *Server) Start(ctx context.Context) error {
	if !s.start.CompareAndSwap(false, true) {
		return ErrStarted
	}
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamAuth),
		grpc.MaxRecvMsgSize(s.cfg.MaxBodySize + 1<<20),
	}
	tc, err := serverTLS(s.cfg.TLS, s.cfg.Listen)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	raw, err := lc.Listen(ctx, "tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	ln := &mixedListener{Listener: raw, tc: tc, tlsOnly: s.cfg.TLS.Mode == remoting.TLSEnforcing}
	s.ln, s.addr = ln, raw.Addr().String()
	s.grpc = grpc.NewServer(opts...)
	v2.RegisterMessagingServiceServer(s.grpc, s)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		s.renewLoop()
	}()
	go func() {
		defer s.wg.Done()
		if err := s.grpc.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.log.Error("grpc serve", "err", err)
		}
	}()
	s.log.Info("grpc proxy started", "addr", s.addr, "broker", s.b.Addr(), "tls", s.cfg.TLS.Enabled())
	return nil
}

// Addr is the listen address, "" before Start.
func (s *Server) Addr() string { return s.addr }

// Shutdown ends every stream and call, waiting for them until ctx is done,
// then closes the connection to the broker.
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancelStop()
	if s.grpc != nil {
		s.sessions.closeAll()
		done := make(chan struct{})
		go func() { s.grpc.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			s.grpc.Stop()
		}
		s.wg.Wait()
	}
	return s.rc.Close()
}

// invoke sends req to the broker, signed with the caller's account.
func (s *Server) invoke(ctx context.Context, req *remoting.Command) (*remoting.Command, error) {
	if ci := callOf(ctx); ci != nil && ci.secretKey != "" {
		if req.ExtFields == nil {
			req.ExtFields = remoting.ExtFields{}
		}
		acl.Sign(req.ExtFields, req.Body, req.Version, ci.accessKey, ci.secretKey, "")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultRequestTimeout)
		defer cancel()
	}
	return s.rc.InvokeSync(ctx, s.b.Addr(), req)
}

// topicConfig is the broker's config of topic.
func (s *Server) topicConfig(topic string) (protocol.TopicConfig, bool) {
	t := s.b.Topics()
	if t == nil {
		return protocol.TopicConfig{}, false
	}
	return t.Get(topic)
}

// callContext is ctx, also ended by Shutdown (for long polls).
func (s *Server) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stop, cancel)
	return ctx, func() { stop(); cancel() }
}

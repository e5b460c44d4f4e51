// Package promexport serves a broker's or a name server's metrics to
// Prometheus (GET /metrics), named after RocketMQ 5's metrics where
// RocketMQ has one (rocketmq_messages_in_total, rocketmq_rpc_latency,
// rocketmq_consumer_lag_messages, ...) and brokerlab_* for what only
// brokerlab measures (flush latency and batch sizes, the append lock,
// page-cache-busy refusals).
//
// The engine keeps the counters (engine/broker, engine/store, engine/flush,
// engine/remoting.RequestStats); the collectors here only read their
// snapshots when Prometheus scrapes, so the exporter adds no work per
// message. The one per-request cost is the remoting observer the
// collectors install (RequestStats: a few atomic adds per answered
// request, and the Timings remoting takes while any observer is present);
// it exists only when the exporter is enabled.
//
// Every series carries RocketMQ's node labels: cluster, node_type
// ("broker" or "nameserver") and node_id (the broker name, or the name
// server's address).
package promexport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the metrics are served.
const Path = "/metrics"

// MaxScrapes is how many scrapes are served concurrently.
const MaxScrapes = 8

// ErrListen wraps a failure to open the metrics listener.
var ErrListen = errors.New("promexport: listen")

// NewRegistry returns a registry with c and the Go runtime and process
// collectors (go_*, process_*).
func NewRegistry(c prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, col := range []prometheus.Collector{
		c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("promexport: register: %w", err)
		}
	}
	return reg, nil
}

// Server is an HTTP server for one registry's metrics.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen binds addr (host:port; port 0 picks one) and serves reg at Path in
// the background until Close. At most MaxScrapes scrapes are served at
// once (more are answered 503) and each is bounded by a 10 s timeout.
func Listen(addr string, reg *prometheus.Registry, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrListen, addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: MaxScrapes,
		Timeout:             10 * time.Second,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintf(w, "brokerlab metrics: GET %s\n", Path)
	})
	s := &Server{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on ("127.0.0.1:port").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting scrapes and waits (up to ctx) for those in flight;
// when ctx ends first their connections are closed.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	return err
}

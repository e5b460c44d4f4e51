package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/promexport"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/namesrv"
)

// metricsFlagUsage documents --metrics-listen for the broker and namesrv.
const metricsFlagUsage = "serve Prometheus metrics at http://ADDR/metrics (host:port; port 0 picks one; default off)"

// metricsFile is the broker --config file's metrics key.
type metricsFile struct {
	MetricsListen string `yaml:"metricsListen"` // as --metrics-listen
}

// metricsListen is the broker's metrics address: --metrics-listen when
// given on the command line, else the config file's metricsListen, else
// the flag's default (off). brokerConfig has validated the file already.
func metricsListen(cmd *cobra.Command, f brokerFlags) (string, error) {
	if cmd.Flags().Changed("metrics-listen") || (f.configFile == "" && f.propsFile == "") {
		return f.metricsListen, nil
	}
	file, _, err := loadBrokerFile(f)
	if err != nil {
		return "", err
	}
	if file.Metrics.MetricsListen != "" {
		return file.Metrics.MetricsListen, nil
	}
	return f.metricsListen, nil
}

// addMetricsFlag adds --metrics-listen to cmd.
func addMetricsFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "metrics-listen", "", metricsFlagUsage)
}

// metricsServer is a running exporter; nil when metrics are off. Its
// methods accept a nil receiver.
type metricsServer struct {
	srv *promexport.Server
	log *slog.Logger
}

// brokerMetrics installs the broker's collector (before b.Start: it adds a
// request observer) and serves it on addr; "" is off.
func brokerMetrics(addr string, b *broker.Broker, log *slog.Logger) (*metricsServer, error) {
	if addr == "" {
		return nil, nil
	}
	return serveMetrics(addr, promexport.NewBrokerCollector(b), log)
}

// namesrvMetrics is brokerMetrics for a name server; nodeID labels it.
func namesrvMetrics(addr string, s *namesrv.Server, nodeID string, log *slog.Logger) (*metricsServer, error) {
	if addr == "" {
		return nil, nil
	}
	return serveMetrics(addr, promexport.NewNamesrvCollector(s, nodeID), log)
}

func serveMetrics(addr string, c prometheus.Collector, log *slog.Logger) (*metricsServer, error) {
	reg, err := promexport.NewRegistry(c)
	if err != nil {
		return nil, err
	}
	srv, err := promexport.Listen(addr, reg, log.With("component", "metrics"))
	if err != nil {
		return nil, err
	}
	log.Info("metrics serving", "addr", srv.Addr(), "path", promexport.Path)
	return &metricsServer{srv: srv, log: log}, nil
}

// stop closes the exporter, waiting up to 5 s for scrapes in flight.
func (m *metricsServer) stop() {
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.srv.Close(ctx); err != nil {
		m.log.Warn("metrics server stop", "err", err)
	}
}

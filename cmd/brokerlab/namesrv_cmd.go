package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/namesrv"
)

func init() { register(newNamesrvCmd) }

// shutdownTimeout bounds a clean stop after SIGINT/SIGTERM.
const shutdownTimeout = 30 * time.Second

func newNamesrvCmd() *cobra.Command {
	var (
		listen   string
		logLevel string
		tlsf     tlsFlags
		metrics  string
	)
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Run a RocketMQ name server",
		Long: `Run a name server speaking RocketMQ's remoting protocol: brokers register
with it every 30 s and clients ask it for topic routes. Logs go to stderr;
SIGINT or SIGTERM stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(logLevel)
			if err != nil {
				return err
			}
			cfg := namesrv.DefaultConfig()
			cfg.Remoting.Addr = listen
			if cfg.Remoting.TLS, err = tlsf.server(cmd.Flags().Changed, tlsFile{}); err != nil {
				return err
			}
			cfg.Logger = log
			srv := namesrv.New(cfg)
			ms, err := namesrvMetrics(metrics, srv, listen, log)
			if err != nil {
				return err
			}
			if err := srv.Start(cmd.Context()); err != nil {
				ms.stop()
				return fmt.Errorf("namesrv: %w", err)
			}
			log.Info("name server started", "addr", srv.Addr())
			<-cmd.Context().Done()
			ms.stop()
			log.Info("name server stopping")
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				return fmt.Errorf("namesrv: shutdown: %w", err)
			}
			log.Info("name server stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9876", "listen address (host:port; port 0 picks one)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	addMetricsFlag(cmd, &metrics)
	addServerTLSFlags(cmd, &tlsf)
	return cmd
}

// newLogger logs text lines to stderr.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, errors.New("bad --log-level " + level + ": want debug, info, warn or error")
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

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
	cmd, _ := namesrvCommand()
	return cmd
}

// namesrvCommand is the namesrv command and the flags it parses into.
func namesrvCommand() (*cobra.Command, *namesrvFlags) {
	var f namesrvFlags
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Run a RocketMQ name server",
		Long: `Run a name server speaking RocketMQ's remoting protocol: brokers register
with it every 30 s and clients ask it for topic routes. -c reads RocketMQ's
namesrv.properties (as mqnamesrv -c); flags given on the command line override
it, and keys it does not know are logged. Logs go to stderr; SIGINT or SIGTERM
stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setup, err := resolveNamesrv(cmd, f)
			if err != nil {
				return err
			}
			if f.printConfig {
				return printNamesrvConfig(cmd.OutOrStdout(), setup)
			}
			log, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			for _, w := range setup.warnings {
				log.Warn("namesrv config: " + w)
			}
			cfg := setup.cfg
			cfg.Logger = log
			srv := namesrv.New(cfg)
			ms, err := namesrvMetrics(setup.metrics, srv, cfg.Remoting.Addr, log)
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
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:9876", "listen address (host:port; port 0 picks one)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fl.StringVarP(&f.propsFile, "properties", "c", "", "RocketMQ namesrv.properties (Java properties, as mqnamesrv -c); flags override it; unknown keys are logged")
	fl.BoolVarP(&f.printConfig, "print-config", "p", false, "print the resolved configuration as namesrv.properties and exit")
	addMetricsFlag(cmd, &f.metrics)
	addServerTLSFlags(cmd, &f.tls)
	return cmd, &f
}

// newLogger logs text lines to stderr.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, errors.New("bad --log-level " + level + ": want debug, info, warn or error")
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

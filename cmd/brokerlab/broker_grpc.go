package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/proxy"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// grpcFlagUsage documents --grpc-listen.
const grpcFlagUsage = "serve RocketMQ 5's gRPC MessagingService (the proxy's local mode) on ADDR (host:port; RocketMQ uses 8081; default off)"

// grpcFile is the broker config files' gRPC keys: grpcListen (as
// --grpc-listen) or grpcServerPort (the proxy's key: a port on the listen host).
type grpcFile struct {
	GRPCListen     string `yaml:"grpcListen"`
	GRPCServerPort *int64 `yaml:"grpcServerPort"`
}

func addGRPCFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "grpc-listen", "", grpcFlagUsage)
}

// resolve is the gRPC listen address: the flag when given, else the file's
// grpcListen, else grpcServerPort on the broker's listen host; "" = off.
func (g grpcFile) resolve(changed func(string) bool, flag, listen string) (string, error) {
	switch {
	case changed("grpc-listen") || (g.GRPCListen == "" && g.GRPCServerPort == nil):
		return flag, nil
	case g.GRPCListen != "":
		return g.GRPCListen, nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen %q: %w", listen, err)
	}
	return net.JoinHostPort(host, strconv.FormatInt(*g.GRPCServerPort, 10)), nil
}

// startGRPC serves the gRPC front end of a started broker on addr ("" is
// off) with the broker's TLS and ACL settings.
func startGRPC(ctx context.Context, addr string, b *broker.Broker, log *slog.Logger) (*proxy.Server, error) {
	if addr == "" {
		return nil, nil
	}
	cfg := b.Config()
	pc := proxy.Config{Listen: addr, Broker: b, TLS: cfg.Remoting.TLS, ACL: cfg.ACL, Logger: log}
	if cfg.Remoting.TLS.Mode == remoting.TLSEnforcing {
		// The proxy's own connection to the broker: loopback to itself.
		tc := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the broker's own listen address
		if cfg.Remoting.TLS.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(cfg.Remoting.TLS.CertFile, cfg.Remoting.TLS.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("grpc: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		pc.BrokerTLS = tc
	}
	p, err := proxy.New(pc)
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	log.Info("grpc serving", "addr", p.Addr())
	return p, nil
}

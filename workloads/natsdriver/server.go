package natsdriver

import (
	"fmt"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a JetStream server listening on 127.0.0.1 (a free port) with no
// client of its own: run it in one process (e.g. a child process whose CPU
// time is measured apart from its clients') and Dial it from another. Its
// options are Open's for the same Config: Dir, SyncAlways, SyncInterval,
// MaxPayload; RequestTimeout bounds the wait until it accepts connections.
type Server struct {
	srv *server.Server
}

// StartServer starts a server for cfg and waits until it accepts
// connections.
func StartServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	srv, err := newServer(cfg, true)
	if err != nil {
		return nil, err
	}
	return &Server{srv: srv}, nil
}

// ClientURL is the URL to Dial (nats://127.0.0.1:<port>).
func (s *Server) ClientURL() string { return s.srv.ClientURL() }

// StoreDir is the directory JetStream keeps its files in (Dir/jetstream).
func (s *Server) StoreDir() string { return s.srv.StoreDir() }

// Shutdown stops the server and waits until it has stopped (its store
// closed); clients see their connection closed.
func (s *Server) Shutdown() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

// newServer starts the server of cfg, listening on 127.0.0.1 when listen is
// set (otherwise reachable only in-process), and waits until it is ready.
func newServer(cfg Config, listen bool) (*server.Server, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: empty Dir", ErrConfig)
	}
	srv, err := server.NewServer(&server.Options{
		ServerName:   "brokerlab-nats",
		DontListen:   !listen,
		Host:         "127.0.0.1",
		Port:         server.RANDOM_PORT,
		JetStream:    true,
		StoreDir:     cfg.Dir,
		SyncAlways:   cfg.SyncAlways,
		SyncInterval: cfg.SyncInterval, // 0: the server's default (2 min)
		MaxPayload:   cfg.MaxPayload,
		NoSigs:       true,
		NoLog:        true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	srv.Start()
	if !srv.ReadyForConnections(cfg.RequestTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("%w: not ready within %v", ErrStart, cfg.RequestTimeout)
	}
	return srv, nil
}

// StoreDirOf is the directory a server started with Dir dir keeps its
// JetStream files in (dir/jetstream), for a process that only Dials it.
func StoreDirOf(dir string) string { return filepath.Join(dir, server.JetStreamStoreDir) }

// Package netdelay is a TCP relay that adds a fixed plus jittered one-way
// delay to every byte it forwards, in both directions, so a replication
// link on loopback can be given the round-trip time of a rack, a data
// centre or a region (issue 14 §2).
//
// Each accepted connection is paired with a connection to the target. Every
// chunk read from one side is stamped with its arrival time and written to
// the other side no earlier than arrival + Delay + U[0, Jitter]; chunks keep
// their order (a chunk is never delivered before the one read before it, so
// the jitter never reorders the stream, as TCP would not). Bandwidth is not
// limited. A round trip through the relay therefore costs about
// 2 × (Delay + Jitter/2) on top of loopback.
//
// Concurrency: Close may be called from any goroutine; every goroutine a
// relay starts has ended when Close returns.
package netdelay

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Config configures a Relay.
type Config struct {
	// Listen is the relay's address ("127.0.0.1:0").
	Listen string
	// Target is where accepted connections are relayed to.
	Target string
	// Delay is the fixed one-way delay; Jitter the width of a uniform
	// random addition to it.
	Delay, Jitter time.Duration
	// Seed seeds the jitter (reproducible runs).
	Seed uint64
}

// ForRTT is the Config for a round-trip time: half of it each way, with
// a tenth of the one-way delay as jitter (so the mean round trip is rtt).
func ForRTT(listen, target string, rtt time.Duration, seed uint64) Config {
	oneWay := rtt / 2
	jitter := oneWay / 10
	return Config{Listen: listen, Target: target, Delay: oneWay - jitter/2, Jitter: jitter, Seed: seed}
}

// Relay forwards connections with added delay.
type Relay struct {
	cfg Config
	ln  net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // guarded by mu
	rng    *rand.Rand            // guarded by mu
	closed bool                  // guarded by mu
	wg     sync.WaitGroup
}

// ErrClosed is returned for a closed relay.
var ErrClosed = errors.New("netdelay: closed")

// New listens on cfg.Listen and relays to cfg.Target until Close.
func New(cfg Config) (*Relay, error) {
	if cfg.Delay < 0 || cfg.Jitter < 0 {
		return nil, errors.New("netdelay: negative delay or jitter")
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	r := &Relay{cfg: cfg, ln: ln, conns: map[net.Conn]struct{}{}, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the relay's listen address.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		in, err := r.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", r.cfg.Target, 3*time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !r.track(in) || !r.track(out) {
			_ = in.Close()
			_ = out.Close()
			return
		}
		for _, tc := range []net.Conn{in, out} {
			if t, ok := tc.(*net.TCPConn); ok {
				_ = t.SetNoDelay(true)
			}
		}
		r.wg.Add(2)
		go r.pipe(in, out)
		go r.pipe(out, in)
	}
}

type chunk struct {
	b   []byte
	due time.Time
}

// pipe forwards src to dst with the delay; either side failing closes both.
func (r *Relay) pipe(src, dst net.Conn) {
	defer r.wg.Done()
	q := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() { // the writer
		defer close(done)
		t := time.NewTimer(time.Hour)
		defer t.Stop()
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				t.Reset(d)
				<-t.C
			}
			if _, err := dst.Write(c.b); err != nil {
				r.untrack(src)
				r.untrack(dst)
				for range q { // drain so the reader never blocks
				}
				return
			}
		}
	}()
	var last time.Time
	for {
		buf := make([]byte, 64<<10)
		n, err := src.Read(buf)
		if n > 0 {
			due := time.Now().Add(r.cfg.Delay + r.jitter())
			if due.Before(last) {
				due = last // never overtake the previous chunk
			}
			last = due
			q <- chunk{b: buf[:n], due: due}
		}
		if err != nil {
			close(q)
			<-done
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
					return
				}
			}
			r.untrack(src)
			r.untrack(dst)
			return
		}
	}
}

func (r *Relay) jitter() time.Duration {
	if r.cfg.Jitter <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(r.rng.Int64N(int64(r.cfg.Jitter) + 1))
}

// Close stops accepting, closes every relayed connection and waits for the
// relay's goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

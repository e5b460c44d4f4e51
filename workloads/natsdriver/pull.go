package natsdriver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Header names and status codes of JetStream direct-get answers.
const (
	hdrSequence    = "Nats-Sequence"
	hdrStatus      = "Status"
	hdrDescription = "Description"
	statusEOB      = "204" // end of a batch
	statusNotFound = "404" // nothing at or after the requested sequence
	statusNoReply  = "503" // no responders: the stream does not exist
)

// maxPullBatch caps the messages one Pull asks for.
const maxPullBatch = 1 << 16

// Pull implements workloads.Source with one batch direct get from sequence
// offset+1 (see the package doc). A queue without a stream is empty.
func (d *Driver) Pull(ctx context.Context, topic string, queueID int32, offset int64, max int) ([][]byte, int64, error) {
	if err := d.errClosedIf(); err != nil {
		return nil, offset, err
	}
	if offset < 0 || max <= 0 {
		return nil, offset, fmt.Errorf("%w: pull offset %d max %d", ErrQueue, offset, max)
	}
	q, err := d.queue(topic, queueID)
	if err != nil {
		return nil, offset, err
	}
	max = min(max, maxPullBatch)
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()

	w := d.replies.register()
	defer d.replies.unregister(w)
	req := make([]byte, 0, 64)
	req = append(req, `{"seq":`...)
	req = strconv.AppendInt(req, offset+1, 10)
	req = append(req, `,"batch":`...)
	req = strconv.AppendInt(req, int64(max), 10)
	req = append(req, `,"max_bytes":`...)
	req = strconv.AppendInt(req, int64(d.cfg.PullMaxBytes), 10)
	req = append(req, '}')
	if err := d.nc.PublishRequest(q.directGet, w.subject, req); err != nil {
		return nil, offset, fmt.Errorf("natsdriver: direct get %s: %w", q.stream, err)
	}

	var bodies [][]byte
	next := offset
	for {
		select {
		case m := <-w.ch:
			switch st := m.Header.Get(hdrStatus); st {
			case "":
				seq, err := strconv.ParseInt(m.Header.Get(hdrSequence), 10, 64)
				if err != nil || seq <= next {
					return nil, offset, fmt.Errorf("%w: %s sequence %q after %d", ErrPull, q.stream, m.Header.Get(hdrSequence), next)
				}
				bodies = append(bodies, m.Data)
				next = seq
			case statusEOB, statusNotFound, statusNoReply:
				d.pulls.Add(1)
				return bodies, next, nil
			default:
				return nil, offset, fmt.Errorf("%w: %s status %s %s", ErrPull, q.stream, st, m.Header.Get(hdrDescription))
			}
		case <-ctx.Done():
			return nil, offset, fmt.Errorf("natsdriver: direct get %s: %w", q.stream, ctx.Err())
		}
	}
}

// MaxOffset implements workloads.Source: the stream's last sequence (the
// 0-based offset the next message gets). A queue without a stream has 0.
func (d *Driver) MaxOffset(topic string, queueID int32) (int64, error) {
	if err := d.errClosedIf(); err != nil {
		return 0, err
	}
	q, err := d.queue(topic, queueID)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RequestTimeout)
	defer cancel()
	s, err := d.js.Stream(ctx, q.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("natsdriver: stream info %s: %w", q.stream, err)
	}
	return int64(s.CachedInfo().State.LastSeq), nil
}

// replyMux routes the answers of concurrent direct gets, all arriving on one
// wildcard inbox subscription, to their requests by the last subject token.
type replyMux struct {
	prefix string // "<inbox>." ; a request's reply subject is prefix+token
	mu     sync.Mutex
	next   uint64
	wait   map[string]*waiter
}

// waiter is one request's answer channel; done is closed when the request
// stops listening, so dispatch never blocks on an abandoned request.
type waiter struct {
	subject string
	ch      chan *nats.Msg
	done    chan struct{}
}

func newReplyMux(nc *nats.Conn) (*replyMux, error) {
	r := &replyMux{prefix: nats.NewInbox() + ".", wait: map[string]*waiter{}}
	sub, err := nc.Subscribe(r.prefix+"*", r.dispatch)
	if err != nil {
		return nil, fmt.Errorf("subscribe reply inbox: %w", err)
	}
	// Never drop answers as a slow consumer: dispatch only hands them on.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, fmt.Errorf("reply inbox limits: %w", err)
	}
	return r, nil
}

func (r *replyMux) register() *waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	w := &waiter{subject: r.prefix + strconv.FormatUint(r.next, 36), ch: make(chan *nats.Msg, 64), done: make(chan struct{})}
	r.wait[w.subject[len(r.prefix):]] = w
	return w
}

func (r *replyMux) unregister(w *waiter) {
	r.mu.Lock()
	delete(r.wait, w.subject[len(r.prefix):])
	r.mu.Unlock()
	close(w.done)
}

func (r *replyMux) dispatch(m *nats.Msg) {
	if len(m.Subject) <= len(r.prefix) {
		return
	}
	r.mu.Lock()
	w := r.wait[m.Subject[len(r.prefix):]]
	r.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.ch <- m:
	case <-w.done:
	}
}

package remoting

import (
	"context"
	"sync"
)

// Processor handles requests of the codes it is registered for.
//
// Return (resp, nil) to answer, (nil, err) to answer SYSTEM_ERROR with
// err.Error() as remark — or, for a bad request (a *FieldError, an error
// from NewBadRequest: IsBadRequest), with BadRequestRemark(err), counted and
// logged as bad input —, (nil, ErrReplyLater) to answer later with
// conn.Reply(req, resp) (the request stays in flight until then), or
// (nil, nil) to send nothing. Oneway requests are never answered. ctx is the
// connection's context: done when the connection closes or the server shuts down.
type Processor interface {
	ProcessRequest(ctx context.Context, conn *Conn, req *Command) (*Command, error)
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(ctx context.Context, conn *Conn, req *Command) (*Command, error)

// ProcessRequest calls f.
func (f ProcessorFunc) ProcessRequest(ctx context.Context, conn *Conn, req *Command) (*Command, error) {
	return f(ctx, conn, req)
}

// ExecutorConfig sizes an Executor like a Java ThreadPoolExecutor with a
// bounded queue: Workers tasks run at once, QueueSize more wait, the next is
// rejected (the request is answered SYSTEM_BUSY).
type ExecutorConfig struct {
	Workers   int
	QueueSize int
}

// DefaultExecutorConfig is the server's default pool: 8 workers (Java's
// serverWorkerThreads) and a queue of 10000.
func DefaultExecutorConfig() ExecutorConfig { return ExecutorConfig{Workers: 8, QueueSize: 10000} }

// Executor is a fixed pool of worker goroutines with a bounded queue. It is
// created by Server.NewExecutor, started by Server.Start and stopped by
// Server.Shutdown. submit is safe for concurrent use.
type Executor struct {
	name  string
	cfg   ExecutorConfig
	tasks chan execTask
	quit  chan struct{}
	wg    sync.WaitGroup

	startOnce, stopOnce sync.Once
}

func newExecutor(name string, cfg ExecutorConfig) *Executor {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.QueueSize < 0 {
		cfg.QueueSize = 0
	}
	return &Executor{name: name, cfg: cfg, tasks: make(chan execTask, cfg.QueueSize), quit: make(chan struct{})}
}

// Name is the name given at creation, for logs.
func (e *Executor) Name() string { return e.name }

func (e *Executor) start() {
	e.startOnce.Do(func() {
		e.wg.Add(e.cfg.Workers)
		for range e.cfg.Workers {
			go e.work()
		}
	})
}

func (e *Executor) work() {
	defer e.wg.Done()
	for {
		select {
		case t := <-e.tasks:
			t.conn.runProcessor(t.proc, t.req)
		case <-e.quit:
			for { // run what was queued before the stop
				select {
				case t := <-e.tasks:
					t.conn.runProcessor(t.proc, t.req)
				default:
					return
				}
			}
		}
	}
}

// execTask is a dispatched request waiting for a worker (a struct, not a
// closure: no allocation per request).
type execTask struct {
	conn *Conn
	proc Processor
	req  *Command
}

// submit queues t without blocking; false if the queue is full.
func (e *Executor) submit(t execTask) bool {
	select {
	case e.tasks <- t:
		return true
	default:
		return false
	}
}

// stop makes the workers exit once the queue is empty and waits for them.
func (e *Executor) stop() {
	e.stopOnce.Do(func() { close(e.quit) })
	e.wg.Wait()
}

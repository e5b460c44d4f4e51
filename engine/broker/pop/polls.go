package pop

import "sync"

// pollTable holds the waiting pops (long polling) by topic: a pop watches
// its topic and its retry topic, and a message arriving in either (Notify)
// wakes it to try again. Safe for concurrent use.
type pollTable struct {
	mu     sync.Mutex
	topics map[string]*pollTopic // guarded by mu
	closed bool                  // guarded by mu
}

// pollTopic is one topic's waiters: ch is closed (and replaced) by a wake.
type pollTopic struct {
	ch      chan struct{}
	waiters int
}

// watch is one pop's registration on two topics.
type watch struct {
	ta, tb string
	a, b   <-chan struct{}
}

var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (p *pollTable) init() { p.topics = map[string]*pollTopic{} }

func (p *pollTable) watch(a, b string) watch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return watch{a: closedCh, b: closedCh}
	}
	return watch{ta: a, tb: b, a: p.add(a), b: p.add(b)}
}

func (p *pollTable) add(topic string) <-chan struct{} {
	t := p.topics[topic]
	if t == nil {
		t = &pollTopic{ch: make(chan struct{})}
		p.topics[topic] = t
	}
	t.waiters++
	return t.ch
}

func (p *pollTable) unwatch(w watch) {
	if w.ta == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, topic := range []string{w.ta, w.tb} {
		if t := p.topics[topic]; t != nil {
			if t.waiters--; t.waiters <= 0 {
				delete(p.topics, topic)
			}
		}
	}
}

// wake wakes every pop waiting on topic.
func (p *pollTable) wake(topic string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.topics[topic]; t != nil {
		close(t.ch)
		t.ch = make(chan struct{})
	}
}

// waiting is the number of pops waiting on topic.
func (p *pollTable) waiting(topic string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := p.topics[topic]; t != nil {
		return t.waiters
	}
	return 0
}

// closeAll wakes every waiter for good (Stop).
func (p *pollTable) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for k, t := range p.topics {
		close(t.ch)
		delete(p.topics, k)
	}
}

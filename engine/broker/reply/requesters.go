package reply

import (
	"sync"

	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// requesters remembers, for each connection, the client id the latest
// request message sent over it named in REPLY_TO_CLIENT. Java finds the
// requester only among producers that sent a heartbeat; the official Go
// client's producer sends its first heartbeat to a broker only when it
// already knows a route at its 1 s heartbeat or after 30 s (Request skips
// the heartbeat when the name server knows the topic), so a reply to a
// request sent in between would find no channel. The connection the
// request came over reaches the same client, whose remoting client serves
// PUSH_REPLY_MESSAGE_TO_CLIENT on any of its connections. One id per
// connection bounds the table; closed connections leave it. Safe for
// concurrent use.
type requesters struct {
	mu     sync.Mutex
	byID   map[string]*remoting.Conn
	byConn map[*remoting.Conn]string
}

// NoteRequester records conn as the way to the client a request message
// (properties props) names in REPLY_TO_CLIENT.
func (s *Service) NoteRequester(conn *remoting.Conn, props string) {
	id, ok := record.Property(props, PropertyReplyToClient)
	if !ok || id == "" || conn == nil {
		return
	}
	r := &s.requesters
	r.mu.Lock()
	defer r.mu.Unlock()
	old, known := r.byConn[conn]
	if known && old == id {
		return
	}
	if r.byID == nil {
		r.byID, r.byConn = make(map[string]*remoting.Conn), make(map[*remoting.Conn]string)
	}
	if known && r.byID[old] == conn {
		delete(r.byID, old)
	}
	r.byID[id], r.byConn[conn] = conn, id
	if !known {
		conn.OnClose(r.forget)
	}
}

// forget drops a closed connection.
func (r *requesters) forget(conn *remoting.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id, ok := r.byConn[conn]; ok {
		delete(r.byConn, conn)
		if r.byID[id] == conn {
			delete(r.byID, id)
		}
	}
}

// conn returns the live connection a request named id came over, or nil.
func (r *requesters) conn(id string) *remoting.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.byID[id]; c != nil && c.Err() == nil {
		return c
	}
	return nil
}

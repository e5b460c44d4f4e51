package clients

import (
	"maps"
	"slices"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// SetClientMeta records the language and version a client's heartbeat
// command carried (Java's ClientChannelInfo), for the connection lists.
func (t *Table) SetClientMeta(clientID string, lang remoting.Language, version int32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ci := t.mu.clients[clientID]; ci != nil {
		ci.language, ci.version = lang, version
	}
}

// REQUIRES: t.mu held.
func (t *Table) connectionLocked(id string) (protocol.Connection, bool) {
	ci := t.mu.clients[id]
	if ci == nil {
		return protocol.Connection{}, false
	}
	c := protocol.Connection{ClientID: id, Language: ci.language.String(), Version: ci.version}
	if ci.conn != nil {
		c.ClientAddr = ci.conn.RemoteAddr().String()
	}
	return c, true
}

// ConsumerConnection describes a consumer group's live members and
// subscriptions (GET_CONSUMER_CONNECTION_LIST); false when none is online.
func (t *Table) ConsumerConnection(group string) (protocol.ConsumerConnection, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.mu.consumers[group]
	if g == nil || len(g.members) == 0 {
		return protocol.ConsumerConnection{}, false
	}
	cc := protocol.ConsumerConnection{ConnectionSet: []protocol.Connection{}, ConsumeFromWhere: g.consumeFromWhere, ConsumeType: g.consumeType,
		MessageModel: g.messageModel, SubscriptionTable: map[string]protocol.SubscriptionData{}}
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		if c, ok := t.connectionLocked(id); ok {
			cc.ConnectionSet = append(cc.ConnectionSet, c)
		}
	}
	for topic, s := range g.subs {
		cc.SubscriptionTable[topic] = SubscriptionJSON(s)
	}
	return cc, true
}

// ProducerConnections lists a producer group's live clients.
func (t *Table) ProducerConnections(group string) []protocol.Connection {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []protocol.Connection
	for _, id := range slices.Sorted(maps.Keys(t.mu.producers[group])) {
		if c, ok := t.connectionLocked(id); ok {
			out = append(out, c)
		}
	}
	return out
}

// MessageModel is the message model a consumer group's members announced
// ("" when none is online).
func (t *Table) MessageModel(group string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g := t.mu.consumers[group]; g != nil {
		return g.messageModel
	}
	return ""
}

// ClientConn is one live client of a group and its connection.
type ClientConn struct {
	ID   string
	Conn *remoting.Conn
}

// MemberClients lists a consumer group's live members with their
// connections, sorted by client id.
func (t *Table) MemberClients(group string) []ClientConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.mu.consumers[group]
	if g == nil {
		return nil
	}
	var out []ClientConn
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		if ci := t.mu.clients[id]; ci != nil && ci.conn != nil {
			out = append(out, ClientConn{id, ci.conn})
		}
	}
	return out
}

package clients

import (
	"slices"
	"sync"
	"time"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Table is the broker's ConsumerManager and ProducerManager: which
// clients (by clientID, each on one connection) belong to which groups, and
// the subscriptions of each consumer group. Each heartbeat is authoritative
// for its client: groups it no longer lists are left (the Go client never
// unregisters). Safe for concurrent use; methods report the consumer groups
// whose membership changed so the caller can notify their members.
type Table struct {
	compile CompileFilter

	mu struct {
		sync.Mutex
		clients   map[string]*clientInfo
		byConn    map[*remoting.Conn]map[string]struct{}
		consumers map[string]*consumerGroup
		producers map[string]map[string]struct{} // group → clientIDs
	}
}

type clientInfo struct {
	id             string
	conn           *remoting.Conn
	lastUpdate     time.Time
	consumerGroups map[string]struct{}
	producerGroups map[string]struct{}
	language       remoting.Language // of its last heartbeat (connection lists)
	version        int32
}

type consumerGroup struct {
	name             string
	consumeType      string
	messageModel     string
	consumeFromWhere string
	members          map[string]struct{} // clientIDs
	subs             map[string]*Subscription
}

// Subscription is one topic a consumer group subscribes to, with its
// Filter (nil: everything) or, for an expression that does not compile,
// FilterErr (Java keeps no filter data then and answers the group's pulls
// FILTER_DATA_NOT_EXIST). Immutable once stored.
type Subscription struct {
	Topic          string
	SubString      string
	ExpressionType string // ExpressionTag when the client sent none
	SubVersion     int64
	ClassFilter    bool
	Filter         Filter
	FilterErr      error
}

func (t *Table) newSubscription(sd SubscriptionData) *Subscription {
	et := sd.ExpressionType
	if et == "" {
		et = ExpressionTag
	}
	s := &Subscription{Topic: sd.Topic, SubString: sd.SubString, ExpressionType: et,
		SubVersion: sd.SubVersion, ClassFilter: sd.ClassFilterMode}
	if !sd.ClassFilterMode && t.compile != nil {
		s.Filter, s.FilterErr = t.compile(sd.SubString, et)
	}
	return s
}

func newTable(compile CompileFilter) *Table {
	t := &Table{compile: compile}
	t.mu.clients = make(map[string]*clientInfo)
	t.mu.byConn = make(map[*remoting.Conn]map[string]struct{})
	t.mu.consumers = make(map[string]*consumerGroup)
	t.mu.producers = make(map[string]map[string]struct{})
	return t
}

// Heartbeat registers hb's client on conn and returns the consumer groups
// whose membership changed.
func (t *Table) Heartbeat(conn *remoting.Conn, hb *HeartbeatData, now time.Time) (changed []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ci := t.mu.clients[hb.ClientID]
	if ci == nil {
		ci = &clientInfo{id: hb.ClientID, consumerGroups: map[string]struct{}{}, producerGroups: map[string]struct{}{}}
		t.mu.clients[hb.ClientID] = ci
	}
	if ci.conn != conn {
		if ci.conn != nil {
			t.unbindLocked(ci.conn, ci.id)
		}
		ci.conn = conn
		ids := t.mu.byConn[conn]
		if ids == nil {
			ids = make(map[string]struct{})
			t.mu.byConn[conn] = ids
		}
		ids[ci.id] = struct{}{}
	}
	ci.lastUpdate = now

	listed := make(map[string]struct{}, len(hb.ConsumerDataSet))
	for _, cd := range hb.ConsumerDataSet {
		listed[cd.GroupName] = struct{}{}
		g := t.mu.consumers[cd.GroupName]
		if g == nil {
			g = &consumerGroup{name: cd.GroupName, members: map[string]struct{}{}, subs: map[string]*Subscription{}}
			t.mu.consumers[cd.GroupName] = g
		}
		g.consumeType, g.messageModel, g.consumeFromWhere = cd.ConsumeType, cd.MessageModel, cd.ConsumeFromWhere
		if _, ok := g.members[ci.id]; !ok {
			g.members[ci.id] = struct{}{}
			ci.consumerGroups[g.name] = struct{}{}
			changed = append(changed, g.name)
		}
		seen := make(map[string]struct{}, len(cd.SubscriptionDataSet))
		for _, sd := range cd.SubscriptionDataSet {
			seen[sd.Topic] = struct{}{}
			if old := g.subs[sd.Topic]; old != nil && old.SubVersion > sd.SubVersion {
				continue
			}
			g.subs[sd.Topic] = t.newSubscription(sd)
		}
		for topic := range g.subs {
			if _, ok := seen[topic]; !ok {
				delete(g.subs, topic)
			}
		}
	}
	for name := range ci.consumerGroups {
		if _, ok := listed[name]; !ok {
			t.leaveConsumerGroupLocked(ci, name)
			changed = append(changed, name)
		}
	}

	producers := make(map[string]struct{}, len(hb.ProducerDataSet))
	for _, pd := range hb.ProducerDataSet {
		producers[pd.GroupName] = struct{}{}
		ids := t.mu.producers[pd.GroupName]
		if ids == nil {
			ids = make(map[string]struct{})
			t.mu.producers[pd.GroupName] = ids
		}
		ids[ci.id] = struct{}{}
		ci.producerGroups[pd.GroupName] = struct{}{}
	}
	for name := range ci.producerGroups {
		if _, ok := producers[name]; !ok {
			t.leaveProducerGroupLocked(ci, name)
		}
	}
	return changed
}

// Unregister removes clientID from the named groups (UNREGISTER_CLIENT);
// "" names none.
func (t *Table) Unregister(clientID, producerGroup, consumerGroup string) (changed []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ci := t.mu.clients[clientID]
	if ci == nil {
		return nil
	}
	if producerGroup != "" {
		t.leaveProducerGroupLocked(ci, producerGroup)
	}
	if consumerGroup != "" {
		if _, ok := ci.consumerGroups[consumerGroup]; ok {
			t.leaveConsumerGroupLocked(ci, consumerGroup)
			changed = append(changed, consumerGroup)
		}
	}
	if len(ci.consumerGroups) == 0 && len(ci.producerGroups) == 0 {
		t.removeClientLocked(ci)
	}
	return changed
}

// ConnClosed drops every client bound to conn.
func (t *Table) ConnClosed(conn *remoting.Conn) (changed []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.mu.byConn[conn] {
		if ci := t.mu.clients[id]; ci != nil {
			changed = append(changed, t.removeClientLocked(ci)...)
		}
	}
	delete(t.mu.byConn, conn)
	return changed
}

// Expire drops clients whose last heartbeat is older than before and
// returns their connections, to be closed.
func (t *Table) Expire(before time.Time) (changed []string, conns []*remoting.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ci := range t.mu.clients {
		if ci.lastUpdate.Before(before) {
			if ci.conn != nil {
				conns = append(conns, ci.conn)
			}
			changed = append(changed, t.removeClientLocked(ci)...)
		}
	}
	return changed, conns
}

// REQUIRES: t.mu held.
func (t *Table) removeClientLocked(ci *clientInfo) (changed []string) {
	for name := range ci.consumerGroups {
		t.leaveConsumerGroupLocked(ci, name)
		changed = append(changed, name)
	}
	for name := range ci.producerGroups {
		t.leaveProducerGroupLocked(ci, name)
	}
	if ci.conn != nil {
		t.unbindLocked(ci.conn, ci.id)
	}
	delete(t.mu.clients, ci.id)
	return changed
}

// REQUIRES: t.mu held.
func (t *Table) unbindLocked(conn *remoting.Conn, id string) {
	if ids := t.mu.byConn[conn]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(t.mu.byConn, conn)
		}
	}
}

// REQUIRES: t.mu held.
func (t *Table) leaveConsumerGroupLocked(ci *clientInfo, name string) {
	delete(ci.consumerGroups, name)
	if g := t.mu.consumers[name]; g != nil {
		delete(g.members, ci.id)
		if len(g.members) == 0 {
			delete(t.mu.consumers, name)
		}
	}
}

// REQUIRES: t.mu held.
func (t *Table) leaveProducerGroupLocked(ci *clientInfo, name string) {
	delete(ci.producerGroups, name)
	if ids := t.mu.producers[name]; ids != nil {
		delete(ids, ci.id)
		if len(ids) == 0 {
			delete(t.mu.producers, name)
		}
	}
}

// Members returns the sorted client ids of a consumer group.
func (t *Table) Members(group string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.mu.consumers[group]
	if g == nil {
		return nil
	}
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// MemberConns returns the connections of a consumer group's members.
func (t *Table) MemberConns(group string) []*remoting.Conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.mu.consumers[group]
	if g == nil {
		return nil
	}
	var conns []*remoting.Conn
	for id := range g.members {
		if ci := t.mu.clients[id]; ci != nil && ci.conn != nil && !slices.Contains(conns, ci.conn) {
			conns = append(conns, ci.conn)
		}
	}
	return conns
}

// Subscription returns a consumer group's subscription of topic, or nil.
func (t *Table) Subscription(group, topic string) *Subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	if g := t.mu.consumers[group]; g != nil {
		return g.subs[topic]
	}
	return nil
}

// ConsumerGroupNames returns the groups with members, sorted.
func (t *Table) ConsumerGroupNames() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.mu.consumers))
	for name := range t.mu.consumers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// HasProducerGroup reports whether any live client is in a producer group.
func (t *Table) HasProducerGroup(group string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.mu.producers[group]) > 0
}

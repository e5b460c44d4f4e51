package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// slaveSyncFirst is the delay before a slave's first metadata copy
// (SlaveSynchronize starts 3 s after the broker in 4.9.x).
const slaveSyncFirst = 3 * time.Second

// startSlaveSync runs, on a slave, the copy of the master's topic configs
// (SlaveSynchronize.syncTopicConfig): metadata is not in the commit log, and
// a slave that does not know a topic cannot serve pulls of it. Topics the
// master no longer has are kept (a consumer draining the slave still needs
// them).
func (b *Broker) startSlaveSync() {
	if b.cfg.Role != Slave || b.cfg.SlaveSyncInterval <= 0 {
		return
	}
	b.goLoop(func() {
		t := time.NewTimer(min(slaveSyncFirst, b.cfg.SlaveSyncInterval))
		defer t.Stop()
		var last protocol.DataVersion
		for {
			select {
			case <-b.stop:
				return
			case <-t.C:
			}
			v, err := b.syncTopicConfig(last)
			if err != nil {
				b.log.Warn("slave: copy the master's topic configs", "master", b.masterAddr(), "err", err)
			} else {
				last = v
			}
			if err := b.syncSubGroups(); err != nil {
				b.log.Warn("slave: copy the master's subscription groups", "master", b.masterAddr(), "err", err)
			}
			t.Reset(b.cfg.SlaveSyncInterval)
		}
	})
}

// syncTopicConfig fetches GET_ALL_TOPIC_CONFIG from the master and stores
// every topic that is new or changed, unless the master's DataVersion is
// still last.
func (b *Broker) syncTopicConfig(last protocol.DataVersion) (protocol.DataVersion, error) {
	addr := b.masterAddr()
	if addr == "" {
		return last, nil
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.RegisterTimeout)
	defer cancel()
	resp, err := b.ns.InvokeSync(ctx, addr, remoting.NewRequest(protocol.ReqGetAllTopicConfig, nil))
	if err != nil {
		return last, err
	}
	if resp.Code != protocol.RespSuccess {
		return last, fmt.Errorf("broker: GET_ALL_TOPIC_CONFIG from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	var w protocol.TopicConfigSerializeWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return last, fmt.Errorf("broker: GET_ALL_TOPIC_CONFIG from %s: %w", addr, err)
	}
	if w.DataVersion == last {
		return last, nil
	}
	for name, tc := range w.TopicConfigTable {
		if cur, ok := b.topics.Get(name); ok && meta.SameTopicConfig(cur, tc) {
			continue
		}
		if tc.TopicName == "" {
			tc.TopicName = name
		}
		if _, err := b.topics.Put(tc); err != nil {
			return last, err
		}
	}
	return w.DataVersion, nil
}

// syncSubGroups copies the master's subscription group table to a slave
// (SlaveSynchronize.syncSubscriptionGroupConfig): GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// from the master replaces the slave's table when its DataVersion differs.
func (b *Broker) syncSubGroups() error {
	addr := b.masterAddr()
	if addr == "" {
		return nil
	}
	t, err := b.meta.Groups()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.cfg.RegisterTimeout)
	defer cancel()
	resp, err := b.ns.InvokeSync(ctx, addr, remoting.NewRequest(protocol.ReqGetAllSubscriptionGroupConfig, nil))
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("broker: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: code %d %s", addr, resp.Code, resp.Remark)
	}
	var w protocol.SubscriptionGroupWrapper
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return fmt.Errorf("broker: GET_ALL_SUBSCRIPTIONGROUP_CONFIG from %s: %w", addr, err)
	}
	return t.Replace(w)
}

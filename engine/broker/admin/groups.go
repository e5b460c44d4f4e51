package admin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/brokerlab/brokerlab/engine/broker/clients"
	"github.com/brokerlab/brokerlab/engine/broker/meta"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// FindGroup returns a group's config, creating it with the defaults when
// autoCreateSubscriptionGroup is on (SubscriptionGroupManager
// .findSubscriptionGroupConfig); ok is false for an unknown group otherwise.
func (s *Service) FindGroup(group string) (c protocol.SubscriptionGroupConfig, ok bool, err error) {
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return c, false, err
	}
	if c, ok := t.Get(group); ok {
		return c, true, nil
	}
	if !s.autoCreateSubGroup.Load() || meta.ValidateGroupName(group) != nil {
		return c, false, nil
	}
	c, err = t.CreateIfAbsent(group)
	if err != nil {
		return c, false, err
	}
	s.log.Info("subscription group auto-created", "group", group)
	return c, true, nil
}

// CheckConsumeGroup applies the group's config to a pull, as Java's
// PullMessageProcessor: an unknown group (with auto-creation off) gets
// SUBSCRIPTION_GROUP_NOT_EXIST, a group with consumeEnable=false
// NO_PERMISSION, and so does a broadcasting group with
// consumeBroadcastEnable=false. A table that cannot be loaded does not stop
// pulls.
func (s *Service) CheckConsumeGroup(group string) (int32, string) {
	c, ok, err := s.FindGroup(group)
	switch {
	case err != nil:
		s.log.Warn("subscription group lookup failed; pull allowed", "group", group, "err", err)
		return protocol.RespSuccess, ""
	case !ok:
		return protocol.RespSubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist", group)
	case !c.ConsumeEnable:
		return protocol.RespNoPermission, "subscription group no permission, " + group
	case !c.ConsumeBroadcastEnable && s.deps.Clients.MessageModel(group) == clients.Broadcasting:
		return protocol.RespNoPermission, fmt.Sprintf("the consumer group[%s] can not consume by broadcast way", group)
	}
	return protocol.RespSuccess, ""
}

// RetryMaxTimes is the group's retryMaxTimes, or the broker's
// MaxReconsumeTimes for a group without a config.
func (s *Service) RetryMaxTimes(group string) int32 {
	if c, ok, err := s.FindGroup(group); err == nil && ok {
		return c.RetryMaxTimes
	}
	return s.cfg.MaxReconsumeTimes
}

// RetryQueueNums is the queue count a group's %RETRY% topic is created
// with: its retryQueueNums (at least 1), 1 without a config.
func (s *Service) RetryQueueNums(group string) int32 {
	if c, ok, err := s.FindGroup(group); err == nil && ok {
		return max(c.RetryQueueNums, 1)
	}
	return 1
}

// NotifyEnabled reports whether a group's members are told when its
// membership changes (notifyConsumerIdsChangedEnable; true without a
// config).
func (s *Service) NotifyEnabled(group string) bool {
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return true
	}
	c, ok := t.Get(group)
	return !ok || c.NotifyConsumerIdsChangedEnable
}

// EnsureHeartbeatGroups creates the configs of a heartbeat's consumer
// groups (Java's ClientManageProcessor does, with auto-creation on).
func (s *Service) EnsureHeartbeatGroups(hb *clients.HeartbeatData) {
	for _, cd := range hb.ConsumerDataSet {
		if cd.GroupName == "" {
			continue
		}
		if _, _, err := s.FindGroup(cd.GroupName); err != nil {
			s.log.Warn("subscription group auto-create failed", "group", cd.GroupName, "err", err)
		}
	}
}

// getAllSubscriptionGroupConfig handles GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// (201): the persisted table, SubscriptionGroupWrapper JSON.
func (s *Service) getAllSubscriptionGroupConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	body, err := json.Marshal(t.Wrapper())
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

// updateAndCreateSubscriptionGroup handles UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
// (200): the body is a SubscriptionGroupConfig; fields it leaves out get
// the defaults.
func (s *Service) updateAndCreateSubscriptionGroup(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	c, err := meta.DecodeSubscriptionGroupConfig(req.Body)
	if err != nil {
		return nil, remoting.NewBadRequest("%v", err)
	}
	if err := meta.ValidateGroupName(c.GroupName); err != nil {
		return remoting.NewResponse(protocol.RespInvalidParameter, err.Error()), nil
	}
	if c.RetryQueueNums < 0 || c.RetryMaxTimes < -1 {
		return responsef(protocol.RespInvalidParameter, "retryQueueNums %d / retryMaxTimes %d out of range",
			c.RetryQueueNums, c.RetryMaxTimes), nil
	}
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if err := t.Put(c); err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	s.log.Info("subscription group updated", "group", c.GroupName, "consumeEnable", c.ConsumeEnable,
		"retryMaxTimes", c.RetryMaxTimes)
	return success(), nil
}

// deleteSubscriptionGroup handles DELETE_SUBSCRIPTIONGROUP (207): header
// groupName, and cleanOffset (5.x) or removeOffset (4.9.x) to drop the
// group's consumer offsets too.
func (s *Service) deleteSubscriptionGroup(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	group, err := req.ExtFields.String("groupName")
	if err != nil {
		return nil, err
	}
	clean, err := req.ExtFields.OptBool("cleanOffset", false)
	if err != nil {
		return nil, err
	}
	remove, err := req.ExtFields.OptBool("removeOffset", false)
	if err != nil {
		return nil, err
	}
	t, err := s.deps.Meta.Groups()
	if err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if _, err := t.Delete(group); err != nil {
		return responsef(protocol.RespSystemError, "%v", err), nil
	}
	if clean || remove {
		if err := s.deps.Meta.Offsets.RemoveGroup(group); err != nil {
			return responsef(protocol.RespSystemError, "remove offsets of %s: %v", group, err), nil
		}
	}
	s.log.Info("subscription group deleted", "group", group, "offsetsRemoved", clean || remove)
	return success(), nil
}

package proxy

import (
	"encoding/json"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/brokerlab/brokerlab/engine/protocol"
)

// Exponential retry defaults (ExponentialRetryPolicy).
const (
	expInitial    = 5 * time.Second
	expMax        = 2 * time.Hour
	expMultiplier = 2
)

// groupRetryPolicy is SubscriptionGroupConfig.groupRetryPolicy as fastjson
// writes it: the type (CUSTOMIZED by default) and the policy of that type
// (its defaults when absent). Durations are in ms.
type groupRetryPolicy struct {
	Type        string `json:"type"`
	Exponential *struct {
		Initial    *int64 `json:"initial"`
		Max        *int64 `json:"max"`
		Multiplier *int64 `json:"multiplier"`
	} `json:"exponentialRetryPolicy"`
	Customized *struct {
		Next []int64 `json:"next"`
	} `json:"customizedRetryPolicy"`
}

// retryPolicy is the backoff policy the server's settings give a consumer
// of a group with config c (GrpcClientSettingsManager.mergeSubscriptionData):
// max attempts retryMaxTimes + 1, and the group's EXPONENTIAL policy or
// else its CUSTOMIZED one (the delay levels from 1 s when it lists none).
// A policy that does not decode is the default.
func retryPolicy(c protocol.SubscriptionGroupConfig) *v2.RetryPolicy {
	var gp groupRetryPolicy
	if len(c.GroupRetryPolicy) > 0 {
		if err := json.Unmarshal(c.GroupRetryPolicy, &gp); err != nil {
			gp = groupRetryPolicy{}
		}
	}
	out := &v2.RetryPolicy{MaxAttempts: c.RetryMaxTimes + 1}
	if gp.Type == "EXPONENTIAL" {
		initial, maxD, mult := expInitial, expMax, int64(expMultiplier)
		if e := gp.Exponential; e != nil {
			if e.Initial != nil {
				initial = time.Duration(*e.Initial) * time.Millisecond
			}
			if e.Max != nil {
				maxD = time.Duration(*e.Max) * time.Millisecond
			}
			if e.Multiplier != nil {
				mult = *e.Multiplier
			}
		}
		out.Strategy = &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: durationpb.New(initial), Max: durationpb.New(maxD), Multiplier: float32(mult)}}
		return out
	}
	var next []*durationpb.Duration
	if cp := gp.Customized; cp != nil && cp.Next != nil {
		for _, ms := range cp.Next {
			next = append(next, durationpb.New(time.Duration(ms)*time.Millisecond))
		}
	} else {
		for _, d := range retryDelays {
			next = append(next, durationpb.New(d))
		}
	}
	out.Strategy = &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: &v2.CustomizedBackoff{Next: next}}
	return out
}

// consumeOrderly reports whether group consumes in FIFO order: its
// subscription group's consumeMessageOrderly (Java merges it into the
// consumer's settings, and the push consumer picks FIFO consumption from
// there), else, for a group the broker does not know, the client's own
// settings.
func (s *Server) consumeOrderly(group string, client *v2.Settings) bool {
	if c, ok, err := s.b.FindSubscriptionGroup(group); err == nil && ok {
		return c.ConsumeMessageOrderly
	}
	return client.GetSubscription().GetFifo()
}

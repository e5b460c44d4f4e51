package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

func init() {
	registerAdmin(newConsumerProgressCmd)
	registerAdmin(newConsumerConnectionCmd)
	registerAdmin(newProducerConnectionCmd)
	registerAdmin(newResetOffsetByTimeCmd)
	registerAdmin(newUpdateSubGroupCmd)
	registerAdmin(newDeleteSubGroupCmd)
}

// groupSummary is one group of consumerProgress without -g.
type groupSummary struct {
	Group        string `json:"group"`
	Count        int    `json:"count"`
	Version      string `json:"version"`
	ConsumeType  string `json:"consumeType"`
	MessageModel string `json:"messageModel"`
	ConsumeTps   int64  `json:"consumeTps"`
	DiffTotal    int64  `json:"diffTotal"`
}

// consumeProgress is consumerProgress -g's JSON result.
type consumeProgress struct {
	Group         string                  `json:"group"`
	Queues        []mqadmin.OffsetWrapper `json:"queues"`
	ConsumeTps    float64                 `json:"consumeTps"`
	DiffTotal     int64                   `json:"diffTotal"`
	InflightTotal int64                   `json:"inflightTotal"`
}

func newConsumerProgressCmd(f *adminFlags) *cobra.Command {
	var group, topic, cluster string
	cmd := &cobra.Command{
		Use:   "consumerProgress",
		Short: "Query consumer's progress, speed",
		Long: `Query a consumer group's progress: per queue the broker offset, the group's
committed offset, the difference (lag), the in-flight count (pulled, not yet
committed) and the store time of the last consumed message. Without -g, one
line per consumer group known from the %RETRY% topics.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				if group == "" {
					return allGroupsProgress(ctx, f, a, out)
				}
				cs, err := a.ExamineConsumeStats(ctx, strings.TrimSpace(group), strings.TrimSpace(topic))
				if err != nil {
					return err
				}
				if len(cs.Queues) == 0 {
					return fmt.Errorf("%w: no consume stats for group %q: it consumed nothing yet, or is offline or broadcasting",
						mqadmin.ErrNotFound, group)
				}
				res := consumeProgress{Group: group, Queues: cs.Queues, ConsumeTps: cs.ConsumeTps, DiffTotal: cs.DiffTotal()}
				for _, q := range cs.Queues {
					res.InflightTotal += q.Inflight
				}
				return f.emit(out, res, func() {
					fmt.Fprintf(out, "%-64s  %-32s  %-4s  %-20s  %-20s  %-20s %-20s%s\n", "#Topic", "#Broker Name", "#QID",
						"#Broker Offset", "#Consumer Offset", "#Diff", "#Inflight", "#LastTime")
					for _, q := range cs.Queues {
						last := "N/A"
						if q.LastTimestamp != 0 {
							last = time.UnixMilli(q.LastTimestamp).Format(time.DateTime)
						}
						fmt.Fprintf(out, "%-64s  %-32s  %-4d  %-20d  %-20d  %-20d %-20d %s\n", frontStringAtLeast(q.Topic, 64),
							frontStringAtLeast(q.BrokerName, 32), q.QueueID, q.BrokerOffset, q.ConsumerOffset, q.Diff, q.Inflight, last)
					}
					fmt.Fprintf(out, "\nConsume TPS: %.2f\nConsume Diff Total: %d\nConsume Inflight Total: %d\n",
						res.ConsumeTps, res.DiffTotal, res.InflightTotal)
				})
			})
		},
	}
	cmd.Flags().StringVarP(&group, "groupName", "g", "", "consumer group name (default: every group)")
	cmd.Flags().StringVarP(&topic, "topicName", "t", "", "only this topic")
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "cluster name (accepted for mqadmin compatibility)")
	return cmd
}

func allGroupsProgress(ctx context.Context, f *adminFlags, a *mqadmin.Admin, out io.Writer) error {
	topics, err := a.TopicList(ctx)
	if err != nil {
		return err
	}
	rows := []groupSummary{}
	for _, t := range topics {
		group, ok := strings.CutPrefix(t, protocol.RetryTopicPrefix)
		if !ok {
			continue
		}
		row := groupSummary{Group: group}
		if cs, err := a.ExamineConsumeStats(ctx, group, ""); err == nil {
			row.ConsumeTps, row.DiffTotal = int64(cs.ConsumeTps), cs.DiffTotal()
		} else {
			slog.Warn("consumerProgress: consume stats", "group", group, "err", err)
		}
		if cc, err := a.ExamineConsumerConnection(ctx, group, ""); err == nil {
			row.Count = len(cc.Connections)
			row.ConsumeType = "PUSH"
			if cc.ConsumeType == "CONSUME_ACTIVELY" {
				row.ConsumeType = "PULL"
			} else {
				row.MessageModel = cc.MessageModel
			}
			minV := cc.Connections[0].Version
			for _, c := range cc.Connections {
				minV = min(minV, c.Version)
			}
			row.Version = mqadmin.VersionDesc(minV)
		} else if !errors.Is(err, mqadmin.ErrNotFound) {
			slog.Warn("consumerProgress: consumer connections", "group", group, "err", err)
		}
		rows = append(rows, row)
	}
	return f.emit(out, rows, func() {
		fmt.Fprintf(out, "%-64s  %-6s  %-24s %-5s  %-14s  %-7s  %s\n", "#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total")
		for _, r := range rows {
			v := r.Version
			if r.Count == 0 {
				v = "OFFLINE"
			}
			fmt.Fprintf(out, "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d\n", frontStringAtLeast(r.Group, 64), r.Count, v,
				r.ConsumeType, r.MessageModel, r.ConsumeTps, r.DiffTotal)
		}
	})
}

func newConsumerConnectionCmd(f *adminFlags) *cobra.Command {
	var group, brokerAddr string
	cmd := &cobra.Command{
		Use:   "consumerConnection",
		Short: "Query consumer's socket connection, client version and subscription",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				cc, err := a.ExamineConsumerConnection(ctx, strings.TrimSpace(group), strings.TrimSpace(brokerAddr))
				if err != nil {
					return err
				}
				return f.emit(out, cc, func() {
					fmt.Fprintf(out, "%-36s %-22s %-10s %s\n", "#ClientId", "#ClientAddr", "#Language", "#Version")
					for _, c := range cc.Connections {
						fmt.Fprintf(out, "%-36s %-22s %-10s %s\n", c.ClientID, c.ClientAddr, c.Language, c.VersionDesc)
					}
					fmt.Fprintf(out, "\nBelow is subscription:\n")
					fmt.Fprintf(out, "%-20s %s\n", "#Topic", "#SubExpression")
					for _, s := range cc.Subscriptions {
						fmt.Fprintf(out, "%-20s %s\n", s.Topic, s.SubString)
					}
					fmt.Fprintf(out, "\nConsumeType: %s\nMessageModel: %s\nConsumeFromWhere: %s\n",
						cc.ConsumeType, cc.MessageModel, cc.ConsumeFromWhere)
				})
			})
		},
	}
	cmd.Flags().StringVarP(&group, "consumerGroup", "g", "", "consumer group name (required)")
	cmd.Flags().StringVarP(&brokerAddr, "brokerAddr", "b", "", "ask this broker (default: one serving the group's retry topic)")
	_ = cmd.MarkFlagRequired("consumerGroup")
	return cmd
}

func newProducerConnectionCmd(f *adminFlags) *cobra.Command {
	var group, topic string
	cmd := &cobra.Command{
		Use:   "producerConnection",
		Short: "Query producer's socket connection and client version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				conns, err := a.ExamineProducerConnection(ctx, strings.TrimSpace(group), strings.TrimSpace(topic))
				if err != nil {
					return err
				}
				return f.emit(out, map[string]any{"connections": conns}, func() {
					for i, c := range conns {
						fmt.Fprintf(out, "%04d  %-32s %-22s %-8s %s\n", i+1, c.ClientID, c.ClientAddr, c.Language, c.VersionDesc)
					}
				})
			})
		},
	}
	cmd.Flags().StringVarP(&group, "producerGroup", "g", "", "producer group name (required)")
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "a topic the group sends to (required)")
	_ = cmd.MarkFlagRequired("producerGroup")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// queueReset is resetOffsetByTime -b -q's JSON result.
type queueReset struct {
	Broker  string `json:"broker"`
	Topic   string `json:"topic"`
	QueueID int32  `json:"queueId"`
	Offset  int64  `json:"offset"`
}

func newResetOffsetByTimeCmd(f *adminFlags) *cobra.Command {
	var (
		group, topic, ts, brokerAddr, cluster string
		force                                 bool
		queueID                               int32
		offset                                int64
	)
	cmd := &cobra.Command{
		Use:   "resetOffsetByTime",
		Short: "Reset consumer offset by timestamp (without client restart)",
		Long: `Reset a consumer group's offsets on a topic to the first message stored at
or after a time. Live consumers get the new offsets pushed by their brokers;
for a group with no live consumer the offsets are committed directly (mqadmin's
fallback, printed as the rollback table). With -b and -q only that queue is
reset (to -o if given).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stamp, err := parseMillis(ts, time.Now())
			if err != nil {
				return err
			}
			group, topic = strings.TrimSpace(group), strings.TrimSpace(topic)
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				if brokerAddr != "" && cmd.Flags().Changed("queue") {
					return resetOneQueue(ctx, f, a, out, cmd.Flags().Changed("offset"), brokerAddr, topic, group, queueID, offset, stamp, ts)
				}
				res, err := a.ResetOffsetByTime(ctx, topic, group, stamp, force)
				if err != nil {
					return err
				}
				return f.emit(out, res, func() {
					if res.Offline {
						fmt.Fprintf(out, "reset consumer offset by specified consumerGroup[%s], topic[%s], force[%t], timestamp(string)[%s], timestamp(long)[%d]\n",
							group, topic, force, ts, stamp)
						fmt.Fprintf(out, "%-20s  %-20s  %-20s  %-20s  %-20s  %-20s\n", "#brokerName", "#queueId", "#brokerOffset",
							"#consumerOffset", "#timestampOffset", "#resetOffset")
						for _, r := range res.Rollback {
							fmt.Fprintf(out, "%-20s  %-20d  %-20d  %-20d  %-20d  %-20d\n", frontStringAtLeast(r.BrokerName, 32), r.QueueID,
								r.BrokerOffset, r.ConsumerOffset, r.TimestampOffset, r.RollbackOffset)
						}
						return
					}
					fmt.Fprintf(out, "start reset consumer offset by specified, group[%s], topic[%s], force[%t], timestamp(string)[%s], timestamp(long)[%d]\n",
						group, topic, force, ts, stamp)
					fmt.Fprintf(out, "%-40s  %-40s  %-40s\n", "#brokerName", "#queueId", "#offset")
					for _, q := range res.Offsets {
						fmt.Fprintf(out, "%-40s  %-40d  %-40d\n", frontStringAtLeast(q.BrokerName, 32), q.QueueID, q.Offset)
					}
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&group, "group", "g", "", "consumer group (required)")
	fl.StringVarP(&topic, "topic", "t", "", "topic (required)")
	fl.StringVarP(&ts, "timestamp", "s", "", "now, epoch milliseconds or yyyy-MM-dd#HH:mm:ss:SSS (required)")
	boolArgVarP(fl, &force, "force", "f", true, "also reset forward (to an offset past the committed one)")
	fl.StringVarP(&brokerAddr, "broker", "b", "", "with -q: the broker of the queue")
	fl.Int32VarP(&queueID, "queue", "q", 0, "with -b: reset only this queue")
	fl.Int64VarP(&offset, "offset", "o", 0, "with -b and -q: reset to this offset instead of the timestamp's")
	fl.StringVarP(&cluster, "cluster", "c", "", "cluster name (accepted for mqadmin compatibility)")
	for _, n := range []string{"group", "topic", "timestamp"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// resetOneQueue is mqadmin's resetOffsetByQueueId: commit the offset, then
// have the broker push it to live consumers.
func resetOneQueue(ctx context.Context, f *adminFlags, a *mqadmin.Admin, out io.Writer, haveOffset bool,
	addr, topic, group string, queueID int32, offset, stamp int64, ts string) error {
	if !haveOffset {
		var err error
		if offset, err = a.SearchOffset(ctx, addr, topic, queueID, stamp); err != nil {
			return err
		}
	}
	mq := protocol.MessageQueue{Topic: topic, QueueID: queueID}
	if err := a.UpdateConsumerOffset(ctx, addr, group, mq, offset); err != nil {
		return err
	}
	if _, err := a.ResetQueueOffset(ctx, addr, topic, group, queueID, offset); err != nil &&
		mqadmin.ResponseCode(err) != protocol.RespConsumerNotOnline { // offline: the commit is all there is to do
		return err
	}
	return f.emit(out, queueReset{Broker: addr, Topic: topic, QueueID: queueID, Offset: offset}, func() {
		fmt.Fprintf(out, "start reset consumer offset by specified, group[%s], topic[%s], queueId[%d], broker[%s], timestamp(string)[%s], timestamp(long)[%d]\n",
			group, topic, queueID, addr, ts, stamp)
		fmt.Fprintf(out, "reset consumer offset to %d\n", offset)
	})
}

// subGroupUpdate is updateSubGroup's JSON result.
type subGroupUpdate struct {
	Brokers []string                         `json:"brokers"`
	Config  protocol.SubscriptionGroupConfig `json:"subscriptionGroupConfig"`
}

func newUpdateSubGroupCmd(f *adminFlags) *cobra.Command {
	var (
		brokerAddr, cluster, group, policy, attributes            string
		consumeEnable, fromMin, broadcast, orderly, notifyChanged bool
		retryQueues, retryMax                                     int32
		brokerID, slowBroker                                      int64
	)
	cmd := &cobra.Command{
		Use:   "updateSubGroup",
		Short: "Update or create subscription group",
		Long: `Update or create a subscription group (consumer group settings kept by the
broker: consume enable, retry queues, max retries, ...). As in mqadmin the
group is written whole: settings not given take SubscriptionGroupConfig's
defaults (consumeFromMinEnable and consumeBroadcastEnable false).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			cfg := mqadmin.NewSubscriptionGroupConfig(strings.TrimSpace(group))
			cfg.ConsumeEnable, cfg.ConsumeFromMinEnable, cfg.ConsumeBroadcastEnable = consumeEnable, fromMin, broadcast
			cfg.ConsumeMessageOrderly, cfg.NotifyConsumerIdsChangedEnable = orderly, notifyChanged
			cfg.RetryQueueNums, cfg.RetryMaxTimes = retryQueues, retryMax
			cfg.BrokerID, cfg.WhichBrokerWhenConsumeSlowly = brokerID, slowBroker
			if policy != "" {
				if !json.Valid([]byte(policy)) {
					return fmt.Errorf("--groupRetryPolicy: not JSON: %s", policy)
				}
				cfg.GroupRetryPolicy = json.RawMessage(policy)
			}
			if attributes != "" {
				attrs, err := parseAttributes(attributes)
				if err != nil {
					return err
				}
				cfg.Attributes = attrs
			}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, brokerAddr, cluster, false)
				if err != nil {
					return err
				}
				res := subGroupUpdate{Brokers: []string{}, Config: cfg}
				for _, b := range brokers {
					if err := a.CreateSubscriptionGroup(ctx, b.Addr, cfg); err != nil {
						return err
					}
					res.Brokers = append(res.Brokers, b.Addr)
				}
				return f.emit(out, res, func() {
					for _, b := range res.Brokers {
						fmt.Fprintf(out, "create subscription group to %s success.\n", b)
					}
					fmt.Fprintf(out, "SubscriptionGroupConfig [groupName=%s, consumeEnable=%t, consumeFromMinEnable=%t, consumeBroadcastEnable=%t, consumeMessageOrderly=%t, retryQueueNums=%d, retryMaxTimes=%d, brokerId=%d, whichBrokerWhenConsumeSlowly=%d, notifyConsumerIdsChangedEnable=%t, attributes=%v]\n",
						cfg.GroupName, cfg.ConsumeEnable, cfg.ConsumeFromMinEnable, cfg.ConsumeBroadcastEnable, cfg.ConsumeMessageOrderly,
						cfg.RetryQueueNums, cfg.RetryMaxTimes, cfg.BrokerID, cfg.WhichBrokerWhenConsumeSlowly,
						cfg.NotifyConsumerIdsChangedEnable, cfg.Attributes)
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&brokerAddr, "brokerAddr", "b", "", "create the group on this broker")
	fl.StringVarP(&cluster, "clusterName", "c", "", "create the group on every master of this cluster")
	fl.StringVarP(&group, "groupName", "g", "", "consumer group name (required)")
	boolArgVarP(fl, &consumeEnable, "consumeEnable", "s", true, "consume enable")
	boolArgVarP(fl, &fromMin, "consumeFromMinEnable", "m", false, "consume from min offset")
	boolArgVarP(fl, &broadcast, "consumeBroadcastEnable", "d", false, "broadcast")
	boolArgVarP(fl, &orderly, "consumeMessageOrderly", "o", false, "consume message orderly")
	fl.Int32VarP(&retryQueues, "retryQueueNums", "q", 1, "retry queue nums")
	fl.Int32VarP(&retryMax, "retryMaxTimes", "r", 16, "retry max times")
	fl.StringVarP(&policy, "groupRetryPolicy", "p", "", `retry policy JSON, e.g. {"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[1000,5000]}}`)
	fl.Int64VarP(&brokerID, "brokerId", "i", 0, "consume from this broker id")
	fl.Int64VarP(&slowBroker, "whichBrokerWhenConsumeSlowly", "w", 1, "broker id to consume from when consuming slowly")
	boolArgVarP(fl, &notifyChanged, "notifyConsumerIdsChanged", "a", true, "notify consumers when the group's members change")
	fl.StringVar(&attributes, "attributes", "", "attributes: +a=b,+c=d,-e")
	_ = cmd.MarkFlagRequired("groupName")
	return cmd
}

// parseAttributes reads AttributeParser's "+a=b,+c=d,-e" into a map
// ("+a"→"b", "-e"→"").
func parseAttributes(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		if kv[0] != '+' && kv[0] != '-' {
			return nil, fmt.Errorf("attribute %q: want +key=value or -key", kv)
		}
		k, v, hasV := strings.Cut(kv, "=")
		if kv[0] == '+' && !hasV || kv[0] == '-' && hasV {
			return nil, fmt.Errorf("attribute %q: want +key=value or -key", kv)
		}
		out[k] = v
	}
	return out, nil
}

// subGroupDelete is deleteSubGroup's JSON result.
type subGroupDelete struct {
	Group   string   `json:"group"`
	Brokers []string `json:"brokers"`
	Topics  []string `json:"deletedTopics,omitempty"`
}

func newDeleteSubGroupCmd(f *adminFlags) *cobra.Command {
	var (
		brokerAddr, cluster, group string
		removeOffset               bool
	)
	cmd := &cobra.Command{
		Use:   "deleteSubGroup",
		Short: "Delete subscription group from broker",
		Long: `Delete a subscription group from a broker (-b) or from every master of a
cluster (-c, which also deletes the group's %RETRY% and %DLQ% topics).
-r true removes the group's consumer offsets too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			group = strings.TrimSpace(group)
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, brokerAddr, cluster, false)
				if err != nil {
					return err
				}
				res := subGroupDelete{Group: group, Brokers: []string{}}
				var lines []string
				for _, b := range brokers {
					if err := a.DeleteSubscriptionGroup(ctx, b.Addr, group, removeOffset); err != nil {
						return err
					}
					res.Brokers = append(res.Brokers, b.Addr)
					if cluster == "" {
						lines = append(lines, fmt.Sprintf("delete subscription group [%s] from broker [%s] success.", group, b.Addr))
					} else {
						lines = append(lines, fmt.Sprintf("delete subscription group [%s] from broker [%s] in cluster [%s] success.", group, b.Addr, cluster))
					}
				}
				if cluster != "" {
					for _, t := range []string{protocol.RetryTopic(group), protocol.DLQTopic(group)} {
						if _, err := deleteTopic(ctx, a, cluster, t, true); err != nil {
							slog.Warn("deleteSubGroup: delete topic", "topic", t, "err", err)
							continue
						}
						res.Topics = append(res.Topics, t)
					}
				}
				return f.emit(out, res, func() {
					for _, l := range lines {
						fmt.Fprintln(out, l)
					}
				})
			})
		},
	}
	cmd.Flags().StringVarP(&brokerAddr, "brokerAddr", "b", "", "delete the group from this broker")
	cmd.Flags().StringVarP(&cluster, "clusterName", "c", "", "delete the group from every master of this cluster")
	cmd.Flags().StringVarP(&group, "groupName", "g", "", "subscription group name (required)")
	boolArgVarP(cmd.Flags(), &removeOffset, "removeOffset", "r", false, "remove the group's consumer offsets too")
	_ = cmd.MarkFlagRequired("groupName")
	return cmd
}

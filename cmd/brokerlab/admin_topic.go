package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

func init() {
	registerAdmin(newClusterListCmd)
	registerAdmin(newTopicListCmd)
	registerAdmin(newTopicRouteCmd)
	registerAdmin(newTopicStatusCmd)
	registerAdmin(newUpdateTopicCmd)
	registerAdmin(newDeleteTopicCmd)
}

// clusterRow is one broker of clusterList, with the runtime stats mqadmin
// derives its columns from.
type clusterRow struct {
	Cluster    string  `json:"cluster"`
	BrokerName string  `json:"brokerName"`
	BrokerID   int64   `json:"brokerId"`
	Addr       string  `json:"addr"`
	Version    string  `json:"version"`
	InTps      float64 `json:"inTps"`
	OutTps     float64 `json:"outTps"`
	// SendQueue, PullQueue: thread-pool queue sizes and head waits (ms).
	SendQueue         string  `json:"sendThreadPoolQueueSize"`
	SendWaitMs        string  `json:"sendThreadPoolQueueHeadWaitTimeMills"`
	PullQueue         string  `json:"pullThreadPoolQueueSize"`
	PullWaitMs        string  `json:"pullThreadPoolQueueHeadWaitTimeMills"`
	PageCacheLockMs   string  `json:"pageCacheLockTimeMills"`
	TimerReadBehind   int64   `json:"timerReadBehind"`
	TimerOffsetBehind int64   `json:"timerOffsetBehind"`
	TimerCongestNum   int64   `json:"timerCongestNum"`
	TimerEnqueueTps   float64 `json:"timerEnqueueTps"`
	TimerDequeueTps   float64 `json:"timerDequeueTps"`
	Hours             float64 `json:"hoursOfMessages"`
	CommitLogDiskUsed float64 `json:"commitLogDiskRatio"`
	Active            bool    `json:"brokerActive"`
	InTotalYesterday  int64   `json:"inTotalYesterday"`
	OutTotalYesterday int64   `json:"outTotalYesterday"`
	InTotalToday      int64   `json:"inTotalToday"`
	OutTotalToday     int64   `json:"outTotalToday"`
	Error             string  `json:"error,omitempty"`
}

func newClusterListCmd(f *adminFlags) *cobra.Command {
	var (
		more     bool
		interval int
		cluster  string
	)
	cmd := &cobra.Command{
		Use:   "clusterList",
		Short: "List cluster infos",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				for i := 0; ; i++ {
					if i > 0 {
						select {
						case <-ctx.Done():
							return nil
						case <-time.After(time.Duration(interval) * time.Second):
						}
					}
					rows, err := clusterRows(ctx, a, cluster)
					if err != nil {
						return err
					}
					if err := f.emit(out, rows, func() { printClusterRows(out, rows, more) }); err != nil {
						return err
					}
					if interval <= 0 {
						return nil
					}
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&more, "moreStats", "m", false, "print more stats (message totals of yesterday and today)")
	cmd.Flags().IntVarP(&interval, "interval", "i", 0, "print again every N seconds until interrupted")
	cmd.Flags().StringVarP(&cluster, "clusterName", "c", "", "only this cluster")
	return cmd
}

func clusterRows(ctx context.Context, a *mqadmin.Admin, cluster string) ([]clusterRow, error) {
	ci, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	clusters := slices.Sorted(maps.Keys(ci.ClusterAddrTable))
	if cluster != "" {
		clusters = []string{cluster}
	}
	rows := []clusterRow{}
	now := time.Now()
	for _, c := range clusters {
		brokers, err := a.ClusterBrokers(ctx, c, true)
		if err != nil {
			return nil, err
		}
		for _, b := range brokers {
			row := clusterRow{Cluster: c, BrokerName: b.BrokerName, BrokerID: b.BrokerID, Addr: b.Addr}
			kv, err := a.RuntimeInfo(ctx, b.Addr)
			if err != nil {
				row.Error = err.Error()
				slog.Warn("clusterList: runtime info", "broker", b.Addr, "err", err)
				rows = append(rows, row)
				continue
			}
			row.Version = kv["brokerVersionDesc"]
			row.InTps = firstFloat(kv["putTps"])
			row.OutTps = firstFloat(kv["getTransferredTps"])
			row.SendQueue, row.SendWaitMs = kv["sendThreadPoolQueueSize"], kv["sendThreadPoolQueueHeadWaitTimeMills"]
			row.PullQueue, row.PullWaitMs = kv["pullThreadPoolQueueSize"], kv["pullThreadPoolQueueHeadWaitTimeMills"]
			row.PageCacheLockMs = kv["pageCacheLockTimeMills"]
			row.Active, _ = strconv.ParseBool(kv["brokerActive"])
			if ts, err := strconv.ParseInt(kv["earliestMessageTimeStamp"], 10, 64); err == nil && ts > 0 {
				row.Hours = float64(now.UnixMilli()-ts) / 3600e3
			}
			row.CommitLogDiskUsed, _ = strconv.ParseFloat(kv["commitLogDiskRatio"], 64)
			n := func(k string) int64 { v, _ := strconv.ParseInt(kv[k], 10, 64); return v }
			row.TimerReadBehind, row.TimerOffsetBehind, row.TimerCongestNum = n("timerReadBehind"), n("timerOffsetBehind"), n("timerCongestNum")
			row.TimerEnqueueTps, _ = strconv.ParseFloat(kv["timerEnqueueTps"], 64)
			row.TimerDequeueTps, _ = strconv.ParseFloat(kv["timerDequeueTps"], 64)
			row.InTotalYesterday = n("msgPutTotalTodayMorning") - n("msgPutTotalYesterdayMorning")
			row.OutTotalYesterday = n("msgGetTotalTodayMorning") - n("msgGetTotalYesterdayMorning")
			row.InTotalToday = n("msgPutTotalTodayNow") - n("msgPutTotalTodayMorning")
			row.OutTotalToday = n("msgGetTotalTodayNow") - n("msgGetTotalTodayMorning")
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// firstFloat reads the first number of a "tps tps tps" runtime value.
func firstFloat(s string) float64 {
	fs := strings.Fields(s)
	if len(fs) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(fs[0], 64)
	return v
}

func printClusterRows(out io.Writer, rows []clusterRow, more bool) {
	if more {
		fmt.Fprintf(out, "%-16s  %-32s %14s %14s %14s %14s\n", "#Cluster Name", "#Broker Name",
			"#InTotalYest", "#OutTotalYest", "#InTotalToday", "#OutTotalToday")
		for _, r := range rows {
			fmt.Fprintf(out, "%-16s  %-32s %14d %14d %14d %14d\n", r.Cluster, r.BrokerName,
				r.InTotalYesterday, r.OutTotalYesterday, r.InTotalToday, r.OutTotalToday)
		}
		return
	}
	fmt.Fprintf(out, "%-22s  %-22s  %-4s  %-22s %-16s  %16s  %30s  %-22s  %-11s  %-12s  %-8s  %-10s\n",
		"#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)", "#OutTPS(LOAD)",
		"#Timer(Progress)", "#PCWait(ms)", "#Hour", "#SPACE", "#ACTIVATED")
	for _, r := range rows {
		fmt.Fprintf(out, "%-22s  %-22s  %-4d  %-22s %-16s  %16s  %30s  %-22s  %11s  %-12s  %-8s  %10t\n",
			r.Cluster, r.BrokerName, r.BrokerID, r.Addr, r.Version,
			fmt.Sprintf("%9.2f(%s,%sms)", r.InTps, r.SendQueue, r.SendWaitMs),
			fmt.Sprintf("%9.2f(%s,%sms)", r.OutTps, r.PullQueue, r.PullWaitMs),
			fmt.Sprintf("%d-%d(%.1fw, %.1f, %.1f)", r.TimerReadBehind, r.TimerOffsetBehind, float64(r.TimerCongestNum)/10000,
				r.TimerEnqueueTps, r.TimerDequeueTps),
			r.PageCacheLockMs, fmt.Sprintf("%2.2f", r.Hours), fmt.Sprintf("%.4f", r.CommitLogDiskUsed), r.Active)
	}
}

// topicClusterRow is one row of topicList -c.
type topicClusterRow struct {
	Cluster string `json:"cluster"`
	Topic   string `json:"topic"`
	Group   string `json:"consumerGroup"`
}

func newTopicListCmd(f *adminFlags) *cobra.Command {
	var clusterModel bool
	cmd := &cobra.Command{
		Use:   "topicList",
		Short: "Fetch all topic list from name server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				topics, err := a.TopicList(ctx)
				if err != nil {
					return err
				}
				if !clusterModel {
					return f.emit(out, map[string][]string{"topicList": topics}, func() {
						for _, t := range topics {
							fmt.Fprintln(out, t)
						}
					})
				}
				ci, err := a.ClusterInfo(ctx)
				if err != nil {
					return err
				}
				rows := []topicClusterRow{}
				for _, t := range topics {
					if strings.HasPrefix(t, protocol.RetryTopicPrefix) || strings.HasPrefix(t, protocol.DLQTopicPrefix) {
						continue
					}
					cluster, groups := topicClusterAndGroups(ctx, a, ci, t)
					if len(groups) == 0 {
						groups = []string{""}
					}
					for _, g := range groups {
						rows = append(rows, topicClusterRow{cluster, t, g})
					}
				}
				return f.emit(out, rows, func() {
					fmt.Fprintf(out, "%-20s  %-48s  %-48s\n", "#Cluster Name", "#Topic", "#Consumer Group")
					for _, r := range rows {
						fmt.Fprintf(out, "%-20s  %-64s  %-64s\n", frontStringAtLeast(r.Cluster, 20),
							frontStringAtLeast(r.Topic, 64), frontStringAtLeast(r.Group, 64))
					}
				})
			})
		},
	}
	cmd.Flags().BoolVarP(&clusterModel, "clusterModel", "c", false, "print each topic's cluster and consumer groups")
	return cmd
}

// topicClusterAndGroups finds the cluster of topic's first broker and the
// groups consuming it; errors leave them empty, as mqadmin does.
func topicClusterAndGroups(ctx context.Context, a *mqadmin.Admin, ci *protocol.ClusterInfo, topic string) (string, []string) {
	rd, err := a.TopicRoute(ctx, topic)
	if err != nil || len(rd.BrokerDatas) == 0 {
		return "", nil
	}
	cluster := ""
	for _, c := range slices.Sorted(maps.Keys(ci.ClusterAddrTable)) {
		if slices.Contains(ci.ClusterAddrTable[c], rd.BrokerDatas[0].BrokerName) {
			cluster = c
			break
		}
	}
	groups, err := a.QueryTopicConsumeByWho(ctx, topic)
	if err != nil {
		slog.Warn("topicList: consumer groups", "topic", topic, "err", err)
		return cluster, nil
	}
	return cluster, groups
}

// routeRow is one broker of topicRoute's table.
type routeRow struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
	ReadQueues  int32            `json:"readQueueNums"`
	WriteQueues int32            `json:"writeQueueNums"`
	Perm        int32            `json:"perm"`
}

func newTopicRouteCmd(f *adminFlags) *cobra.Command {
	var (
		topic string
		list  bool
	)
	cmd := &cobra.Command{
		Use:   "topicRoute",
		Short: "Examine topic route info",
		Long: `Examine topic route info: per broker its cluster, addresses, read and write
queues and permission (mqadmin topicRoute -l's table; --json prints the route).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				rd, err := a.TopicRoute(ctx, topic)
				if err != nil {
					return err
				}
				return f.emit(out, rd, func() { printRoute(out, rd) })
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name (required)")
	cmd.Flags().BoolVarP(&list, "list", "l", true, "list format (the default; accepted for mqadmin compatibility)")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func printRoute(out io.Writer, rd *protocol.TopicRouteData) {
	const format = "%-45s %-32s %-50s %-10v %-11v %-5v\n"
	queues := map[string]protocol.QueueData{}
	for _, q := range rd.QueueDatas {
		queues[q.BrokerName] = q
	}
	bds := slices.Clone(rd.BrokerDatas)
	slices.SortFunc(bds, func(x, y protocol.BrokerData) int { return strings.Compare(x.BrokerName, y.BrokerName) })
	fmt.Fprintf(out, format, "#ClusterName", "#BrokerName", "#BrokerAddrs", "#ReadQueue", "#WriteQueue", "#Perm")
	var totalRead, totalWrite int32
	for _, bd := range bds {
		q := queues[bd.BrokerName]
		totalRead += q.ReadQueueNums
		totalWrite += q.WriteQueueNums
		fmt.Fprintf(out, format, bd.Cluster, bd.BrokerName, brokerAddrsString(bd.BrokerAddrs), q.ReadQueueNums, q.WriteQueueNums, q.Perm)
	}
	fmt.Fprintln(out, strings.Repeat("-", 158))
	fmt.Fprintf(out, format, "Total:", strconv.Itoa(len(queues)), "", totalRead, totalWrite, "")
}

// brokerAddrsString prints a broker's addresses as Java prints its map: {0=a, 1=b}.
func brokerAddrsString(m map[int64]string) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, strconv.FormatInt(id, 10)+"="+m[id])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func newTopicStatusCmd(f *adminFlags) *cobra.Command {
	var topic, cluster string
	cmd := &cobra.Command{
		Use:   "topicStatus",
		Short: "Examine topic Status info",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				var ts *mqadmin.TopicStats
				var err error
				if cluster == "" {
					ts, err = a.ExamineTopicStats(ctx, topic)
				} else {
					ts, err = clusterTopicStats(ctx, a, cluster, topic)
				}
				if err != nil {
					return err
				}
				return f.emit(out, ts, func() {
					fmt.Fprintf(out, "%-32s  %-4s  %-20s  %-20s    %s\n", "#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated")
					for _, q := range ts.Queues {
						last := ""
						if q.LastUpdateTimestamp > 0 {
							last = humanMillis(q.LastUpdateTimestamp)
						}
						fmt.Fprintf(out, "%-32s  %-4d  %-20d  %-20d    %s\n", frontStringAtLeast(q.BrokerName, 32), q.QueueID,
							q.MinOffset, q.MaxOffset, last)
					}
					fmt.Fprintf(out, "\nTopic Put TPS: %v\n", ts.TopicPutTps)
				})
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name (required)")
	cmd.Flags().StringVarP(&cluster, "cluster", "c", "", "ask this cluster's masters instead of the topic's route")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

func clusterTopicStats(ctx context.Context, a *mqadmin.Admin, cluster, topic string) (*mqadmin.TopicStats, error) {
	brokers, err := a.ClusterBrokers(ctx, cluster, false)
	if err != nil {
		return nil, err
	}
	out := &mqadmin.TopicStats{Queues: []mqadmin.TopicOffset{}}
	for _, b := range brokers {
		ts, err := a.TopicStats(ctx, b.Addr, topic)
		if err != nil {
			return nil, err
		}
		out.Queues = append(out.Queues, ts.Queues...)
		out.TopicPutTps += ts.TopicPutTps
	}
	slices.SortFunc(out.Queues, func(x, y mqadmin.TopicOffset) int { return x.MessageQueue.Compare(y.MessageQueue) })
	return out, nil
}

// topicUpdate is updateTopic's JSON result.
type topicUpdate struct {
	Brokers []string                          `json:"brokers"`
	Config  protocol.CreateTopicRequestHeader `json:"topicConfig"`
}

func newUpdateTopicCmd(f *adminFlags) *cobra.Command {
	var (
		brokerAddr, cluster, topic, attributes string
		read, write, perm                      int32
		order, unit, hasUnitSub                bool
	)
	cmd := &cobra.Command{
		Use:   "updateTopic",
		Short: "Update or create topic",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			var sysFlag int32
			if unit {
				sysFlag |= 1 // TopicSysFlag FLAG_UNIT
			}
			if hasUnitSub {
				sysFlag |= 2 // FLAG_UNIT_SUB
			}
			tc := protocol.CreateTopicRequestHeader{TopicName: strings.TrimSpace(topic), ReadQueueNums: read, WriteQueueNums: write,
				Perm: perm, TopicSysFlag: sysFlag, Order: order, Attributes: strings.TrimSpace(attributes)}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, brokerAddr, cluster, false)
				if err != nil {
					return err
				}
				res := topicUpdate{Brokers: []string{}, Config: tc}
				var lines []string
				for _, b := range brokers {
					if err := a.CreateTopic(ctx, b.Addr, tc); err != nil {
						return err
					}
					res.Brokers = append(res.Brokers, b.Addr)
					lines = append(lines, fmt.Sprintf("create topic to %s success.", b.Addr))
				}
				return f.emit(out, res, func() {
					for _, l := range lines {
						fmt.Fprintln(out, l)
					}
					fmt.Fprintf(out, "TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=SINGLE_TAG, topicSysFlag=%d, order=%t, attributes={%s}]\n",
						tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, perm2String(tc.Perm), tc.TopicSysFlag, tc.Order, tc.Attributes)
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&brokerAddr, "brokerAddr", "b", "", "create topic on this broker")
	fl.StringVarP(&cluster, "clusterName", "c", "", "create topic on every master of this cluster")
	fl.StringVarP(&topic, "topic", "t", "", "topic name (required)")
	fl.Int32VarP(&read, "readQueueNums", "r", 8, "read queue nums")
	fl.Int32VarP(&write, "writeQueueNums", "w", 8, "write queue nums")
	fl.Int32VarP(&perm, "perm", "p", protocol.DefaultPerm, "topic permission: 2 (W), 4 (R), 6 (RW)")
	boolArgVarP(fl, &order, "order", "o", false, "ordered topic")
	boolArgVarP(fl, &unit, "unit", "u", false, "unit topic")
	boolArgVarP(fl, &hasUnitSub, "hasUnitSub", "s", false, "has unit sub")
	fl.StringVarP(&attributes, "attributes", "a", "", "attributes: +a=b,+c=d,-e")
	_ = cmd.MarkFlagRequired("topic")
	return cmd
}

// topicDelete is deleteTopic's JSON result.
type topicDelete struct {
	Topic    string   `json:"topic"`
	Cluster  string   `json:"cluster"`
	Brokers  []string `json:"brokers"`
	Namesrvs []string `json:"namesrvs"`
}

func newDeleteTopicCmd(f *adminFlags) *cobra.Command {
	var topic, cluster string
	cmd := &cobra.Command{
		Use:   "deleteTopic",
		Short: "Delete topic from broker and NameServer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				res, err := deleteTopic(ctx, a, cluster, strings.TrimSpace(topic), false)
				if err != nil {
					return err
				}
				return f.emit(out, res, func() {
					fmt.Fprintf(out, "delete topic [%s] from cluster [%s] success.\n", res.Topic, res.Cluster)
					fmt.Fprintf(out, "delete topic [%s] from NameServer success.\n", res.Topic)
				})
			})
		},
	}
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic name (required)")
	cmd.Flags().StringVarP(&cluster, "clusterName", "c", "", "delete the topic from this cluster (required)")
	_ = cmd.MarkFlagRequired("topic")
	_ = cmd.MarkFlagRequired("clusterName")
	return cmd
}

// deleteTopic deletes topic on cluster's masters (and slaves if slaves),
// then on every name server.
func deleteTopic(ctx context.Context, a *mqadmin.Admin, cluster, topic string, slaves bool) (*topicDelete, error) {
	brokers, err := a.ClusterBrokers(ctx, cluster, slaves)
	if err != nil {
		return nil, err
	}
	res := &topicDelete{Topic: topic, Cluster: cluster, Brokers: []string{}, Namesrvs: a.NamesrvAddrs()}
	for _, b := range brokers {
		if err := a.DeleteTopicInBroker(ctx, b.Addr, topic); err != nil {
			return nil, err
		}
		res.Brokers = append(res.Brokers, b.Addr)
	}
	if err := a.DeleteTopicInNamesrvs(ctx, topic, cluster); err != nil {
		return nil, err
	}
	return res, nil
}

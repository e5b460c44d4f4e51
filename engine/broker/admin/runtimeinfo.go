package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// DiskStats is a snapshot of a store's commit log and disk.
type DiskStats struct {
	// Root is the store's root directory.
	Root string
	// MinPhyOffset and MaxPhyOffset bound the commit log; FlushedOffset is
	// how far it is durable.
	MinPhyOffset, MaxPhyOffset, FlushedOffset int64
	// DispatchBehindBytes is how far the consume queues lag the commit log.
	DispatchBehindBytes int64
	// IndexErrors counts failed index writes and IndexSkippedRecords the
	// records dispatched without index entries meanwhile (not found by
	// key; dispatch does not wait for the index).
	IndexErrors, IndexSkippedRecords uint64
	// EarliestTime is the oldest record's store time (ms); HasEarliest is
	// false when the log holds none.
	EarliestTime int64
	HasEarliest  bool
	// LockHeld is how long the current append has held the append lock.
	LockHeld time.Duration
	// Usage is the used fraction (0..1) of the root's partition by the
	// store's own measure; HasUsage is false when it cannot tell.
	Usage    float64
	HasUsage bool
}

// BrokerVersionDesc is the version this broker reports (brokerVersionDesc):
// the RocketMQ release whose protocol it follows.
const BrokerVersionDesc = "V5_3_3"

// getBrokerRuntimeInfo handles GET_BROKER_RUNTIME_INFO (28): a KVTable
// {"table":{key:value}} of the values mqadmin brokerStatus prints, every
// value a string; only keys this broker measures are given.
func (s *Service) getBrokerRuntimeInfo(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	body, err := json.Marshal(struct {
		Table map[string]string `json:"table"`
	}{s.runtimeInfo(time.Now())})
	if err != nil {
		return nil, err
	}
	return bodyResponse(body), nil
}

func (s *Service) runtimeInfo(now time.Time) map[string]string {
	st := s.Traffic.Snapshot()
	m := map[string]string{}
	u := func(k string, v uint64) { m[k] = strconv.FormatUint(v, 10) }
	i := func(k string, v int64) { m[k] = strconv.FormatInt(v, 10) }
	rates := func(r [3]float64) string {
		return javaDouble(r[0]) + " " + javaDouble(r[1]) + " " + javaDouble(r[2])
	}
	m["brokerVersionDesc"] = BrokerVersionDesc
	m["brokerActive"] = strconv.FormatBool(!s.cfg.Slave)
	i("bootTimestamp", st.BootTime.UnixMilli())
	m["runtime"] = formatRuntime(now.Sub(st.BootTime))
	u("msgPutTotalTodayNow", st.MsgsIn)
	u("msgGetTotalTodayNow", st.MsgsOut)
	u("msgPutTotalTodayMorning", st.PutTodayMorning)
	u("msgPutTotalYesterdayMorning", st.PutYesterdayMorning)
	u("msgGetTotalTodayMorning", st.GetTodayMorning)
	u("msgGetTotalYesterdayMorning", st.GetYesterdayMorning)
	m["putTps"] = rates(st.PutTPS)
	m["getTransferredTps"] = rates(st.GetTransferredTPS)
	m["getFoundTps"] = rates(st.GetFoundTPS)
	m["getMissTps"] = rates(st.GetMissTPS)
	m["getTotalTps"] = rates(st.GetTotalTPS)
	u("putMessageTimesTotal", max(st.MsgsIn, 1)) // Java reports at least 1
	u("putMessageSizeTotal", st.BytesIn)
	u("putMessageFailedTimes", st.PutFailures)
	m["putMessageAverageSize"] = javaDouble(float64(st.BytesIn) / float64(max(st.MsgsIn, 1)))
	i("startAcceptSendRequestTimeStamp", 0) // Java's default: sends accepted from boot
	if s.deps.SendQueueLen != nil {
		u("sendThreadPoolQueueSize", uint64(s.deps.SendQueueLen()))
	}
	i("sendThreadPoolQueueCapacity", int64(s.cfg.SendQueueCapacity))
	i("pullThreadPoolQueueCapacity", int64(s.cfg.PullQueueCapacity))
	i("queryThreadPoolQueueCapacity", int64(s.cfg.QueryQueueCapacity))
	if s.deps.Disk == nil {
		return m
	}
	d, ok := s.deps.Disk()
	if !ok {
		return m
	}
	i("commitLogMinOffset", d.MinPhyOffset)
	i("commitLogMaxOffset", d.MaxPhyOffset)
	i("dispatchBehindBytes", d.DispatchBehindBytes)
	if d.IndexErrors > 0 { // brokerlab's own keys, shown once the index failed
		u("indexWriteErrors", d.IndexErrors)
		u("indexSkippedRecords", d.IndexSkippedRecords)
	}
	if d.HasEarliest {
		i("earliestMessageTimeStamp", d.EarliestTime)
	}
	if ratio, total, free, err := diskUsage(d.Root); err == nil {
		m["commitLogDiskRatio"] = javaDouble(ratio)
		m["commitLogDiskRatio_"+d.Root] = javaDouble(ratio)
		m["commitLogDirCapacity"] = fmt.Sprintf("Total : %s, Free : %s.", humanBytes(total), humanBytes(free))
	}
	if es := s.engine(); es != nil {
		addStoreDiskRatios(m, es) // diskratio.go
	}
	i("pageCacheLockTimeMills", d.LockHeld.Milliseconds())
	if s.deps.Timer != nil {
		if ts := s.deps.Timer(); ts.Enabled {
			i("timerOffsetBehind", ts.OffsetBehind)
			i("timerPendingMessages", ts.Pending)
			i("timerDeliveredMessages", ts.Delivered)
		}
	}
	remain := d.MaxPhyOffset - d.FlushedOffset
	m["remainHowManyDataToFlush"] = humanBytes(uint64(max(remain, 0)))
	return m
}

// javaDouble formats like Java's Double.toString for ordinary magnitudes:
// at least one fractional digit ("0.0", "12.5").
func javaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEN") {
		s += ".0"
	}
	return s
}

// formatRuntime is StoreStatsService's runtime text.
func formatRuntime(d time.Duration) string {
	ms := d.Milliseconds()
	const sec, minute, hour, day = 1000, 60 * 1000, 3600 * 1000, 24 * 3600 * 1000
	return fmt.Sprintf("[ %d days, %d hours, %d minutes, %d seconds ]",
		ms/day, ms%day/hour, ms%hour/minute, ms%minute/sec)
}

// humanBytes is MixAll.humanReadableByteCount(bytes, false): binary units.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	exp, div := 0, uint64(unit)
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

package admin

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Traffic is the broker's traffic counters (Java's StoreStatsService
// and BrokerStatsManager, reduced to what this broker measures): messages
// and bytes stored by sends and served by pulls, in total, per topic and
// per (group, topic), sampled once a second so rates over 10 s, 60 s and
// 600 s can be given. Counting is lock-free on the hot paths except the
// first use of a topic or group key (a sync.Map store). Safe for
// concurrent use; Service.SampleLoop samples it once a second.
type Traffic struct {
	boot time.Time

	putMsgs, putBytes, putFailed   atomic.Uint64
	getMsgs, getBytes              atomic.Uint64
	getFound, getMiss, getRequests atomic.Uint64

	topics sync.Map // topic → *TopicCounters
	groups sync.Map // group + "@" + topic → *GroupCounters

	mu struct {
		sync.Mutex
		ring  [rateWindow + 1]rateSample // one sample a second, newest at ring[(n-1)%len]
		n     int                        // samples taken
		group map[string][]groupSample   // group@topic → last samples, oldest first
		topic map[string][]groupSample   // topic → last samples of MsgsIn
		// daily snapshots of the put/get totals (BrokerStats.record at midnight)
		putTodayMorning, putYesterdayMorning uint64
		getTodayMorning, getYesterdayMorning uint64
		day                                  int
	}
}

// rateWindow is the longest rate window in seconds (Java's 600 s).
const rateWindow = 600

type rateSample struct {
	at                                  time.Time
	puts, gets, found, miss, getRequest uint64
}

type groupSample struct {
	at   time.Time
	msgs uint64
}

// TopicCounters count one topic's traffic since the broker started.
type TopicCounters struct {
	MsgsIn, BytesIn, MsgsOut, BytesOut atomic.Uint64
}

// GroupCounters count what one consumer group pulled from one topic.
type GroupCounters struct {
	Msgs, Bytes atomic.Uint64
}

// RuntimeStats is a snapshot of the broker's traffic counters (cumulative
// since Start unless noted). Rates are messages per second over the last
// 10 s, 60 s and 600 s (shorter while the broker is younger).
type RuntimeStats struct {
	BootTime time.Time
	// MsgsIn/BytesIn: messages stored by SEND_MESSAGE and
	// SEND_BATCH_MESSAGE (body bytes); PutFailures the sends the store
	// refused. MsgsOut/BytesOut: messages served by pulls (record bytes).
	MsgsIn, BytesIn, PutFailures uint64
	MsgsOut, BytesOut            uint64
	// Pull requests that found messages, found none, and in total.
	GetFound, GetMiss, GetRequests uint64
	// PutTPS, GetTransferredTPS, GetFoundTPS, GetMissTPS, GetTotalTPS are
	// rates over 10 s, 60 s and 600 s.
	PutTPS, GetTransferredTPS, GetFoundTPS, GetMissTPS, GetTotalTPS [3]float64
	// Totals at the last two local midnights (0 until the broker ran
	// through one), as Java's msgPutTotalTodayMorning/YesterdayMorning.
	PutTodayMorning, PutYesterdayMorning, GetTodayMorning, GetYesterdayMorning uint64
	// Topics and Groups (keyed "group@topic") hold per-key counts.
	Topics map[string]TopicTraffic
	Groups map[string]GroupTraffic
}

// TopicTraffic is one topic's counts, with its put rate over the last
// minute (TopicStatsTable.topicPutTps).
type TopicTraffic struct {
	MsgsIn, BytesIn, MsgsOut, BytesOut uint64
	PutTPS                             float64
}

// GroupTraffic is one consumer group's pulls from one topic, with its rate
// over the last minute (ConsumeStats.consumeTps).
type GroupTraffic struct {
	Group, Topic string
	Msgs, Bytes  uint64
	TPS          float64
}

// NewTraffic starts the counters at zero, booted now.
func NewTraffic() *Traffic {
	r := &Traffic{boot: time.Now()}
	r.mu.group = map[string][]groupSample{}
	r.mu.topic = map[string][]groupSample{}
	r.mu.day = r.boot.YearDay()
	r.Sample(r.boot)
	return r
}

func (r *Traffic) topic(name string) *TopicCounters {
	if c, ok := r.topics.Load(name); ok {
		return c.(*TopicCounters)
	}
	c, _ := r.topics.LoadOrStore(name, new(TopicCounters))
	return c.(*TopicCounters)
}

// CountPut records a send of n messages with bodyBytes body bytes to topic.
func (r *Traffic) CountPut(topic string, n, bodyBytes int, stored bool) {
	if !stored {
		r.putFailed.Add(1)
		return
	}
	r.putMsgs.Add(uint64(n))
	r.putBytes.Add(uint64(bodyBytes))
	c := r.topic(topic)
	c.MsgsIn.Add(uint64(n))
	c.BytesIn.Add(uint64(bodyBytes))
}

// CountGet records a pull of group from topic that served buf (whole
// records, empty when nothing was found).
func (r *Traffic) CountGet(group, topic string, buf []byte) {
	r.getRequests.Add(1)
	n := countRecords(buf)
	if n == 0 {
		r.getMiss.Add(1)
		return
	}
	r.getFound.Add(1)
	r.getMsgs.Add(uint64(n))
	r.getBytes.Add(uint64(len(buf)))
	c := r.topic(topic)
	c.MsgsOut.Add(uint64(n))
	c.BytesOut.Add(uint64(len(buf)))
	key := group + "@" + topic
	g, ok := r.groups.Load(key)
	if !ok {
		g, _ = r.groups.LoadOrStore(key, new(GroupCounters))
	}
	gc := g.(*GroupCounters)
	gc.Msgs.Add(uint64(n))
	gc.Bytes.Add(uint64(len(buf)))
}

// countRecords counts the commit-log records in a pull body (each starts
// with its int32 total size).
func countRecords(buf []byte) int {
	n := 0
	for len(buf) >= 4 {
		size := int(binary.BigEndian.Uint32(buf))
		if size <= 0 || size > len(buf) {
			return n + 1 // malformed tail: count what is there
		}
		buf = buf[size:]
		n++
	}
	return n
}

// Sample takes the once-a-second sample the rates are computed from, the
// group samples every 10 s, and the midnight snapshots.
func (r *Traffic) Sample(now time.Time) {
	s := rateSample{at: now, puts: r.putMsgs.Load(), gets: r.getMsgs.Load(), found: r.getFound.Load(),
		miss: r.getMiss.Load(), getRequest: r.getRequests.Load()}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.ring[r.mu.n%len(r.mu.ring)] = s
	r.mu.n++
	if d := now.YearDay(); d != r.mu.day {
		r.mu.day = d
		r.mu.putYesterdayMorning, r.mu.putTodayMorning = r.mu.putTodayMorning, s.puts
		r.mu.getYesterdayMorning, r.mu.getTodayMorning = r.mu.getTodayMorning, s.gets
	}
	if r.mu.n%10 != 1 {
		return
	}
	r.groups.Range(func(k, v any) bool {
		key := k.(string)
		r.mu.group[key] = appendSample(r.mu.group[key], groupSample{at: now, msgs: v.(*GroupCounters).Msgs.Load()})
		return true
	})
	r.topics.Range(func(k, v any) bool {
		key := k.(string)
		r.mu.topic[key] = appendSample(r.mu.topic[key], groupSample{at: now, msgs: v.(*TopicCounters).MsgsIn.Load()})
		return true
	})
}

// appendSample keeps 60 s of 10 s samples, plus the newest.
func appendSample(ss []groupSample, s groupSample) []groupSample {
	ss = append(ss, s)
	if len(ss) > 7 {
		ss = append(ss[:0], ss[len(ss)-7:]...)
	}
	return ss
}

// sampleRate is the rate between the first and last samples.
func sampleRate(ss []groupSample) float64 {
	if len(ss) < 2 {
		return 0
	}
	first, last := ss[0], ss[len(ss)-1]
	if el := last.at.Sub(first.at).Seconds(); el > 0 {
		return float64(last.msgs-first.msgs) / el
	}
	return 0
}

// rate is (newest − the sample secs ago) / elapsed for the field f.
// REQUIRES: r.mu held.
func (r *Traffic) rateLocked(secs int, f func(rateSample) uint64) float64 {
	if r.mu.n < 2 {
		return 0
	}
	newest := r.mu.ring[(r.mu.n-1)%len(r.mu.ring)]
	back := min(secs, r.mu.n-1, len(r.mu.ring)-1)
	old := r.mu.ring[(r.mu.n-1-back)%len(r.mu.ring)]
	el := newest.at.Sub(old.at).Seconds()
	if el <= 0 {
		return 0
	}
	return float64(f(newest)-f(old)) / el
}

// Snapshot returns the counters and the rates.
func (r *Traffic) Snapshot() RuntimeStats {
	st := RuntimeStats{
		BootTime: r.boot, MsgsIn: r.putMsgs.Load(), BytesIn: r.putBytes.Load(), PutFailures: r.putFailed.Load(),
		MsgsOut: r.getMsgs.Load(), BytesOut: r.getBytes.Load(), GetFound: r.getFound.Load(), GetMiss: r.getMiss.Load(),
		GetRequests: r.getRequests.Load(), Topics: map[string]TopicTraffic{}, Groups: map[string]GroupTraffic{},
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.topics.Range(func(k, v any) bool {
		c := v.(*TopicCounters)
		st.Topics[k.(string)] = TopicTraffic{MsgsIn: c.MsgsIn.Load(), BytesIn: c.BytesIn.Load(), MsgsOut: c.MsgsOut.Load(),
			BytesOut: c.BytesOut.Load(), PutTPS: sampleRate(r.mu.topic[k.(string)])}
		return true
	})
	for i, secs := range [3]int{10, 60, rateWindow} {
		st.PutTPS[i] = r.rateLocked(secs, func(s rateSample) uint64 { return s.puts })
		st.GetTransferredTPS[i] = r.rateLocked(secs, func(s rateSample) uint64 { return s.gets })
		st.GetFoundTPS[i] = r.rateLocked(secs, func(s rateSample) uint64 { return s.found })
		st.GetMissTPS[i] = r.rateLocked(secs, func(s rateSample) uint64 { return s.miss })
		st.GetTotalTPS[i] = r.rateLocked(secs, func(s rateSample) uint64 { return s.getRequest })
	}
	st.PutTodayMorning, st.PutYesterdayMorning = r.mu.putTodayMorning, r.mu.putYesterdayMorning
	st.GetTodayMorning, st.GetYesterdayMorning = r.mu.getTodayMorning, r.mu.getYesterdayMorning
	r.groups.Range(func(k, v any) bool {
		key := k.(string)
		i := strings.LastIndexByte(key, '@') // topics never hold '@'
		group, topic := key[:i], key[i+1:]
		c := v.(*GroupCounters)
		st.Groups[key] = GroupTraffic{Group: group, Topic: topic, Msgs: c.Msgs.Load(), Bytes: c.Bytes.Load(),
			TPS: sampleRate(r.mu.group[key])}
		return true
	})
	return st
}

// Boot is when the counters started (the broker's boot time).
func (r *Traffic) Boot() time.Time { return r.boot }

// SampleLoop samples the counters once a second until Deps.Stop closes.
func (s *Service) SampleLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.deps.Stop:
			return
		case now := <-t.C:
			s.Traffic.Sample(now)
		}
	}
}

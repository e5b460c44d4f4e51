package ombresult

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brokerlab/brokerlab/workloads/hist"
)

// Period is OMB's reporting period (WorkloadGenerator prints and collects
// every 10 s; create_charts.py puts point i at 10·i seconds).
const Period = 10 * time.Second

// QuantileTicks is the ticks per half distance of the quantile maps, as
// OMB's percentiles(100).
const QuantileTicks = 100

// Meta is the header of a result: OMB's workload fields as the run used
// them.
type Meta struct {
	Workload          string
	Driver            string
	MessageSize       int64
	Topics            int
	Partitions        int // per topic, as OMB's "partitions"
	ProducersPerTopic int
	ConsumersPerTopic int
	// Subscriptions is how many consumers read every message (OMB's
	// subscriptionsPerTopic): the backlog is Subscriptions × published −
	// received.
	Subscriptions int
}

// Metric tags of the histograms Build reads (the gen package's names).
const (
	TagPublish = "service"
	TagDelay   = "send_delay"
	TagE2E     = "e2e"
)

// ErrorsAt is a count of failed sends in the reporting interval that ended
// At seconds after the measuring start.
type ErrorsAt struct {
	At    float64
	Count int64
}

// Input is what one measured configuration recorded.
type Input struct {
	// Intervals are the measured intervals of the cell's interval log (all
	// metrics; tags TagPublish, TagDelay, TagE2E are read).
	Intervals []hist.LoggedInterval
	// Errors are the failed sends per reporting interval (nil: none failed).
	Errors []ErrorsAt
	// Period is the reporting period (0: Period).
	Period time.Duration
	// Backlog0 is the backlog at the measuring start, in messages summed
	// over the subscriptions (a backlog built before the measured drain).
	Backlog0 int64
}

// bin is one reporting period's merged histograms.
type bin struct {
	start, end      time.Time
	pub, delay, e2e *hdr.Histogram
	errors          int64
	seen            bool
}

// Build turns a cell's recording into an OMB result: per-period series
// over Period-long bins from the first measured interval's start, and
// whole-run aggregates over every measured interval.
func Build(m Meta, in Input) TestResult {
	period := in.Period
	if period <= 0 {
		period = Period
	}
	r := TestResult{Workload: m.Workload, Driver: m.Driver, MessageSize: m.MessageSize, Topics: m.Topics,
		Partitions: m.Partitions, ProducersPerTopic: m.ProducersPerTopic, ConsumersPerTopic: m.ConsumersPerTopic}
	r.initSeries()
	newHist := func() *hdr.Histogram { return hdr.New(1, int64(time.Hour), 3) }
	if len(in.Intervals) > 0 {
		h0 := in.Intervals[0].Hist
		newHist = func() *hdr.Histogram {
			return hdr.New(h0.LowestTrackableValue(), h0.HighestTrackableValue(), int(h0.SignificantFigures()))
		}
	}
	var t0 time.Time
	for _, iv := range in.Intervals {
		if t0.IsZero() || iv.Start.Before(t0) {
			t0 = iv.Start
		}
	}
	var bins []*bin
	binAt := func(k int) *bin {
		for len(bins) <= k {
			s := t0.Add(time.Duration(len(bins)) * period)
			bins = append(bins, &bin{start: s, end: s, pub: newHist(), delay: newHist(), e2e: newHist()})
		}
		return bins[k]
	}
	aggPub, aggDelay, aggE2E := newHist(), newHist(), newHist()
	for _, iv := range in.Intervals {
		k := max(int(iv.Start.Sub(t0)/period), 0)
		b := binAt(k)
		b.seen = true
		if iv.End.After(b.end) {
			b.end = iv.End
		}
		switch iv.Tag {
		case TagPublish:
			b.pub.Merge(iv.Hist)
			aggPub.Merge(iv.Hist)
		case TagDelay:
			b.delay.Merge(iv.Hist)
			aggDelay.Merge(iv.Hist)
		case TagE2E:
			b.e2e.Merge(iv.Hist)
			aggE2E.Merge(iv.Hist)
		}
	}
	for _, e := range in.Errors {
		// An interval ending exactly on a period boundary belongs to the
		// period before it.
		end := time.Duration(e.At * float64(time.Second))
		k := max(int((end-time.Millisecond)/period), 0)
		if k < len(bins) {
			bins[k].errors += e.Count
		}
	}
	subs := int64(max(m.Subscriptions, 0))
	var sent, received int64
	for _, b := range bins {
		if !b.seen {
			continue
		}
		secs := b.end.Sub(b.start).Seconds()
		if secs <= 0 {
			continue
		}
		sent += b.pub.TotalCount()
		received += b.e2e.TotalCount()
		r.PublishRate = append(r.PublishRate, float64(b.pub.TotalCount())/secs)
		r.PublishErrorRate = append(r.PublishErrorRate, float64(b.errors)/secs)
		r.ConsumeRate = append(r.ConsumeRate, float64(b.e2e.TotalCount())/secs)
		r.Backlog = append(r.Backlog, max(0, in.Backlog0+subs*sent-received))
		r.addPublish(stats(b.pub, 1e6))
		r.addDelay(stats(b.delay, 1e3))
		r.addE2E(stats(b.e2e, 1e6))
	}
	p := stats(aggPub, 1e6)
	r.AggregatedPublishLatencyAvg, r.AggregatedPublishLatency50pct, r.AggregatedPublishLatency75pct = p.avg, p.q[0], p.q[1]
	r.AggregatedPublishLatency95pct, r.AggregatedPublishLatency99pct, r.AggregatedPublishLatency999pct = p.q[2], p.q[3], p.q[4]
	r.AggregatedPublishLatency9999pct, r.AggregatedPublishLatencyMax = p.q[5], p.max
	d := stats(aggDelay, 1e3)
	r.AggregatedPublishDelayLatencyAvg = d.avg
	r.AggregatedPublishDelayLatency50pct, r.AggregatedPublishDelayLatency75pct = micros(d.q[0]), micros(d.q[1])
	r.AggregatedPublishDelayLatency95pct, r.AggregatedPublishDelayLatency99pct = micros(d.q[2]), micros(d.q[3])
	r.AggregatedPublishDelayLatency999pct, r.AggregatedPublishDelayLatency9999pct = micros(d.q[4]), micros(d.q[5])
	r.AggregatedPublishDelayLatencyMax = micros(d.max)
	e := stats(aggE2E, 1e6)
	r.AggregatedEndToEndLatencyAvg, r.AggregatedEndToEndLatency50pct, r.AggregatedEndToEndLatency75pct = e.avg, e.q[0], e.q[1]
	r.AggregatedEndToEndLatency95pct, r.AggregatedEndToEndLatency99pct, r.AggregatedEndToEndLatency999pct = e.q[2], e.q[3], e.q[4]
	r.AggregatedEndToEndLatency9999pct, r.AggregatedEndToEndLatencyMax = e.q[5], e.max
	r.AggregatedPublishLatencyQuantiles = quantileMap(aggPub, 1e6, false)
	r.AggregatedPublishDelayLatencyQuantiles = quantileMap(aggDelay, 1e3, true)
	r.AggregatedEndToEndLatencyQuantiles = quantileMap(aggE2E, 1e6, false)
	return r
}

// statPercentiles are the percentiles of OMB's series, in field order
// (50, 75, 95, 99, 99.9, 99.99).
var statPercentiles = []float64{50, 75, 95, 99, 99.9, 99.99}

// summary is one histogram's OMB statistics in the unit of the divisor.
type summary struct {
	avg, max float64
	q        [6]float64
}

// stats summarises h (values in ns) divided by div (1e6: ms, 1e3: µs); an
// empty histogram gives zeros, as HdrHistogram's do in OMB.
func stats(h *hdr.Histogram, div float64) summary {
	var s summary
	if h.TotalCount() == 0 {
		return s
	}
	s.avg, s.max = h.Mean()/div, float64(h.Max())/div
	for i, v := range h.ValueAtPercentilesSlice(statPercentiles) {
		s.q[i] = float64(v) / div
	}
	return s
}

func micros(v float64) int64 { return int64(math.Round(v)) }

func (r *TestResult) addPublish(s summary) {
	r.PublishLatencyAvg = append(r.PublishLatencyAvg, s.avg)
	r.PublishLatency50pct = append(r.PublishLatency50pct, s.q[0])
	r.PublishLatency75pct = append(r.PublishLatency75pct, s.q[1])
	r.PublishLatency95pct = append(r.PublishLatency95pct, s.q[2])
	r.PublishLatency99pct = append(r.PublishLatency99pct, s.q[3])
	r.PublishLatency999pct = append(r.PublishLatency999pct, s.q[4])
	r.PublishLatency9999pct = append(r.PublishLatency9999pct, s.q[5])
	r.PublishLatencyMax = append(r.PublishLatencyMax, s.max)
}

func (r *TestResult) addDelay(s summary) {
	r.PublishDelayLatencyAvg = append(r.PublishDelayLatencyAvg, s.avg)
	r.PublishDelayLatency50pct = append(r.PublishDelayLatency50pct, micros(s.q[0]))
	r.PublishDelayLatency75pct = append(r.PublishDelayLatency75pct, micros(s.q[1]))
	r.PublishDelayLatency95pct = append(r.PublishDelayLatency95pct, micros(s.q[2]))
	r.PublishDelayLatency99pct = append(r.PublishDelayLatency99pct, micros(s.q[3]))
	r.PublishDelayLatency999pct = append(r.PublishDelayLatency999pct, micros(s.q[4]))
	r.PublishDelayLatency9999pct = append(r.PublishDelayLatency9999pct, micros(s.q[5]))
	r.PublishDelayLatencyMax = append(r.PublishDelayLatencyMax, micros(s.max))
}

func (r *TestResult) addE2E(s summary) {
	r.EndToEndLatencyAvg = append(r.EndToEndLatencyAvg, s.avg)
	r.EndToEndLatency50pct = append(r.EndToEndLatency50pct, s.q[0])
	r.EndToEndLatency75pct = append(r.EndToEndLatency75pct, s.q[1])
	r.EndToEndLatency95pct = append(r.EndToEndLatency95pct, s.q[2])
	r.EndToEndLatency99pct = append(r.EndToEndLatency99pct, s.q[3])
	r.EndToEndLatency999pct = append(r.EndToEndLatency999pct, s.q[4])
	r.EndToEndLatency9999pct = append(r.EndToEndLatency9999pct, s.q[5])
	r.EndToEndLatencyMax = append(r.EndToEndLatencyMax, s.max)
}

// initSeries makes every array non-nil, so JSON has [] rather than null
// (OMB's lists start empty).
func (r *TestResult) initSeries() {
	for _, p := range []*[]float64{&r.PublishRate, &r.PublishErrorRate, &r.ConsumeRate,
		&r.PublishLatencyAvg, &r.PublishLatency50pct, &r.PublishLatency75pct, &r.PublishLatency95pct,
		&r.PublishLatency99pct, &r.PublishLatency999pct, &r.PublishLatency9999pct, &r.PublishLatencyMax,
		&r.PublishDelayLatencyAvg,
		&r.EndToEndLatencyAvg, &r.EndToEndLatency50pct, &r.EndToEndLatency75pct, &r.EndToEndLatency95pct,
		&r.EndToEndLatency99pct, &r.EndToEndLatency999pct, &r.EndToEndLatency9999pct, &r.EndToEndLatencyMax} {
		*p = []float64{}
	}
	for _, p := range []*[]int64{&r.Backlog, &r.PublishDelayLatency50pct, &r.PublishDelayLatency75pct,
		&r.PublishDelayLatency95pct, &r.PublishDelayLatency99pct, &r.PublishDelayLatency999pct,
		&r.PublishDelayLatency9999pct, &r.PublishDelayLatencyMax} {
		*p = []int64{}
	}
	r.AggregatedPublishLatencyQuantiles = Quantiles{}
	r.AggregatedPublishDelayLatencyQuantiles = Quantiles{}
	r.AggregatedEndToEndLatencyQuantiles = Quantiles{}
}

// quantileMap is h's percentile iteration with QuantileTicks ticks per
// half distance (OMB: percentiles(100)), values (ns) divided by div and,
// with whole, rounded to integers (OMB's µs delay map holds longs). A
// percentile met twice keeps its last value, as a Java map put does.
func quantileMap(h *hdr.Histogram, div float64, whole bool) Quantiles {
	q := Quantiles{}
	if h.TotalCount() == 0 {
		return q
	}
	for _, b := range h.CumulativeDistributionWithTicks(QuantileTicks) {
		v := float64(b.ValueAt) / div
		if whole {
			v = math.Round(v)
		}
		if n := len(q); n > 0 && q[n-1].Percentile == b.Quantile {
			q[n-1].Value = v
			continue
		}
		q = append(q, Quantile{b.Quantile, v})
	}
	return q
}

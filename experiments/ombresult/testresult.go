// Package ombresult writes a run's measurements in the OpenMessaging
// Benchmark (OMB) result format, so OMB's chart script (bin/create_charts.py)
// and published OMB results compare directly with brokerlab's.
//
// On-disk format: one JSON object per measured configuration, with exactly
// the field names of OMB's TestResult (benchmark-framework TestResult.java)
// and its units: publish and end-to-end latencies in milliseconds (float),
// publish delay in microseconds (integer), rates in messages per second,
// backlog in messages. The per-period arrays hold one value per Period (10 s,
// OMB's reporting period; a final shorter period is kept, its rates divided
// by its own length). Quantile maps are keyed by the percentile written as
// Java writes a Double ("50.0", "99.99"), as OMB's JSON has them.
//
// How brokerlab's measurements map: publish latency is the service time
// (acknowledgement − actual send), as OMB's; publish delay is actual −
// intended send of an open loop (a closed loop has no schedule: its intended
// time is its actual time, so the delay is 0); end-to-end latency is receipt
// − send as the consumers recorded it. An empty histogram gives 0 for every
// statistic, as OMB's (HdrHistogram's) empty histograms do.
//
// Concurrency: the functions are pure or write one file; a TestResult is a
// plain value owned by its caller.
package ombresult

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// ErrFormat marks a file that is not an OMB result.
var ErrFormat = errors.New("ombresult: not an OMB result")

// TestResult is OMB's TestResult, field for field (names and units).
type TestResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg     []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct   []float64 `json:"publishLatency50pct"`
	PublishLatency75pct   []float64 `json:"publishLatency75pct"`
	PublishLatency95pct   []float64 `json:"publishLatency95pct"`
	PublishLatency99pct   []float64 `json:"publishLatency99pct"`
	PublishLatency999pct  []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct []float64 `json:"publishLatency9999pct"`
	PublishLatencyMax     []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg     []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct   []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct   []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct   []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct   []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct  []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatencyMax     []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg     float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct   float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct   float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct   float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct   float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct  float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatencyMax     float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg     float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct   int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct   int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct   int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct   int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct  int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatencyMax     int64   `json:"aggregatedPublishDelayLatencyMax"`

	AggregatedPublishLatencyQuantiles      Quantiles `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles Quantiles `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg     []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct   []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct   []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct   []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct   []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct  []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatencyMax     []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles Quantiles `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg     float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct   float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct   float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct   float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct   float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct  float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatencyMax     float64 `json:"aggregatedEndToEndLatencyMax"`
}

// Quantile is one entry of a quantile map: the value at Percentile (in
// [0,100]).
type Quantile struct {
	Percentile float64
	Value      float64
}

// Quantiles is an OMB quantile map (percentile → value), kept in ascending
// percentile order. In JSON it is an object whose keys are the percentiles
// in Java's Double.toString form ("50.0", "99.99").
type Quantiles []Quantile

// JavaDouble formats v as Java's Double.toString does for the values a
// percentile takes (shortest round-trip digits, at least one decimal).
func JavaDouble(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// MarshalJSON writes the map in ascending percentile order.
func (q Quantiles) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range q {
		if i > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(e.Value)
		if err != nil {
			return nil, err
		}
		b.WriteString(strconv.Quote(JavaDouble(e.Percentile)))
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON reads an OMB quantile map (any key order).
func (q *Quantiles) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	out := make(Quantiles, 0, len(m))
	for k, v := range m {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return fmt.Errorf("%w: quantile key %q", ErrFormat, k)
		}
		out = append(out, Quantile{p, v})
	}
	sortQuantiles(out)
	*q = out
	return nil
}

func sortQuantiles(q Quantiles) {
	for i := 1; i < len(q); i++ { // insertion sort: maps are a few hundred entries
		for j := i; j > 0 && q[j].Percentile < q[j-1].Percentile; j-- {
			q[j], q[j-1] = q[j-1], q[j]
		}
	}
}

// Write writes r to path atomically, indented like OMB's writer does.
func Write(path string, r TestResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("ombresult: %w", err)
	}
	return result.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// Read reads an OMB result file (OMB's own or one Write wrote).
func Read(path string) (TestResult, error) {
	var r TestResult
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("ombresult: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	if r.Workload == "" && r.Driver == "" {
		return r, fmt.Errorf("%w: %s: no workload or driver", ErrFormat, path)
	}
	return r, nil
}

package promexport

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/brokerlab/brokerlab/engine/remoting"
)

// A label value that is not UTF-8 (a client's group name) is repaired, not
// a scrape failure or a panic.
func TestInvalidUTF8LabelsAreRepaired(t *testing.T) {
	desc := prometheus.NewDesc("x_total", "x", []string{"consumer_group"}, nil)
	var m dto.Metric
	if err := metric(desc, prometheus.CounterValue, 3, "bad\xffgroup").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.Label[0].GetValue(); got != "bad\uFFFDgroup" || m.Counter.GetValue() != 3 {
		t.Fatalf("label %q value %v", got, m.Counter.GetValue())
	}
	var h remoting.LatencyHist
	h.Buckets[0], h.Sum = 2, 20*time.Microsecond
	hd := prometheus.NewDesc("y", "y", []string{"topic"}, nil)
	if err := constHistogram(hd, h, time.Millisecond, "t\xfe").Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.Histogram.GetSampleCount() != 2 || m.Histogram.GetSampleSum() != 0.02 {
		t.Fatalf("histogram %+v", m.Histogram)
	}
	// The first bucket is RocketMQ's unit: 0.01 ms.
	if b := m.Histogram.Bucket[0]; b.GetUpperBound() != 0.01 || b.GetCumulativeCount() != 2 {
		t.Fatalf("first bucket %+v", b)
	}
}

package promexport

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// constHistogram turns an engine latency histogram into a Prometheus one,
// in unit (time.Millisecond for RocketMQ's rpc latency, time.Second for
// brokerlab's own). The count is the buckets' total, so the series stays
// consistent while observations land during the snapshot.
func constHistogram(desc *prometheus.Desc, h remoting.LatencyHist, unit time.Duration, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(remoting.LatencyBounds))
	var cum uint64
	for i, bound := range remoting.LatencyBounds {
		cum += h.Buckets[i]
		buckets[float64(bound)/float64(unit)] = cum
	}
	cum += h.Buckets[len(remoting.LatencyBounds)]
	return histogram(desc, cum, float64(h.Sum)/float64(unit), buckets, labels...)
}

// metric is a constant counter or gauge. Label values that are not valid
// UTF-8 (group names come from clients) are repaired with U+FFFD, so no
// client can make a scrape fail; any other error yields an invalid metric,
// which the handler reports without failing the rest of the scrape.
func metric(desc *prometheus.Desc, typ prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(desc, typ, v, validLabels(labels)...)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}

// histogram is a constant histogram, with metric's label repair.
func histogram(desc *prometheus.Desc, count uint64, sum float64, buckets map[float64]uint64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstHistogram(desc, count, sum, buckets, validLabels(labels)...)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	return m
}

func validLabels(labels []string) []string {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	return labels
}

// codeLabel is RocketMQ's label value for a request or response code: the
// Java constant's name in lower case ("send_message", "success"), or the
// number when the code has no name.
func codeLabel(name string) string { return strings.ToLower(name) }

func requestCodeLabel(code int32) string  { return codeLabel(protocol.RequestCodeName(code)) }
func responseCodeLabel(code int32) string { return codeLabel(protocol.ResponseCodeName(code)) }

// rpcLatency is rocketmq_rpc_latency for node labels nl.
func rpcLatencyDesc(nl prometheus.Labels) *prometheus.Desc {
	return prometheus.NewDesc("rocketmq_rpc_latency",
		"Latency of remoting requests in milliseconds (RocketMQ's unit), from the first byte of the request to the answer's write, per request and response code.",
		[]string{"protocol_type", "request_code", "response_code"}, nl)
}

// collectRPCLatency emits one histogram per (request, response) code pair.
func collectRPCLatency(ch chan<- prometheus.Metric, desc *prometheus.Desc, rs *remoting.RequestStats) {
	for _, l := range rs.Latencies() {
		ch <- constHistogram(desc, l.LatencyHist, time.Millisecond, "remoting", requestCodeLabel(l.Code), responseCodeLabel(l.RespCode))
	}
}

// badInput are the remoting server's counters of bad requests.
type badInputDescs struct{ requests, closes *prometheus.Desc }

func newBadInputDescs(nl prometheus.Labels) badInputDescs {
	return badInputDescs{
		requests: prometheus.NewDesc("brokerlab_bad_requests_total",
			"Well-framed requests answered with an error for what they carried (bad header field, undecodable body, unknown code).", nil, nl),
		closes: prometheus.NewDesc("brokerlab_bad_input_closes_total",
			"Connections closed on a framing error or a cut-off frame.", nil, nl),
	}
}

func (d badInputDescs) describe(ch chan<- *prometheus.Desc) { ch <- d.requests; ch <- d.closes }

func (d badInputDescs) collect(ch chan<- prometheus.Metric, st remoting.ServerStats) {
	ch <- metric(d.requests, prometheus.CounterValue, float64(st.BadRequests))
	ch <- metric(d.closes, prometheus.CounterValue, float64(st.BadInputCloses))
}

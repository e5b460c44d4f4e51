package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

var metricsRE = regexp.MustCompile(`msg="metrics serving" addr=([0-9.]+:[0-9]+)`)

// metricsAddr waits for the process's "metrics serving" log line.
func (p *proc) metricsAddr(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(procLimit)
	for time.Now().Before(deadline) {
		if m := metricsRE.FindStringSubmatch(p.log()); m != nil {
			return m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no metrics address logged:\n%s", p.log())
	return ""
}

// scrapeMetrics fetches and parses http://addr/metrics.
func scrapeMetrics(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// sample returns the series of family name with all the labels in want.
func sample(fs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fs[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.Metric {
		for k, v := range want {
			ok := false
			for _, lp := range m.Label {
				ok = ok || lp.GetName() == k && lp.GetValue() == v
			}
			if !ok {
				continue next
			}
		}
		return m
	}
	return nil
}

// TestMetricsListenProcesses runs a name server and a broker with
// --metrics-listen 127.0.0.1:0 and checks their scraped metrics against
// the traffic sent: messages in, the send latency histogram's count, the
// lag of a group that consumed part, the name server's registrations and
// registered broker.
func TestMetricsListenProcesses(t *testing.T) {
	t.Parallel() // a process test: its own ports and directories
	bin := cliBinary(t)
	ns := start(t, bin, "namesrv", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	nsAddr := ns.listenAddr(t)
	nsMetrics := ns.metricsAddr(t)
	br := start(t, bin, "broker", "--namesrv", nsAddr, "--listen", "127.0.0.1:0", "--store", t.TempDir(),
		"--flush", "group", "--segment-size", "8MiB", "--name", "broker-m", "--cluster", "mc", "--metrics-listen", "127.0.0.1:0")
	addr := br.listenAddr(t)
	brMetrics := br.metricsAddr(t)

	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	create := remoting.ExtFields{"topic": "MetricsT", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6"}
	if resp := call(t, c, addr, protocol.ReqUpdateAndCreateTopic, create, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic: %v", resp)
	}
	const sent = 5
	h := protocol.SendMessageHeader{ProducerGroup: "pg", Topic: "MetricsT", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		QueueID: 0, BornTimestamp: time.Now().UnixMilli()}
	for range sent {
		if resp := call(t, c, addr, protocol.ReqSendMessageV2, h.ExtFields(true), []byte(strings.Repeat("b", 64))); resp.Code != protocol.RespSuccess {
			t.Fatalf("send: %v", resp)
		}
	}
	// The consume queue is built asynchronously: wait until it holds every
	// message sent, so that the lag scraped below is fixed (sent - 2).
	maxOff := remoting.ExtFields{"topic": "MetricsT", "queueId": "0"}
	for deadline := time.Now().Add(procLimit); ; {
		resp := call(t, c, addr, protocol.ReqGetMaxOffset, maxOff, nil)
		if resp.Code != protocol.RespSuccess {
			t.Fatalf("max offset: %v", resp)
		}
		if resp.ExtFields["offset"] == strconv.Itoa(sent) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consume queue max offset %s, want %d", resp.ExtFields["offset"], sent)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pull := remoting.ExtFields{"consumerGroup": "mg", "topic": "MetricsT", "queueId": "0", "queueOffset": "0", "maxMsgNums": "2",
		"sysFlag": "0", "commitOffset": "-1", "suspendTimeoutMillis": "0"}
	if resp := call(t, c, addr, protocol.ReqPullMessage, pull, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("pull: %v", resp)
	}
	commit := remoting.ExtFields{"consumerGroup": "mg", "topic": "MetricsT", "queueId": "0", "commitOffset": "2"}
	if resp := call(t, c, addr, protocol.ReqUpdateConsumerOffset, commit, nil); resp.Code != protocol.RespSuccess {
		t.Fatalf("commit: %v", resp)
	}

	sendLabels := map[string]string{"request_code": "send_message_v2", "response_code": "success"}
	var fs map[string]*dto.MetricFamily
	for deadline := time.Now().Add(procLimit); ; {
		fs = scrapeMetrics(t, brMetrics)
		if m := sample(fs, "rocketmq_rpc_latency", sendLabels); m != nil && m.Histogram.GetSampleCount() >= sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sends were never observed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := sample(fs, "rocketmq_messages_in_total", map[string]string{"topic": "MetricsT", "cluster": "mc", "node_id": "broker-m"}); m == nil || m.Counter.GetValue() != sent {
		t.Fatalf("messages in: %v", m)
	}
	if m := sample(fs, "rocketmq_rpc_latency", sendLabels); m.Histogram.GetSampleCount() != sent {
		t.Fatalf("send latency count %d, want %d", m.Histogram.GetSampleCount(), sent)
	}
	if m := sample(fs, "rocketmq_consumer_lag_messages", map[string]string{"topic": "MetricsT", "consumer_group": "mg"}); m == nil || m.Gauge.GetValue() != sent-2 {
		t.Fatalf("lag: %v", m)
	}
	if m := sample(fs, "brokerlab_flush_latency_seconds", nil); m == nil || m.Histogram.GetSampleCount() == 0 {
		t.Fatalf("group flush latency: %v", m)
	}

	nfs := scrapeMetrics(t, nsMetrics)
	if m := sample(nfs, "rocketmq_rpc_latency", map[string]string{"request_code": "register_broker", "response_code": "success", "node_type": "nameserver"}); m == nil || m.Histogram.GetSampleCount() < 1 {
		t.Fatalf("name server register_broker latency: %v", m)
	}
	if m := sample(nfs, "brokerlab_namesrv_brokers", map[string]string{"cluster": "mc"}); m == nil || m.Gauge.GetValue() != 1 {
		t.Fatalf("registered brokers: %v", m)
	}

	if code := br.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("broker exit code %d:\n%s", code, br.log())
	}
	if code := ns.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("namesrv exit code %d:\n%s", code, ns.log())
	}
	if _, err := http.Get("http://" + brMetrics + "/metrics"); err == nil {
		t.Fatal("the broker's metrics endpoint still answers after exit")
	}
}

// TestMetricsListenFromConfigFile: the --config file's metricsListen is
// used unless --metrics-listen is given; the file is still checked
// strictly by brokerConfig.
func TestMetricsListenFromConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.yaml")
	if err := os.WriteFile(file, []byte("store:\n  dir: "+dir+"\nmetricsListen: 127.0.0.1:5557\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", file}, "127.0.0.1:5557"},
		{[]string{"--config", file, "--metrics-listen", "127.0.0.1:6000"}, "127.0.0.1:6000"},
		{[]string{"--config", file, "--metrics-listen", ""}, ""}, // given empty: off
		{[]string{"--store", dir}, ""},
		{[]string{"--store", dir, "--metrics-listen", "127.0.0.1:0"}, "127.0.0.1:0"},
	} {
		cmd, f := brokerCommand()
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Fatal(err)
		}
		if _, _, err := brokerConfig(cmd, *f); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		got, err := metricsListen(cmd, *f)
		if err != nil || got != c.want {
			t.Fatalf("%v: metrics listen %q (%v), want %q", c.args, got, err, c.want)
		}
	}
}

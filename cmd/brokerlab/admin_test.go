package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/clustertest"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// adminEnv is a name server and a broker over a real store on loopback,
// and a remoting client standing in for producers and consumers.
type adminEnv struct {
	t       *testing.T
	ns      *namesrv.Server
	b       *broker.Broker
	nsAddr  string
	addr    string
	client  *remoting.Client
	pushes  chan *remoting.Command
	cluster string
}

func startAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	quiet := clustertest.Quiet
	ns := clustertest.StartNamesrv(t, func(c *namesrv.Config) { c.Remoting.TLS.Mode = remoting.TLSPermissive })

	bcfg := clustertest.BrokerConfig(ns.Addr())
	bcfg.SendQueueMaxWait = broker.DefaultConfig().SendQueueMaxWait
	bcfg.BrokerName = "broker-adm"
	bcfg.ClusterName = "AdmCluster"
	bcfg.Remoting.TLS.Mode = remoting.TLSPermissive
	bcfg.RegisterInterval = time.Hour // registrations come from topic changes
	scfg := store.DefaultConfig(t.TempDir())
	scfg.CommitLog.Path = iopath.Pwrite
	scfg.CommitLog.SegmentSize = 8 << 20
	scfg.Logger = quiet
	b := clustertest.StartBroker(t, bcfg, broker.OpenStore(scfg, bcfg.DelayLevels), nil)

	e := &adminEnv{t: t, ns: ns, b: b, nsAddr: ns.Addr(), addr: b.Addr(), cluster: bcfg.ClusterName,
		pushes: make(chan *remoting.Command, 16)}
	ccfg := remoting.DefaultClientConfig()
	ccfg.Logger = quiet
	ccfg.RequestProcessor = remoting.ProcessorFunc(func(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
		select {
		case e.pushes <- req:
		default:
		}
		return nil, nil
	})
	e.client = remoting.NewClient(ccfg)
	t.Cleanup(func() { _ = e.client.Close() })
	// The broker registers at start; wait until the name server lists it.
	e.eventually("broker registered", func() bool {
		out, err := e.admin("clusterList")
		return err == nil && strings.Contains(out, e.addr)
	})
	return e
}

// admin runs `brokerlab admin ARGS -n NAMESRV` in-process and returns its stdout.
func (e *adminEnv) admin(args ...string) (string, error) {
	var out bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs(append(append([]string{"admin"}, args...), "-n", e.nsAddr, "--timeout", "5s"))
	err := root.Execute()
	return out.String(), err
}

func (e *adminEnv) mustAdmin(args ...string) string {
	e.t.Helper()
	out, err := e.admin(args...)
	if err != nil {
		e.t.Fatalf("admin %v: %v\n%s", args, err, out)
	}
	return out
}

// adminJSON runs a command with --json and decodes its output into v.
func (e *adminEnv) adminJSON(v any, args ...string) {
	e.t.Helper()
	out := e.mustAdmin(append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("admin %v --json: %v\n%s", args, err, out)
	}
}

func (e *adminEnv) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *adminEnv) call(code int32, ext remoting.ExtFields, body []byte) *remoting.Command {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	resp, err := e.client.InvokeSync(ctx, e.addr, req)
	if err != nil {
		e.t.Fatalf("%s: %v", protocol.RequestCodeName(code), err)
	}
	if resp.Code != protocol.RespSuccess {
		e.t.Fatalf("%s: %s %q", protocol.RequestCodeName(code), protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return resp
}

// send stores one message and returns its offset message id.
func (e *adminEnv) send(topic string, queueID int32, body string, props map[string]string) string {
	e.t.Helper()
	h := protocol.SendMessageHeader{ProducerGroup: "adminPG", Topic: topic, DefaultTopic: protocol.DefaultTopic,
		DefaultTopicQueueNums: 4, QueueID: queueID, BornTimestamp: time.Now().UnixMilli(), Properties: record.EncodeProperties(props)}
	resp := e.call(protocol.ReqSendMessageV2, h.ExtFields(true), []byte(body))
	id, err := resp.ExtFields.String("msgId")
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

func (e *adminEnv) heartbeat(clientID, consumerGroup, producerGroup, topic string) {
	e.t.Helper()
	hb := broker.HeartbeatData{ClientID: clientID, ProducerDataSet: []broker.ProducerData{{GroupName: producerGroup}},
		ConsumerDataSet: []broker.ConsumerData{{GroupName: consumerGroup, ConsumeType: "CONSUME_PASSIVELY",
			MessageModel: broker.Clustering, ConsumeFromWhere: "CONSUME_FROM_FIRST_OFFSET",
			SubscriptionDataSet: []broker.SubscriptionData{
				{Topic: topic, SubString: "tagA || tagB", TagsSet: []string{"tagA", "tagB"}, SubVersion: time.Now().UnixNano(), ExpressionType: "TAG"},
				{Topic: protocol.RetryTopic(consumerGroup), SubString: "*", TagsSet: []string{}, SubVersion: time.Now().UnixNano(), ExpressionType: "TAG"},
			}}}}
	body, err := json.Marshal(hb)
	if err != nil {
		e.t.Fatal(err)
	}
	e.call(protocol.ReqHeartBeat, nil, body)
}

func (e *adminEnv) commitOffset(group, topic string, queueID int32, offset int64) {
	e.t.Helper()
	ext := remoting.ExtFields{"consumerGroup": group, "topic": topic}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("commitOffset", offset)
	e.call(protocol.ReqUpdateConsumerOffset, ext, nil)
}

// wantLine fails unless out has a line matching the regular expression.
func wantLine(t *testing.T, out, re string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)` + re).MatchString(out) {
		t.Fatalf("no line matching %q in:\n%s", re, out)
	}
}

// Every admin subcommand against a live name server and broker, as an
// operator would run them, checking tables and --json carry the real values.
func TestAdminCommands(t *testing.T) {
	e := startAdminEnv(t)
	const topic, group, pgroup = "AdmTopic", "AdmGroup", "AdmProducers"

	// clusterList: the broker with its runtime stats.
	out := e.mustAdmin("clusterList")
	wantLine(t, out, `^#Cluster Name\s+#Broker Name\s+#BID\s+#Addr`)
	wantLine(t, out, `^AdmCluster\s+broker-adm\s+0\s+`+regexp.QuoteMeta(e.addr)+`\s+V\d`)
	var clusters []clusterRow
	e.adminJSON(&clusters, "clusterList", "-c", "AdmCluster")
	if len(clusters) != 1 || clusters[0].Addr != e.addr || clusters[0].Version == "" || !clusters[0].Active || clusters[0].Error != "" {
		t.Fatalf("clusterList --json: %+v", clusters)
	}
	wantLine(t, e.mustAdmin("clusterList", "-m"), `^AdmCluster\s+broker-adm\s+\d+\s+\d+\s+\d+\s+\d+$`)

	// updateTopic on the cluster, then topicRoute and topicList show it.
	out = e.mustAdmin("updateTopic", "-c", "AdmCluster", "-t", topic, "-r", "3", "-w", "3")
	wantLine(t, out, `^create topic to `+regexp.QuoteMeta(e.addr)+` success\.$`)
	wantLine(t, out, `readQueueNums=3, writeQueueNums=3, perm=RW-`)
	out = e.mustAdmin("topicRoute", "-t", topic)
	wantLine(t, out, `^AdmCluster\s+broker-adm\s+\{0=`+regexp.QuoteMeta(e.addr)+`\}\s+3\s+3\s+6\s*$`)
	wantLine(t, out, `^Total:\s+1\s+3\s+3`)
	var route protocol.TopicRouteData
	e.adminJSON(&route, "topicRoute", "-t", topic)
	if len(route.QueueDatas) != 1 || route.QueueDatas[0].ReadQueueNums != 3 || route.BrokerDatas[0].BrokerAddrs[0] != e.addr {
		t.Fatalf("topicRoute --json: %+v", route)
	}
	wantLine(t, e.mustAdmin("topicList"), `^`+topic+`$`)

	// Messages: two keyed "order-42" on queue 0, three more on queue 1.
	start := time.Now().Add(-time.Second).UnixMilli()
	uniq := record.NewUniqID()
	offsetID := e.send(topic, 0, "first body", map[string]string{"KEYS": "order-42 other", "TAGS": "tagA", "UNIQ_KEY": uniq})
	e.send(topic, 0, "second", map[string]string{"KEYS": "order-42", "TAGS": "tagB"})
	for i := range 3 {
		e.send(topic, 1, "q1-"+strconv.Itoa(i), map[string]string{"TAGS": "tagA"})
	}

	// topicStatus: max offsets per queue (once the store dispatched them).
	e.eventually("messages dispatched", func() bool {
		var s mqadmin.TopicStats
		e.adminJSON(&s, "topicStatus", "-t", topic)
		return len(s.Queues) == 3 && s.Queues[0].MaxOffset == 2 && s.Queues[1].MaxOffset == 3
	})
	out = e.mustAdmin("topicStatus", "-t", topic)
	wantLine(t, out, `^broker-adm\s+0\s+0\s+2\s+\d{4}-\d\d-\d\d `)
	wantLine(t, out, `^broker-adm\s+1\s+0\s+3\s+`)
	wantLine(t, out, `^broker-adm\s+2\s+0\s+0\s*$`)
	var stats mqadmin.TopicStats
	e.adminJSON(&stats, "topicStatus", "-t", topic)
	if len(stats.Queues) != 3 || stats.Queues[1].MaxOffset != 3 || stats.Queues[0].BrokerName != "broker-adm" {
		t.Fatalf("topicStatus --json: %+v", stats)
	}

	// A consumer and producer connect; the group has consumed 1 of queue 0 and 1 of queue 1.
	e.heartbeat("127.0.0.1@adm-client", group, pgroup, topic)
	e.commitOffset(group, topic, 0, 1)
	e.commitOffset(group, topic, 1, 1)
	e.commitOffset(group, topic, 2, 0) // a queue without a committed offset makes reset refuse the group, as in Java
	out = e.mustAdmin("consumerProgress", "-g", group, "-t", topic)
	wantLine(t, out, `^AdmTopic\s+broker-adm\s+0\s+2\s+1\s+1\s+`)
	wantLine(t, out, `^AdmTopic\s+broker-adm\s+1\s+3\s+1\s+2\s+`)
	wantLine(t, out, `^Consume Diff Total: 3$`)
	var progress consumeProgress
	e.adminJSON(&progress, "consumerProgress", "-g", group)
	if progress.DiffTotal != 3 {
		t.Fatalf("consumerProgress --json: %+v", progress)
	}
	// Without -g: one line per group, here online with one client.
	out = e.mustAdmin("consumerProgress")
	wantLine(t, out, `^AdmGroup\s+1\s+V\S+\s+PUSH\s+CLUSTERING\s+\d+\s+3$`)

	// consumerConnection / producerConnection.
	out = e.mustAdmin("consumerConnection", "-g", group)
	wantLine(t, out, `^127\.0\.0\.1@adm-client\s+127\.0\.0\.1:\d+\s+\S+\s+V`)
	wantLine(t, out, `^AdmTopic\s+tagA \|\| tagB$`)
	wantLine(t, out, `^ConsumeType: CONSUME_PASSIVELY$`)
	wantLine(t, out, `^MessageModel: CLUSTERING$`)
	var cc mqadmin.ConsumerConnection
	e.adminJSON(&cc, "consumerConnection", "-g", group, "-b", e.addr)
	if len(cc.Connections) != 1 || cc.Connections[0].ClientID != "127.0.0.1@adm-client" || len(cc.Subscriptions) != 2 {
		t.Fatalf("consumerConnection --json: %+v", cc)
	}
	wantLine(t, e.mustAdmin("producerConnection", "-g", pgroup, "-t", topic), `^0001\s+127\.0\.0\.1@adm-client\s+127\.0\.0\.1:\d+`)
	if _, err := e.admin("producerConnection", "-g", "NoSuchProducers", "-t", topic); err == nil {
		t.Fatal("producerConnection of an unknown group succeeded")
	}

	// topicList -c: cluster and consuming group.
	wantLine(t, e.mustAdmin("topicList", "-c"), `^AdmCluster\s+AdmTopic\s+AdmGroup\s*$`)

	// resetOffsetByTime with the consumer online: the broker pushes the reset.
	out = e.mustAdmin("resetOffsetByTime", "-g", group, "-t", topic, "-s", strconv.FormatInt(start, 10))
	wantLine(t, out, `^broker-adm\s+0\s+0\s*$`)
	wantLine(t, out, `^broker-adm\s+1\s+0\s*$`)
	for pushed := false; !pushed; {
		select {
		case push := <-e.pushes:
			if push.Code != protocol.ReqResetConsumerClientOffset {
				continue // NOTIFY_CONSUMER_IDS_CHANGED and the like
			}
			offs, err := mqadmin.DecodeResetOffsetBody(push.Body)
			if err != nil || len(offs) != 3 || offs[1].Offset != 0 {
				t.Fatalf("pushed offsets %+v %v", offs, err)
			}
			pushed = true
		case <-time.After(10 * time.Second):
			t.Fatal("no reset pushed to the consumer")
		}
	}

	// The consumer goes away: the broker commits the reset itself and answers
	// SUCCESS (RocketMQ 5's server-side reset), so no offline fallback is needed.
	e.client.CloseConn(e.addr)
	e.eventually("consumer offline", func() bool {
		_, err := e.admin("consumerConnection", "-g", group, "-b", e.addr)
		return err != nil
	})
	var reset mqadmin.ResetResult
	e.adminJSON(&reset, "resetOffsetByTime", "-g", group, "-t", topic, "-s", "now")
	if reset.Offline || len(reset.Offsets) != 3 {
		t.Fatalf("reset of a group without live consumers: %+v", reset)
	}
	e.adminJSON(&progress, "consumerProgress", "-g", group, "-t", topic)
	if progress.DiffTotal != 0 || progress.Queues[1].ConsumerOffset != 3 {
		t.Fatalf("after reset to now: %+v", progress)
	}
	// And back to the start, printed as mqadmin's reset table.
	out = e.mustAdmin("resetOffsetByTime", "-g", group, "-t", topic, "-s", time.UnixMilli(start).Format("2006-01-02#15:04:05:000"))
	wantLine(t, out, `^#brokerName\s+#queueId\s+#offset\s*$`)
	wantLine(t, out, `^broker-adm\s+1\s+0\s*$`)
	e.adminJSON(&progress, "consumerProgress", "-g", group, "-t", topic)
	if progress.DiffTotal != 5 {
		t.Fatalf("after reset to the start: %+v", progress)
	}
	// One queue, to an explicit offset.
	out = e.mustAdmin("resetOffsetByTime", "-g", group, "-t", topic, "-s", "now", "-b", e.addr, "-q", "1", "-o", "2")
	wantLine(t, out, `^reset consumer offset to 2$`)
	e.adminJSON(&progress, "consumerProgress", "-g", group, "-t", topic)
	if progress.Queues[1].ConsumerOffset != 2 {
		t.Fatalf("after queue reset: %+v", progress)
	}

	// Subscription groups.
	out = e.mustAdmin("updateSubGroup", "-b", e.addr, "-g", "AdmSub", "-r", "5", "-q", "2", "-s", "false")
	wantLine(t, out, `^create subscription group to `+regexp.QuoteMeta(e.addr)+` success\.$`)
	a := mqadmin.New(mqadmin.Config{NamesrvAddrs: []string{e.nsAddr}})
	defer a.Close()
	findGroup := func(name string) *protocol.SubscriptionGroupConfig {
		groups, err := a.SubscriptionGroups(context.Background(), e.addr)
		if err != nil {
			t.Fatal(err)
		}
		for i := range groups {
			if groups[i].GroupName == name {
				return &groups[i]
			}
		}
		return nil
	}
	if g := findGroup("AdmSub"); g == nil || g.RetryMaxTimes != 5 || g.RetryQueueNums != 2 || g.ConsumeEnable {
		t.Fatalf("group after updateSubGroup: %+v", g)
	}
	e.mustAdmin("updateSubGroup", "-c", "AdmCluster", "-g", "AdmSub", "-r", "7")
	if g := findGroup("AdmSub"); g == nil || g.RetryMaxTimes != 7 || !g.ConsumeEnable {
		t.Fatalf("group after updateSubGroup -c: %+v", g)
	}
	wantLine(t, e.mustAdmin("deleteSubGroup", "-b", e.addr, "-g", "AdmSub", "-r", "true"),
		`^delete subscription group \[AdmSub\] from broker \[`+regexp.QuoteMeta(e.addr)+`\] success\.$`)
	if g := findGroup("AdmSub"); g != nil {
		t.Fatalf("group after deleteSubGroup: %+v", g)
	}

	// Broker status and config.
	out = e.mustAdmin("brokerStatus", "-b", e.addr)
	wantLine(t, out, `^brokerVersionDesc\s+: V\d`)
	wantLine(t, out, `^putTps\s+: `)
	var status []brokerTable
	e.adminJSON(&status, "brokerStatus", "-c", "AdmCluster")
	if len(status) != 1 || status[0].Addr != e.addr || status[0].Table["brokerVersionDesc"] == "" {
		t.Fatalf("brokerStatus --json: %+v", status)
	}
	out = e.mustAdmin("getBrokerConfig", "-b", e.addr)
	wantLine(t, out, `^============`+regexp.QuoteMeta(e.addr)+`============$`)
	wantLine(t, out, `^brokerName\s+=  broker-adm$`)
	wantLine(t, out, `^brokerClusterName\s+=  AdmCluster$`)
	wantLine(t, e.mustAdmin("updateBrokerConfig", "-b", e.addr, "-k", "shortPollingTimeMills", "-v", "1500"),
		`^update broker config success, `+regexp.QuoteMeta(e.addr)+`$`)
	var conf []brokerTable
	e.adminJSON(&conf, "getBrokerConfig", "-c", "AdmCluster")
	if len(conf) != 1 || conf[0].Table["shortPollingTimeMills"] != "1500" {
		t.Fatalf("getBrokerConfig --json after update: %+v", conf)
	}
	if _, err := e.admin("updateBrokerConfig", "-b", e.addr, "-k", "brokerConfigPath", "-v", "/x"); err == nil {
		t.Fatal("updateBrokerConfig of a black-listed key succeeded")
	}

	// Messages by key (the index is built as the store dispatches) and by id.
	e.eventually("messages indexed", func() bool {
		out, err := e.admin("queryMsgByKey", "-t", topic, "-k", "order-42")
		return err == nil && strings.Count(out, "\n") == 3
	})
	out = e.mustAdmin("queryMsgByKey", "-t", topic, "-k", "order-42")
	wantLine(t, out, `^#Message ID\s+#QID\s+#Offset$`)
	wantLine(t, out, `^`+uniq+`\s+0\s+0$`)
	wantLine(t, out, `^\S+\s+0\s+1$`)
	var found []mqadmin.Message
	e.adminJSON(&found, "queryMsgByKey", "-t", topic, "-k", "other")
	if len(found) != 1 || found[0].MsgID != uniq || string(found[0].Body) != "first body" {
		t.Fatalf("queryMsgByKey --json: %+v", found)
	}
	bodies := t.TempDir()
	for _, id := range []string{offsetID, uniq} {
		out = e.mustAdmin("queryMsgById", "-t", topic, "-i", id, "-f", "UTF-8", "--body-dir", bodies)
		wantLine(t, out, `^OffsetID:\s+`+offsetID+`$`)
		wantLine(t, out, `^Topic:\s+AdmTopic$`)
		wantLine(t, out, `^Keys:\s+\[order-42 other\]$`)
		wantLine(t, out, `^Tags:\s+\[tagA\]$`)
		wantLine(t, out, `^Queue Offset:\s+0$`)
		wantLine(t, out, `^Message Body:\s+first body$`)
	}
	if b, err := os.ReadFile(filepath.Join(bodies, uniq)); err != nil || string(b) != "first body" {
		t.Fatalf("body file: %q %v", b, err)
	}
	if _, err := e.admin("queryMsgById", "-t", topic, "-i", "0123456789ABCDEF0123456789ABCDEF", "--body-dir", bodies); err == nil {
		t.Fatal("queryMsgById of an unknown id succeeded")
	}

	// deleteSubGroup -c also deletes the group's retry topic everywhere.
	var deleted subGroupDelete
	e.adminJSON(&deleted, "deleteSubGroup", "-c", "AdmCluster", "-g", group)
	if len(deleted.Brokers) != 1 || !slices.Contains(deleted.Topics, "%RETRY%"+group) {
		t.Fatalf("deleteSubGroup -c --json: %+v", deleted)
	}
	if strings.Contains(e.mustAdmin("topicList"), "%RETRY%"+group+"\n") {
		t.Fatal("topicList still lists the deleted group's retry topic")
	}

	// deleteTopic: gone from the broker and the name server.
	out = e.mustAdmin("deleteTopic", "-t", topic, "-c", "AdmCluster")
	wantLine(t, out, `^delete topic \[AdmTopic\] from cluster \[AdmCluster\] success\.$`)
	wantLine(t, out, `^delete topic \[AdmTopic\] from NameServer success\.$`)
	if out, err := e.admin("topicRoute", "-t", topic); err == nil {
		t.Fatalf("topicRoute after deleteTopic:\n%s", out)
	}
	if strings.Contains(e.mustAdmin("topicList"), topic+"\n") {
		t.Fatal("topicList still lists the deleted topic")
	}
	if _, err := a.TopicStats(context.Background(), e.addr, topic); mqadmin.ResponseCode(err) != protocol.RespTopicNotExist {
		t.Fatalf("topic stats after deleteTopic: %v", err)
	}
}

// The admin connects over TLS with --tls-enable (the servers here accept TLS
// and plaintext).
func TestAdminTLS(t *testing.T) {
	e := startAdminEnv(t)
	wantLine(t, e.mustAdmin("clusterList", "--tls-enable"), `^AdmCluster\s+broker-adm\s+0\s+`+regexp.QuoteMeta(e.addr))
	wantLine(t, e.mustAdmin("brokerStatus", "-b", e.addr, "--tls-enable"), `^brokerVersionDesc\s+: V\d`)
	// A verifying client refuses the servers' ephemeral self-signed certificates.
	if _, err := e.admin("brokerStatus", "-b", e.addr, "--tls-enable", "--tls-verify-server"); err == nil {
		t.Fatal("verifying TLS client accepted a self-signed certificate")
	}
}

func TestAdminBadInvocations(t *testing.T) {
	e := startAdminEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"updateTopic", "-t", "X"}, "exactly one of --brokerAddr, --clusterName"},
		{[]string{"updateTopic", "-t", "X", "-b", e.addr, "-c", "AdmCluster"}, "exactly one of"},
		{[]string{"updateTopic", "-c", "NoSuchCluster", "-t", "X"}, "NoSuchCluster"},
		{[]string{"topicRoute"}, `"topic" not set`},
		{[]string{"topicRoute", "-t", "NoSuchTopic"}, "NoSuchTopic"},
		{[]string{"topicStatus", "-t", "NoSuchTopic"}, "NoSuchTopic"},
		{[]string{"resetOffsetByTime", "-g", "g", "-t", "t", "-s", "yesterday"}, "timestamp"},
		{[]string{"updateSubGroup", "-b", e.addr, "-g", "g", "--attributes", "a=b"}, "+key=value"},
		{[]string{"updateSubGroup", "-b", e.addr, "-g", "g", "-p", "{not json"}, "not JSON"},
		{[]string{"queryMsgById", "-t", "t", "-i", "x", "-f", "GBK"}, "UTF-8"},
		{[]string{"consumerConnection", "-g", "NoSuchGroup"}, "NoSuchGroup"},
	} {
		if out, err := e.admin(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("admin %v: err %v, want one mentioning %q\n%s", c.args, err, c.want, out)
		}
	}
	// A name server that is not there: a clear dial error.
	root := newRoot()
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"admin", "clusterList", "-n", "127.0.0.1:1", "--timeout", "2s"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable name server: %v", err)
	}
}

// -n takes a ';'-separated list; a name server that does not answer is skipped.
func TestAdminNamesrvFailover(t *testing.T) {
	e := startAdminEnv(t)
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(io.Discard)
	root.SetArgs([]string{"admin", "topicList", "-n", "127.0.0.1:1;" + e.nsAddr, "--timeout", "2s", "--json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var res struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !slices.Contains(res.TopicList, "TBW102") {
		t.Fatalf("topicList via the second name server: %v %s", err, out.String())
	}
}

package main

import (
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/brokerconf"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// printBrokerConfig writes the resolved configuration as a broker.conf that
// -c reads back to the same configuration; the warnings come first as
// comments.
func printBrokerConfig(w io.Writer, s brokerSetup) error {
	head := "brokerlab broker: resolved configuration (flags > config file > defaults)"
	for _, warn := range s.warnings {
		head += "\nwarning: " + warn
	}
	if err := brokerconf.WriteComment(w, head); err != nil {
		return err
	}
	return brokerconf.Write(w, brokerProps(s))
}

// brokerProps is s as broker.conf entries, in RocketMQ's key names and
// units (brokerlab's own settings under their own keys: writePath,
// retainBytes, aclFile, metricsListen).
func brokerProps(s brokerSetup) []brokerconf.Entry {
	b, st := s.bcfg, s.scfg
	var out []brokerconf.Entry
	add := func(k, v string) { out = append(out, brokerconf.Entry{Key: k, Value: v}) }
	bl := func(k string, v bool) { add(k, strconv.FormatBool(v)) }
	in := func(k string, v int64) { add(k, strconv.FormatInt(v, 10)) }
	ms := func(k string, d time.Duration) { in(k, d.Milliseconds()) }
	pct := func(k string, r float64) { in(k, int64(r*100+0.5)) }

	add("brokerClusterName", b.ClusterName)
	add("brokerName", b.BrokerName)
	in("brokerId", b.BrokerID)
	add("brokerRole", string(b.Role))
	add("namesrvAddr", strings.Join(b.NamesrvAddrs, ";"))
	add("brokerIP1", b.BrokerIP)
	if host, port, err := net.SplitHostPort(b.ListenAddr); err == nil {
		add("bindAddress", host)
		add("listenPort", port)
	}
	if _, port, err := net.SplitHostPort(b.HA.ListenAddr); err == nil {
		add("haListenPort", port)
	}
	add("haMasterAddress", b.HAMasterAddr)
	bl("slaveReadEnable", b.SlaveReadEnable)

	add("storePathRootDir", st.Root)
	add("storePathCommitLog", commitlog.SegmentDir(st.Root))
	in("mappedFileSizeCommitLog", st.CommitLog.SegmentSize)
	add("flushDiskType", flushDiskTypeOf(st.CommitLog.Flush.Kind))
	add("writePath", string(st.CommitLog.Path))
	bl("transientStorePoolEnable", st.CommitLog.Path == iopath.Pool)
	ms("flushIntervalCommitLog", st.CommitLog.Flush.Interval)
	in("flushCommitLogLeastPages", int64(st.CommitLog.Flush.LeastPages))

	bl("messageIndexEnable", st.MessageIndexEnable)
	in("maxHashSlotNum", int64(st.Index.MaxHashSlots))
	in("maxIndexNum", int64(st.Index.MaxIndexNum))

	add("deleteWhen", st.DeleteWhen)
	in("fileReservedTime", int64(st.FileReservedTime/time.Hour))
	pct("diskMaxUsedSpaceRatio", st.DiskMaxUsedSpaceRatio)
	pct("diskSpaceCleanForciblyRatio", st.DiskSpaceCleanForciblyRatio)
	pct("diskSpaceWarningLevelRatio", st.DiskSpaceWarningLevelRatio)
	ms("cleanResourceInterval", st.CleanInterval)
	if st.RetainBytes > 0 {
		in("retainBytes", st.RetainBytes)
	} else {
		add("retainBytes", "")
	}

	bl("autoCreateTopicEnable", b.AutoCreateTopic)
	in("defaultTopicQueueNums", int64(b.DefaultTopicQueueNums))
	in("sendMessageThreadPoolNums", int64(b.SendWorkers))
	in("sendThreadPoolQueueCapacity", int64(b.SendQueueSize))
	ms("waitTimeMillsInSendQueue", b.SendQueueMaxWait)
	bl("longPollingEnable", b.LongPolling)
	ms("registerNameServerPeriod", b.RegisterInterval)
	ms("transactionCheckInterval", b.TransactionCheckInterval)
	ms("transactionTimeOut", b.TransactionTimeout)
	in("transactionCheckMax", int64(b.TransactionCheckMax))
	add("messageDelayLevel", broker.FormatDelayLevels(b.DelayLevels))
	bl("traceTopicEnable", s.traceTopic != "")
	add("msgTraceTopicName", s.traceTopic)

	bl("timerWheelEnable", b.TimerEnable)
	ms("timerPrecisionMs", b.TimerPrecision)
	in("timerMaxDelaySec", int64(b.TimerMaxDelay/time.Second))
	ms("timerFlushIntervalMs", b.TimerFlushInterval)
	bl("litePullMessageEnable", b.LitePullEnable)
	bl("enablePropertyFilter", b.EnablePropertyFilter)
	bl("storeReplyMessageEnable", b.StoreReplyMessage)

	bl("aclEnable", s.aclFile != "")
	add("aclFile", s.aclFile)

	t := b.Remoting.TLS
	add("tls.server.mode", string(t.Mode))
	add("tls.server.certPath", t.CertFile)
	add("tls.server.keyPath", t.KeyFile)
	add("tls.server.trustCertPath", t.CAFile)
	add("tls.server.need.client.auth", string(t.ClientAuth))
	bl("tls.enable", s.tlsEnable)
	add("tls.client.certPath", s.tlsClient.CertFile)
	add("tls.client.keyPath", s.tlsClient.KeyFile)
	add("tls.client.trustCertPath", s.tlsClient.CAFile)
	bl("tls.client.authServer", s.tlsClient.VerifyServer)
	add("metricsListen", s.metricsListen)
	add("grpcListen", s.grpcListen)
	return out
}

package main

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/brokerconf"
	"github.com/brokerlab/brokerlab/engine/commitlog"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// RocketMQ's defaults the broker.conf mapping needs: the port mqbroker
// listens on and NettyServerConfig's bind address.
const (
	rmqDefaultListenPort = 10911
	rmqDefaultBindAddr   = "0.0.0.0"
	rmqTraceTopic        = "RMQ_SYS_TRACE_TOPIC"
)

// flushDiskTypes maps broker.conf's flushDiskType (RocketMQ's two values and
// brokerlab's own policies) to flush policies.
var flushDiskTypes = map[string]flush.Kind{
	"SYNC_FLUSH":  flush.Sync,
	"ASYNC_FLUSH": flush.Async,
	"GROUP":       flush.Group,
	"RMQGROUP":    flush.RMQGroup,
	"DSYNC":       flush.DSync,
}

// flushDiskTypeOf is the broker.conf name of a flush policy.
func flushDiskTypeOf(k flush.Kind) string {
	for name, kind := range flushDiskTypes {
		if kind == k {
			return name
		}
	}
	return string(k)
}

// brokerFileFromProps maps a RocketMQ broker.conf (mqbroker -c) onto the
// config file's struct, so that the one merge in brokerConfig (flags set on
// the command line, then the file, then the defaults) builds the broker and
// its store whichever file format was given. confDir is the file's
// directory (aclEnable reads plain_acl.yml beside it, as RocketMQ reads
// conf/plain_acl.yml). Keys the mapping does not know stay unused in p
// (p.Unused) for the caller to report.
//
// Units are RocketMQ's: sizes in bytes, intervals in milliseconds,
// fileReservedTime in hours, the disk ratios in percent. listenPort and
// bindAddress (NettyServerConfig, default 0.0.0.0 like Java) give the
// listen address when either is set; haListenPort the HA port on the same
// host.
func brokerFileFromProps(p *brokerconf.Props, confDir string) (brokerFile, error) {
	var f brokerFile
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	p.String("brokerClusterName", &f.Cluster)
	p.String("brokerName", &f.Name)
	p.Int("brokerId", 0, 1<<31-1, &f.BrokerID)
	p.String("brokerRole", &f.BrokerRole)
	var namesrv string
	p.String("namesrvAddr", &namesrv)
	f.Namesrv = splitAddrs(namesrv)
	p.String("brokerIP1", &f.BrokerIP)

	f.Listen = listenProp(p, rmqDefaultListenPort)
	p.Int("haListenPort", 0, 65535, &f.HAListenPort)
	p.String("haMasterAddress", &f.HAMasterAddress)
	p.Bool("slaveReadEnable", &f.SlaveReadEnable)

	// Store.
	p.String("storePathRootDir", &f.Store.Dir)
	for _, kv := range [][2]string{{"storePathCommitLog", commitlog.SegmentDir("")}, {"storePathConsumeQueue", "consumequeue"}, {"storePathIndex", "index"}} {
		key, sub := kv[0], kv[1]
		var path string
		p.String(key, &path)
		if path == "" {
			continue
		}
		if f.Store.Dir == "" {
			f.Store.Dir = filepath.Dir(path) // storePathRootDir's own default is $HOME/store; take the parent
		}
		if want := filepath.Join(f.Store.Dir, sub); filepath.Clean(path) != want {
			bad("%s=%s: brokerlab keeps it at storePathRootDir/%s (%s)", key, path, sub, want)
		}
	}
	var seg *int64
	p.Int("mappedFileSizeCommitLog", 1, 1<<40, &seg)
	if seg == nil {
		p.Int("mapedFileSizeCommitLog", 1, 1<<40, &seg) // the spelling of the shipped conf files
	} else if p.Has("mapedFileSizeCommitLog") {
		var old *int64
		p.Int("mapedFileSizeCommitLog", 1, 1<<40, &old)
		if old != nil && *old != *seg {
			bad("mapedFileSizeCommitLog=%d and mappedFileSizeCommitLog=%d disagree", *old, *seg)
		}
	}
	if seg != nil {
		f.Store.SegmentSize = strconv.FormatInt(*seg, 10)
	}
	var fdt string
	p.String("flushDiskType", &fdt)
	if fdt != "" {
		k, ok := flushDiskTypes[strings.ToUpper(fdt)]
		if !ok {
			if _, err := flush.ParseKind(fdt); err != nil {
				bad("flushDiskType=%s: want SYNC_FLUSH, ASYNC_FLUSH, GROUP, RMQGROUP or DSYNC", fdt)
			}
			k = flush.Kind(fdt)
		}
		f.Store.Flush = string(k)
	}
	var ms *int64
	p.Int("flushIntervalCommitLog", 1, 1<<31-1, &ms)
	if ms != nil {
		f.Store.FlushInterval = strconv.FormatInt(*ms, 10) + "ms"
	}
	p.Int("flushCommitLogLeastPages", 0, 1<<31-1, &f.Store.FlushLeastPages)
	p.String("writePath", &f.Store.WritePath)
	var pool *bool
	p.Bool("transientStorePoolEnable", &pool)
	if pool != nil && *pool {
		if f.Store.WritePath != "" && f.Store.WritePath != string(iopath.Pool) {
			bad("transientStorePoolEnable=true and writePath=%s: the pool is writePath=pool", f.Store.WritePath)
		}
		f.Store.WritePath = string(iopath.Pool)
	}

	p.Bool("messageIndexEnable", &f.Store.MessageIndexEnable)
	p.Int("maxHashSlotNum", 1, 1<<30, &f.Store.MaxHashSlotNum)
	p.Int("maxIndexNum", 1, 1<<30, &f.Store.MaxIndexNum)

	// Retention.
	r := &f.Store.Retention
	p.String("deleteWhen", &r.DeleteWhen)
	p.Int("fileReservedTime", 1, 1<<31-1, &r.FileReservedTime)
	p.Int("diskMaxUsedSpaceRatio", 0, 100, &r.DiskMaxUsedSpaceRatio)
	p.Int("diskSpaceCleanForciblyRatio", 0, 100, &r.DiskSpaceCleanForciblyRatio)
	p.Int("diskSpaceWarningLevelRatio", 0, 100, &r.DiskSpaceWarningLevelRatio)
	p.Int("cleanResourceInterval", 1, 1<<31-1, &r.CleanResourceInterval)
	p.String("retainBytes", &r.RetainBytes)

	// Topics, sends, pulls.
	p.Bool("autoCreateTopicEnable", &f.AutoCreateTopic)
	var qn *int64
	p.Int("defaultTopicQueueNums", 1, 1<<15, &qn)
	if qn != nil {
		v := int32(*qn)
		f.DefaultTopicQueueNums = &v
	}
	intp := func(key string, dst **int) {
		var v *int64
		p.Int(key, 1, 1<<31-1, &v)
		if v != nil {
			n := int(*v)
			*dst = &n
		}
	}
	intp("sendMessageThreadPoolNums", &f.SendWorkers)
	intp("sendThreadPoolQueueCapacity", &f.SendQueueSize)
	p.Bool("longPollingEnable", &f.LongPolling)
	msKey := func(key string, dst *string) {
		var v *int64
		p.Int(key, 1, 1<<40, &v)
		if v != nil {
			*dst = strconv.FormatInt(*v, 10) + "ms"
		}
	}
	msKey("waitTimeMillsInSendQueue", &f.SendQueueMaxWait)
	msKey("registerNameServerPeriod", &f.RegisterInterval)
	msKey("transactionCheckInterval", &f.TransactionCheckInterval)
	msKey("transactionTimeOut", &f.TransactionTimeOut)
	intp("transactionCheckMax", &f.TransactionCheckMax)
	p.String("messageDelayLevel", &f.DelayLevels)
	p.Bool("traceTopicEnable", &f.TraceTopicEnable)
	p.String("msgTraceTopicName", &f.MsgTraceTopicName)

	// Timer messages, lite pull, SQL92 filtering, request-reply.
	p.Bool("timerWheelEnable", &f.Timer.TimerWheelEnable)
	p.Int("timerPrecisionMs", 1, 1000, &f.Timer.TimerPrecisionMs)
	p.Int("timerMaxDelaySec", 1, 1<<40, &f.Timer.TimerMaxDelaySec)
	p.Int("timerFlushIntervalMs", 1, 1<<40, &f.Timer.TimerFlushIntervalMs)
	p.Bool("litePullMessageEnable", &f.Timer.LitePullMessageEnable)
	p.Bool("enablePropertyFilter", &f.Reply.EnablePropertyFilter)
	p.Bool("storeReplyMessageEnable", &f.Reply.StoreReplyMessageEnable)

	// ACL: plain_acl.yml beside the conf file unless aclFile names one.
	var aclOn *bool
	p.Bool("aclEnable", &aclOn)
	var aclFile string
	p.String("aclFile", &aclFile)
	if aclOn != nil && *aclOn {
		if aclFile == "" {
			aclFile = filepath.Join(confDir, "plain_acl.yml")
		}
		f.ACLFile = aclFile
	}

	// TLS (TlsSystemConfig's property names) and metrics.
	t := &f.TLS
	for key, dst := range map[string]*string{
		"tls.server.mode": &t.Mode, "tls.server.certPath": &t.CertPath, "tls.server.keyPath": &t.KeyPath,
		"tls.server.trustCertPath": &t.TrustCertPath, "tls.server.need.client.auth": &t.NeedClientAuth,
		"tls.client.certPath": &t.ClientCertPath, "tls.client.keyPath": &t.ClientKeyPath,
		"tls.client.trustCertPath": &t.ClientTrustCertPath,
	} {
		p.String(key, dst)
	}
	p.Bool("tls.enable", &t.Enable)
	p.Bool("tls.client.authServer", &t.ClientAuthServer)
	p.String("metricsListen", &f.Metrics.MetricsListen)
	p.String("grpcListen", &f.GRPC.GRPCListen)
	p.Int("grpcServerPort", 0, 65535, &f.GRPC.GRPCServerPort)

	if err := p.Err(); err != nil {
		errs = append([]error{err}, errs...)
	}
	return f, errors.Join(errs...)
}

// listenProp is the listen address that listenPort and bindAddress give
// when either is set (Java's defaults: defaultPort on 0.0.0.0), else "".
func listenProp(p *brokerconf.Props, defaultPort int64) string {
	var port *int64
	bind := ""
	p.Int("listenPort", 0, 65535, &port)
	p.String("bindAddress", &bind)
	if port == nil && bind == "" {
		return ""
	}
	if bind == "" {
		bind = rmqDefaultBindAddr
	}
	pn := defaultPort
	if port != nil {
		pn = *port
	}
	return net.JoinHostPort(bind, strconv.FormatInt(pn, 10))
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/brokerconf"
	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/internal/bytesize"
	"github.com/brokerlab/brokerlab/internal/storeconfig"
)

func init() { register(newBrokerCmd) }

// brokerFlags are the broker subcommand's settings after flags and --config
// are merged.
type brokerFlags struct {
	name, cluster, listen, brokerIP string
	namesrv                         string // "a:9876;b:9876"
	storeDir, writePath, flushKind  string
	segmentSize                     string
	configFile, logLevel            string
	propsFile                       string // -c: RocketMQ broker.conf (properties)
	printConfig                     bool   // --print-config
	metricsListen                   string // --metrics-listen ("" = off)
	grpcListen                      string // --grpc-listen ("" = off)
	tls                             tlsFlags
	ha                              haFlags
	acl                             aclFlags
	retention                       retentionFlags
}

// haFlags are the replication flags (RocketMQ's brokerRole, brokerId,
// haListenPort, haMasterAddress, slaveReadEnable).
type haFlags struct {
	brokerName, role, haListen, haMaster string
	brokerID                             int64
	slaveRead                            bool
	slaveTimeout                         time.Duration
}

// brokerFile is the --config file (YAML, or JSON which YAML reads too).
// Durations are Go durations ("200ms"), sizes take KiB/MiB/GiB suffixes.
type brokerFile struct {
	Name                  string          `yaml:"name"`
	Cluster               string          `yaml:"cluster"`
	Listen                string          `yaml:"listen"`
	BrokerIP              string          `yaml:"brokerIP"`
	Namesrv               stringList      `yaml:"namesrv"`
	Store                 brokerFileStore `yaml:"store"`
	AutoCreateTopic       *bool           `yaml:"autoCreateTopic"`
	DefaultTopicQueueNums *int32          `yaml:"defaultTopicQueueNums"`
	LongPolling           *bool           `yaml:"longPolling"`
	MaxSuspend            string          `yaml:"maxSuspend"`
	SendWorkers           *int            `yaml:"sendWorkers"`
	SendQueueSize         *int            `yaml:"sendQueueSize"`
	SendQueueMaxWait      string          `yaml:"sendQueueMaxWait"`
	MaxReconsumeTimes     *int32          `yaml:"maxReconsumeTimes"`
	DelayLevels           string          `yaml:"delayLevels"`
	// Transactions: RocketMQ's key names, durations instead of ms.
	TransactionCheckInterval string `yaml:"transactionCheckInterval"`
	TransactionTimeOut       string `yaml:"transactionTimeOut"`
	TransactionCheckMax      *int   `yaml:"transactionCheckMax"`
	RegisterInterval         string `yaml:"registerInterval"`
	// TLS: RocketMQ's tls.server.* and tls.client.* keys, e.g.
	// "tls.server.mode: enforcing".
	TLS tlsFile `yaml:",inline"`

	// Replication: RocketMQ's key names.
	BrokerRole      string `yaml:"brokerRole"`
	BrokerID        *int64 `yaml:"brokerId"`
	HAListen        string `yaml:"haListen"`
	HAListenPort    *int64 `yaml:"haListenPort"` // on the listen host
	HAMasterAddress string `yaml:"haMasterAddress"`
	SlaveReadEnable *bool  `yaml:"slaveReadEnable"`

	// Timer messages and lite pull: RocketMQ's key names (broker_timer.go).
	Timer timerFile `yaml:",inline"`
	Reply replyFile `yaml:",inline"` // SQL92 filtering and request-reply (broker_reply.go)

	// Prometheus metrics: metricsListen, as --metrics-listen (metrics_cmd.go).
	Metrics metricsFile `yaml:",inline"`
	// gRPC front end: grpcListen or grpcServerPort (broker_grpc.go).
	GRPC grpcFile `yaml:",inline"`

	// ACLFile is --acl (broker.conf: aclEnable=true reads plain_acl.yml
	// beside it, or aclFile).
	ACLFile string `yaml:"aclFile"`
	// TraceTopicEnable creates the message-trace topic (MsgTraceTopicName,
	// default RMQ_SYS_TRACE_TOPIC, one queue) at start, as RocketMQ does.
	TraceTopicEnable  *bool  `yaml:"traceTopicEnable"`
	MsgTraceTopicName string `yaml:"msgTraceTopicName"`
}

// brokerFileStore is the config file's store section.
type brokerFileStore struct {
	Dir           string `yaml:"dir"`
	WritePath     string `yaml:"writePath"`
	Flush         string `yaml:"flush"`
	SegmentSize   string `yaml:"segmentSize"`
	FlushInterval string `yaml:"flushInterval"`
	// FlushLeastPages is flushCommitLogLeastPages: the dirty 4 KiB pages an
	// async flush waits for (0 flushes whatever is dirty).
	FlushLeastPages *int64 `yaml:"flushLeastPages"`
	// Retention: deleteWhen, fileReservedTime, the disk ratios.
	Retention retentionFile `yaml:",inline"`
	// The key index (RocketMQ's names): messageIndexEnable, and the slots
	// and entries of one index file (maxHashSlotNum, maxIndexNum).
	MessageIndexEnable *bool  `yaml:"messageIndexEnable"`
	MaxHashSlotNum     *int64 `yaml:"maxHashSlotNum"`
	MaxIndexNum        *int64 `yaml:"maxIndexNum"`
}

// stringList reads a YAML sequence or one "a;b" / "a,b" string.
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = splitAddrs(n.Value)
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		out = append(out, a)
	}
	return out
}

func newBrokerCmd() *cobra.Command {
	cmd, _ := brokerCommand()
	return cmd
}

// brokerCommand is the broker command and the flags it parses into (for
// tests that call brokerConfig without running it).
func brokerCommand() (*cobra.Command, *brokerFlags) {
	var f brokerFlags
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run a RocketMQ-compatible broker over the brokerlab store",
		Long: `Run a broker speaking RocketMQ's remoting protocol over a brokerlab message
store, registered with the name servers every 30 s. Official RocketMQ clients
work against it. --config reads the broker config from a YAML or JSON file,
-c from a RocketMQ broker.conf (unknown keys are logged); flags given on the
command line override either. --print-config prints the resolved
configuration as a broker.conf and exits. Logs go to stderr; SIGINT or
SIGTERM stops it cleanly (flushes, persists consumer offsets, removes the
store's abort file).`,
		Example: `  brokerlab broker --namesrv 127.0.0.1:9876 --listen 127.0.0.1:10911 --store /data/store \
      --write-path mmap --flush async --segment-size 1GiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			setup, err := resolveBroker(cmd, f)
			if err != nil {
				return err
			}
			if f.printConfig {
				return printBrokerConfig(cmd.OutOrStdout(), setup)
			}
			log, err := newLogger(f.logLevel)
			if err != nil {
				return err
			}
			for _, w := range setup.warnings {
				log.Warn("broker config: " + w)
			}
			f.acl.file = setup.aclFile
			if setup.bcfg.ACL, err = startACL(cmd.Context(), f.acl, f.logLevel); err != nil {
				return err
			}
			return runBroker(cmd.Context(), setup, f.logLevel)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.namesrv, "namesrv", "127.0.0.1:9876", "name server addresses, ';'-separated (literal IP:port; \"\" for none)")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:10911", "listen address (host:port; port 0 picks one)")
	fl.StringVar(&f.storeDir, "store", "", "store root directory (required)")
	fl.StringVar(&f.writePath, "write-path", string(iopath.Mmap), "commit-log write path: mmap, pwrite, pool, direct or uncached (RWF_DONTCACHE, Linux >= 6.14)")
	fl.StringVar(&f.flushKind, "flush", string(flush.Async), "flush policy: sync, async, group, rmqgroup or dsync (dsync: pwrite, uncached or direct only)")
	fl.StringVar(&f.segmentSize, "segment-size", "1GiB", "commit-log segment size (KiB, MiB, GiB suffixes)")
	fl.StringVar(&f.configFile, "config", "", "broker config file (YAML or JSON); flags override it")
	fl.StringVarP(&f.propsFile, "properties", "c", "", "RocketMQ broker.conf (Java properties, as mqbroker -c); flags override it; unknown keys are logged")
	fl.BoolVarP(&f.printConfig, "print-config", "p", false, "print the resolved configuration as broker.conf properties and exit")
	fl.StringVar(&f.name, "name", "broker-a", "broker name")
	fl.StringVar(&f.cluster, "cluster", "DefaultCluster", "cluster name")
	fl.StringVar(&f.brokerIP, "broker-ip", "", "IP registered with the name servers (default: the listen host, or the first non-loopback IPv4)")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	addMetricsFlag(cmd, &f.metricsListen)
	addGRPCFlag(cmd, &f.grpcListen)
	addServerTLSFlags(cmd, &f.tls)
	addClientTLSFlags(cmd, &f.tls)
	addHAFlags(cmd, &f.ha)
	addACLFlags(cmd, &f.acl)
	addRetentionFlags(cmd, &f.retention)
	return cmd, &f
}

// brokerSetup is what the broker command resolved from its flags and its
// config file.
type brokerSetup struct {
	bcfg          broker.Config
	scfg          store.Config
	aclFile       string // plain_acl.yml to enforce; "" = no ACL
	metricsListen string
	grpcListen    string // the gRPC front end's address; "" = off
	traceTopic    string // the message-trace topic created at start; "" = none
	// tlsClient and tlsEnable are the name-server side of TLS as resolved
	// (bcfg.NamesrvTLS is what they load to), for --print-config.
	tlsClient remoting.TLSClientConfig
	tlsEnable bool
	// warnings are logged at start: each unknown broker.conf key, each
	// clamped value.
	warnings []string
}

// brokerConfig merges defaults, the config file (--config YAML or -c
// broker.conf) and the flags set on the command line, in that order.
func brokerConfig(cmd *cobra.Command, f brokerFlags) (broker.Config, store.Config, error) {
	s, err := resolveBroker(cmd, f)
	return s.bcfg, s.scfg, err
}

// loadBrokerFile reads --config (YAML or JSON: unknown keys are errors) or
// -c (broker.conf: unknown keys come back as warnings).
func loadBrokerFile(f brokerFlags) (brokerFile, []string, error) {
	var file brokerFile
	switch {
	case f.configFile != "" && f.propsFile != "":
		return file, nil, errors.New("give one config file: --config (YAML) or -c (broker.conf)")
	case f.propsFile != "":
		p, err := brokerconf.ParseFile(f.propsFile)
		if err != nil {
			return file, nil, fmt.Errorf("-c: %w", err)
		}
		file, err = brokerFileFromProps(p, filepath.Dir(f.propsFile))
		if err != nil {
			return file, nil, fmt.Errorf("-c %s: %w", f.propsFile, err)
		}
		var warns []string
		for _, e := range p.Unused() {
			warns = append(warns, fmt.Sprintf("%s line %d: unknown key %s=%s ignored", f.propsFile, e.Line, e.Key, e.Value))
		}
		return file, warns, nil
	case f.configFile != "":
		raw, err := os.ReadFile(f.configFile)
		if err != nil {
			return file, nil, fmt.Errorf("--config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		dec.KnownFields(true)
		if err := dec.Decode(&file); err != nil && !errors.Is(err, io.EOF) {
			return file, nil, fmt.Errorf("--config %s: %w", f.configFile, err)
		}
	}
	return file, nil, nil
}

// resolveBroker builds the broker's and its store's config: the flags set on
// the command line win over the config file, which wins over the defaults.
func resolveBroker(cmd *cobra.Command, f brokerFlags) (brokerSetup, error) {
	var out brokerSetup
	bcfg := broker.DefaultConfig()
	file, warns, err := loadBrokerFile(f)
	if err != nil {
		return out, err
	}
	out.warnings = warns
	source := f.configFile
	if f.propsFile != "" {
		source = f.propsFile
	}
	changed := cmd.Flags().Changed
	pick := func(flag, fromFile, flagValue string) string {
		if fromFile != "" && !changed(flag) {
			return fromFile
		}
		return flagValue
	}
	bcfg.BrokerName = pick("name", file.Name, f.name)
	bcfg.ClusterName = pick("cluster", file.Cluster, f.cluster)
	bcfg.ListenAddr = pick("listen", file.Listen, f.listen)
	bcfg.BrokerIP = pick("broker-ip", file.BrokerIP, f.brokerIP)
	bcfg.NamesrvAddrs = splitAddrs(f.namesrv)
	if len(file.Namesrv) > 0 && !changed("namesrv") {
		bcfg.NamesrvAddrs = file.Namesrv
	}
	dir := pick("store", file.Store.Dir, f.storeDir)
	if dir == "" {
		return out, errors.New("--store DIR is required (broker.conf: storePathRootDir)")
	}
	scfg, err := f.storeConfig(dir, pick, file.Store)
	if err != nil {
		return out, err
	}
	if v := file.Store.FlushLeastPages; v != nil {
		scfg.CommitLog.Flush.LeastPages = int(*v)
	}
	if v := file.Store.MessageIndexEnable; v != nil {
		scfg.MessageIndexEnable = *v
	}
	if v := file.Store.MaxHashSlotNum; v != nil {
		scfg.Index.MaxHashSlots = int(*v)
	}
	if v := file.Store.MaxIndexNum; v != nil {
		scfg.Index.MaxIndexNum = int(*v)
	}
	rw, err := f.retention.apply(&scfg, changed, file.Store.Retention)
	if err != nil {
		return out, fmt.Errorf("retention: %w", err)
	}
	out.warnings = append(out.warnings, rw...)
	if err := applyFileTunables(&bcfg, file); err != nil {
		return out, fmt.Errorf("%s: %w", source, err)
	}
	if err := file.Timer.apply(&bcfg); err != nil {
		return out, fmt.Errorf("%s: %w", source, err)
	}
	file.Reply.apply(&bcfg)
	if file.HAListen == "" && file.HAListenPort != nil {
		host, _, err := net.SplitHostPort(bcfg.ListenAddr)
		if err != nil {
			return out, fmt.Errorf("listen %q: %w", bcfg.ListenAddr, err)
		}
		file.HAListen = net.JoinHostPort(host, strconv.FormatInt(*file.HAListenPort, 10))
	}
	if err := f.ha.apply(&bcfg, changed, file); err != nil {
		return out, err
	}
	if bcfg.Remoting.TLS, err = f.tls.server(changed, file.TLS); err != nil {
		return out, err
	}
	if out.tlsClient, out.tlsEnable, err = f.tls.clientSpec(changed, file.TLS); err != nil {
		return out, err
	}
	if bcfg.NamesrvTLS, err = f.tls.client(changed, file.TLS); err != nil {
		return out, err
	}
	out.aclFile = pick("acl", file.ACLFile, f.acl.file)
	out.metricsListen = pick("metrics-listen", file.Metrics.MetricsListen, f.metricsListen)
	if out.grpcListen, err = file.GRPC.resolve(changed, f.grpcListen, bcfg.ListenAddr); err != nil {
		return out, err
	}
	if file.TraceTopicEnable != nil && *file.TraceTopicEnable {
		out.traceTopic = rmqTraceTopic
		if file.MsgTraceTopicName != "" {
			out.traceTopic = file.MsgTraceTopicName
		}
	}
	out.bcfg, out.scfg = bcfg, scfg
	return out, nil
}

// storeConfig is the broker's store under dir from the flags and the
// config file's store section (a flag given on the command line wins:
// pick), built as the harness builds its cells' stores (storeconfig.New).
func (f *brokerFlags) storeConfig(dir string, pick func(flag, fromFile, flagValue string) string, fs brokerFileStore) (store.Config, error) {
	spec := storeconfig.Spec{WritePath: pick("write-path", fs.WritePath, f.writePath), Flush: pick("flush", fs.Flush, f.flushKind)}
	seg, segErr := bytesize.Parse(pick("segment-size", fs.SegmentSize, f.segmentSize))
	spec.SegmentSize = seg
	var ivErr error
	if fs.FlushInterval != "" {
		d, err := time.ParseDuration(fs.FlushInterval)
		if err != nil || d <= 0 {
			ivErr = fmt.Errorf("--config %s: store.flushInterval %q", f.configFile, fs.FlushInterval)
		}
		spec.FlushInterval = d
	}
	cfg, err := storeconfig.New(dir, spec)
	var fe *storeconfig.FieldError
	switch {
	case errors.As(err, &fe):
		return store.Config{}, fmt.Errorf("--%s: %w", fe.Field, fe.Err)
	case err != nil:
		return store.Config{}, err
	case segErr != nil || seg <= 0:
		return store.Config{}, fmt.Errorf("--segment-size: want a positive size such as 1GiB (%v)", segErr)
	case ivErr != nil:
		return store.Config{}, ivErr
	}
	return cfg, nil
}

// applyFileTunables copies the file's broker tunables onto cfg.
func applyFileTunables(cfg *broker.Config, file brokerFile) error {
	if file.AutoCreateTopic != nil {
		cfg.AutoCreateTopic = *file.AutoCreateTopic
	}
	if file.DefaultTopicQueueNums != nil {
		cfg.DefaultTopicQueueNums = *file.DefaultTopicQueueNums
	}
	if file.LongPolling != nil {
		cfg.LongPolling = *file.LongPolling
	}
	if file.SendWorkers != nil {
		cfg.SendWorkers = *file.SendWorkers
	}
	if file.SendQueueSize != nil {
		cfg.SendQueueSize = *file.SendQueueSize
	}
	if file.MaxReconsumeTimes != nil {
		cfg.MaxReconsumeTimes = *file.MaxReconsumeTimes
	}
	if file.TransactionCheckMax != nil {
		cfg.TransactionCheckMax = *file.TransactionCheckMax
	}
	for _, d := range []struct {
		key string
		val string
		dst *time.Duration
	}{
		{"maxSuspend", file.MaxSuspend, &cfg.MaxSuspend},
		{"sendQueueMaxWait", file.SendQueueMaxWait, &cfg.SendQueueMaxWait},
		{"registerInterval", file.RegisterInterval, &cfg.RegisterInterval},
		{"transactionCheckInterval", file.TransactionCheckInterval, &cfg.TransactionCheckInterval},
		{"transactionTimeOut", file.TransactionTimeOut, &cfg.TransactionTimeout},
	} {
		if d.val == "" {
			continue
		}
		v, err := time.ParseDuration(d.val)
		if err != nil || v <= 0 {
			return fmt.Errorf("%s %q: want a positive duration such as 200ms", d.key, d.val)
		}
		*d.dst = v
	}
	if file.DelayLevels != "" {
		levels, err := broker.ParseDelayLevels(file.DelayLevels)
		if err != nil {
			return fmt.Errorf("delayLevels: %w", err)
		}
		cfg.DelayLevels = levels
	}
	return nil
}

// runBroker runs a broker until ctx is cancelled (SIGINT/SIGTERM), then
// stops it cleanly. A non-empty setup.metricsListen serves its Prometheus
// metrics.
func runBroker(ctx context.Context, setup brokerSetup, logLevel string) error {
	bcfg, scfg := setup.bcfg, setup.scfg
	log, err := newLogger(logLevel)
	if err != nil {
		return err
	}
	bcfg.Logger = log
	scfg.Logger = log.With("component", "store")
	if len(bcfg.NamesrvAddrs) == 0 {
		log.Warn("no name server given: clients can only reach this broker directly")
	}
	bcfg.TraceTopic = setup.traceTopic
	b, err := broker.New(bcfg, broker.OpenStore(scfg, bcfg.DelayLevels))
	if err != nil {
		return err
	}
	metrics, err := brokerMetrics(setup.metricsListen, b, log)
	if err != nil {
		return err
	}
	if err := b.Start(ctx); err != nil {
		metrics.stop()
		return err
	}
	log.Info("broker serving", "addr", b.Addr(), "cluster", bcfg.ClusterName, "name", bcfg.BrokerName, "id", bcfg.BrokerID,
		"role", bcfg.Role, "tls", bcfg.Remoting.TLS.Mode, "store", scfg.Root, "writePath", scfg.CommitLog.Path,
		"flush", scfg.CommitLog.Flush.Kind, "segmentSize", scfg.CommitLog.SegmentSize,
		"deleteWhen", scfg.DeleteWhen, "fileReservedTime", scfg.FileReservedTime)
	grpcSrv, err := startGRPC(ctx, setup.grpcListen, b, log)
	if err != nil {
		metrics.stop()
		_ = b.Shutdown(context.WithoutCancel(ctx))
		return err
	}
	<-ctx.Done()
	metrics.stop()
	if grpcSrv != nil {
		gctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		_ = grpcSrv.Shutdown(gctx)
		cancel()
	}
	st := b.Stats()
	log.Info("broker stopping", "badRequests", st.BadRequests, "badInputCloses", st.BadInputCloses)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := b.Shutdown(sctx); err != nil {
		return fmt.Errorf("broker: shutdown: %w", err)
	}
	return nil
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

const rmqConf = "testdata/rocketmq-conf"

// resolveArgs parses args as the broker command's and resolves them.
func resolveArgs(t *testing.T, args ...string) (brokerSetup, error) {
	t.Helper()
	cmd, f := brokerCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	return resolveBroker(cmd, *f)
}

func mustResolve(t *testing.T, args ...string) brokerSetup {
	t.Helper()
	s, err := resolveArgs(t, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return s
}

// writeConf writes a broker.conf into a temporary directory.
func writeConf(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The conf files of RocketMQ's distribution (2m-2s-sync, 2m-noslave) and an
// operator's fuller broker.conf map onto the broker and store configs.
func TestBrokerConfRocketMQSamples(t *testing.T) {
	store := t.TempDir()
	for _, tc := range []struct {
		file  string
		id    int64
		role  broker.BrokerRole
		check func(t *testing.T, s brokerSetup)
	}{
		{file: "2m-2s-sync/broker-a.properties", id: 0, role: broker.SyncMaster},
		{file: "2m-2s-sync/broker-a-s.properties", id: 1, role: broker.Slave},
		{file: "2m-noslave/broker-a.properties", id: 0, role: broker.AsyncMaster},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := mustResolve(t, "-c", filepath.Join(rmqConf, tc.file), "--store", store)
			b, st := s.bcfg, s.scfg
			if b.ClusterName != "DefaultCluster" || b.BrokerName != "broker-a" || b.BrokerID != tc.id || b.Role != tc.role {
				t.Fatalf("identity: cluster %q name %q id %d role %s", b.ClusterName, b.BrokerName, b.BrokerID, b.Role)
			}
			if st.CommitLog.Flush.Kind != flush.Async || st.DeleteWhen != "04" || st.FileReservedTime != 48*time.Hour {
				t.Fatalf("store: flush %s deleteWhen %q reserved %v", st.CommitLog.Flush.Kind, st.DeleteWhen, st.FileReservedTime)
			}
			if b.ListenAddr != "127.0.0.1:10911" || st.Root != store || len(s.warnings) != 0 {
				t.Fatalf("listen %s root %s warnings %q", b.ListenAddr, st.Root, s.warnings)
			}
		})
	}

	t.Run("broker.conf", func(t *testing.T) {
		s := mustResolve(t, "-c", filepath.Join(rmqConf, "broker.conf"))
		b, st := s.bcfg, s.scfg
		if b.ClusterName != "RaftCluster" || b.BrokerName != "broker-n0" || b.BrokerID != 0 || b.Role != broker.SyncMaster ||
			b.BrokerIP != "192.168.1.20" || b.ListenAddr != "0.0.0.0:30911" || b.HA.ListenAddr != "0.0.0.0:30912" ||
			!slices.Equal(b.NamesrvAddrs, []string{"192.168.1.10:9876", "192.168.1.11:9876"}) {
			t.Fatalf("broker: %+v", b)
		}
		if st.Root != "/data/rocketmq/store-n0" || st.CommitLog.SegmentSize != 64<<20 || st.CommitLog.Flush.Kind != flush.Sync ||
			st.CommitLog.Flush.Interval != 200*time.Millisecond || st.CommitLog.Flush.LeastPages != 8 || st.CommitLog.Path != iopath.Pool {
			t.Fatalf("store: root %s seg %d flush %+v path %s", st.Root, st.CommitLog.SegmentSize, st.CommitLog.Flush, st.CommitLog.Path)
		}
		if st.DeleteWhen != "01;02;03" || st.FileReservedTime != 24*time.Hour || st.DiskMaxUsedSpaceRatio != 0.70 ||
			st.DiskSpaceCleanForciblyRatio != 0.85 || st.DiskSpaceWarningLevelRatio != 0.90 {
			t.Fatalf("retention: %q %v %v %v %v", st.DeleteWhen, st.FileReservedTime, st.DiskMaxUsedSpaceRatio,
				st.DiskSpaceCleanForciblyRatio, st.DiskSpaceWarningLevelRatio)
		}
		if b.AutoCreateTopic || b.DefaultTopicQueueNums != 16 || b.SendWorkers != 8 || !b.SlaveReadEnable || !b.TimerEnable ||
			s.traceTopic != "RMQ_SYS_TRACE_TOPIC" || s.aclFile != "" || b.Remoting.TLS.Mode != remoting.TLSDisabled {
			t.Fatalf("features: %+v trace %q acl %q", b, s.traceTopic, s.aclFile)
		}
		// Every unknown key is named, with its line.
		if len(s.warnings) != 2 || !strings.Contains(s.warnings[0], "line 34: unknown key brokerPermission=6") ||
			!strings.Contains(s.warnings[1], "unknown key maxMessageSize=4194304") {
			t.Fatalf("warnings %q", s.warnings)
		}
	})
}

// Flags given on the command line win over the file, the file over the
// defaults.
func TestBrokerConfPrecedence(t *testing.T) {
	s := mustResolve(t, "-c", filepath.Join(rmqConf, "broker.conf"), "--name", "from-flag", "--flush", "group",
		"--listen", "127.0.0.1:0", "--file-reserved-time", "6", "--disk-max-used-space-ratio", "60", "--role", "ASYNC_MASTER")
	b, st := s.bcfg, s.scfg
	if b.BrokerName != "from-flag" || st.CommitLog.Flush.Kind != flush.Group || b.ListenAddr != "127.0.0.1:0" ||
		st.FileReservedTime != 6*time.Hour || st.DiskMaxUsedSpaceRatio != 0.60 || b.Role != broker.AsyncMaster {
		t.Fatalf("flags lost: name %q flush %s listen %s reserved %v ratio %v role %s", b.BrokerName, st.CommitLog.Flush.Kind,
			b.ListenAddr, st.FileReservedTime, st.DiskMaxUsedSpaceRatio, b.Role)
	}
	if b.ClusterName != "RaftCluster" || st.DeleteWhen != "01;02;03" || st.CommitLog.SegmentSize != 64<<20 {
		t.Fatalf("file lost: cluster %q deleteWhen %q seg %d", b.ClusterName, st.DeleteWhen, st.CommitLog.SegmentSize)
	}
	if b.HA.ListenAddr != "127.0.0.1:30912" { // haListenPort on the listen host
		t.Fatalf("ha listen %s", b.HA.ListenAddr)
	}
	// The brokerlab extras: writePath, flushDiskType=RMQGROUP, retainBytes.
	conf := writeConf(t, "b.conf", "storePathRootDir=/s\nwritePath=direct\nflushDiskType=RMQGROUP\nretainBytes=1GiB\ncleanResourceInterval=500\n")
	s = mustResolve(t, "-c", conf)
	if st := s.scfg; st.CommitLog.Path != iopath.Direct || st.CommitLog.Flush.Kind != flush.RMQGroup ||
		st.RetainBytes != 1<<30 || st.CleanInterval != 500*time.Millisecond {
		t.Fatalf("extras: path %s flush %s retain %d clean %v", st.CommitLog.Path, st.CommitLog.Flush.Kind, st.RetainBytes, st.CleanInterval)
	}
	// flushDiskType=DSYNC: overlapped durable writes (a write path with one).
	conf = writeConf(t, "d.conf", "storePathRootDir=/s\nwritePath=pwrite\nflushDiskType=DSYNC\n")
	if st := mustResolve(t, "-c", conf).scfg; st.CommitLog.Path != iopath.Pwrite || st.CommitLog.Flush.Kind != flush.DSync {
		t.Fatalf("DSYNC: path %s flush %s", st.CommitLog.Path, st.CommitLog.Flush.Kind)
	}
}

// The YAML --config takes the retention and index keys too (RocketMQ's names
// and units, in the store section).
func TestBrokerYAMLRetentionKeys(t *testing.T) {
	y := writeConf(t, "b.yaml", "store:\n  dir: /s\n  deleteWhen: \"01;02\"\n  fileReservedTime: 12\n  diskSpaceCleanForciblyRatio: 80\n"+
		"  cleanResourceInterval: 250\n  retainBytes: 2GiB\n  maxHashSlotNum: 100\n  maxIndexNum: 400\n  messageIndexEnable: false\n")
	st := mustResolve(t, "--config", y).scfg
	if st.DeleteWhen != "01;02" || st.FileReservedTime != 12*time.Hour || st.DiskSpaceCleanForciblyRatio != 0.80 ||
		st.CleanInterval != 250*time.Millisecond || st.RetainBytes != 2<<30 || st.Index.MaxHashSlots != 100 ||
		st.Index.MaxIndexNum != 400 || st.MessageIndexEnable {
		t.Fatalf("store config: %+v", st)
	}
}

func TestBrokerConfBadValues(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"brokerId=one", "brokerId"},
		{"flushDiskType=SOMETIMES", "flushDiskType"},
		{"transientStorePoolEnable=true\nwritePath=direct", "transientStorePoolEnable"},
		{"storePathRootDir=/a\nstorePathCommitLog=/b/commitlog", "storePathCommitLog"},
		{"fileReservedTime=0", "fileReservedTime"},
		{"deleteWhen=25", "deleteWhen"},
		{"slaveReadEnable=yes", "slaveReadEnable"},
		{"mapedFileSizeCommitLog=1024\nmappedFileSizeCommitLog=2048", "disagree"},
		{"diskSpaceCleanForciblyRatio=85\ndiskSpaceWarningLevelRatio=40", "diskSpaceCleanForciblyRatio"},
		{"tls.server.mode=sometimes", "tls"},
		{"brokerRole=SLAVE\nbrokerId=0", "SLAVE"},
		{"name=\\u12", "syntax"},
	} {
		conf := writeConf(t, "bad.conf", tc.body)
		_, err := resolveArgs(t, "-c", conf, "--store", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want one naming %s", tc.body, err, tc.want)
		}
	}
	yaml := writeConf(t, "b.yaml", "name: x\n")
	if _, err := resolveArgs(t, "-c", filepath.Join(rmqConf, "broker.conf"), "--config", yaml); err == nil {
		t.Error("--config and -c together were accepted")
	}
}

// The ratios are clamped into RocketMQ's ranges, with a warning.
func TestBrokerConfRatioClamp(t *testing.T) {
	conf := writeConf(t, "c.conf", "diskMaxUsedSpaceRatio=99\ndiskSpaceWarningLevelRatio=20\ndiskSpaceCleanForciblyRatio=10\n")
	s := mustResolve(t, "-c", conf, "--store", t.TempDir())
	if st := s.scfg; st.DiskMaxUsedSpaceRatio != 0.95 || st.DiskSpaceWarningLevelRatio != 0.35 || st.DiskSpaceCleanForciblyRatio != 0.30 {
		t.Fatalf("ratios %v %v %v", st.DiskMaxUsedSpaceRatio, st.DiskSpaceWarningLevelRatio, st.DiskSpaceCleanForciblyRatio)
	}
	if len(s.warnings) != 3 || !strings.Contains(s.warnings[0], "diskMaxUsedSpaceRatio=99 clamped to 95") {
		t.Fatalf("warnings %q", s.warnings)
	}
}

// aclEnable=true reads plain_acl.yml beside the conf file (RocketMQ's
// conf/plain_acl.yml), or aclFile; --acl wins.
func TestBrokerConfACL(t *testing.T) {
	conf := writeConf(t, "broker.conf", "aclEnable=true\n")
	s := mustResolve(t, "-c", conf, "--store", t.TempDir())
	if want := filepath.Join(filepath.Dir(conf), "plain_acl.yml"); s.aclFile != want {
		t.Fatalf("acl file %q, want %q", s.aclFile, want)
	}
	conf = writeConf(t, "broker.conf", "aclEnable=true\naclFile=/etc/acl.yml\n")
	if s = mustResolve(t, "-c", conf, "--store", t.TempDir()); s.aclFile != "/etc/acl.yml" {
		t.Fatalf("acl file %q", s.aclFile)
	}
	if s = mustResolve(t, "-c", conf, "--store", t.TempDir(), "--acl", "/x.yml"); s.aclFile != "/x.yml" {
		t.Fatalf("acl file %q", s.aclFile)
	}
	conf = writeConf(t, "broker.conf", "aclEnable=false\naclFile=/etc/acl.yml\n")
	if s = mustResolve(t, "-c", conf, "--store", t.TempDir()); s.aclFile != "" || len(s.warnings) != 0 {
		t.Fatalf("acl off: file %q warnings %q", s.aclFile, s.warnings)
	}
}

// --print-config writes a broker.conf that -c reads back, without unknown
// keys, to the same configuration.
func TestBrokerPrintConfigRoundTrip(t *testing.T) {
	store := t.TempDir()
	for _, args := range [][]string{
		{"-c", filepath.Join(rmqConf, "broker.conf")},
		{"-c", filepath.Join(rmqConf, "2m-2s-sync/broker-a-s.properties"), "--store", store, "--retain-bytes", "8MiB", "--tls-enable", "--tls-verify-server"},
		{"--store", store, "--write-path", "pwrite", "--delete-when", "01;13", "--clean-interval", "2s", "--disk-space-warning-level-ratio", "88"},
	} {
		var out bytes.Buffer
		root := newRoot()
		root.SetOut(&out)
		root.SetArgs(append([]string{"broker", "--print-config"}, args...))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		first := mustResolve(t, args...)
		if !strings.HasPrefix(out.String(), "# brokerlab broker: resolved configuration") {
			t.Fatalf("output:\n%s", out.String())
		}
		printed := writeConf(t, "printed.conf", out.String())
		again := mustResolve(t, "-c", printed)
		if len(again.warnings) != 0 {
			t.Fatalf("%v: printed keys not understood: %q", args, again.warnings)
		}
		if a, b := brokerProps(first), brokerProps(again); !reflect.DeepEqual(a, b) {
			t.Fatalf("%v: round trip differs:\n%v\n%v", args, a, b)
		}
		if fc, ac := first.scfg.CommitLog, again.scfg.CommitLog; fc.SegmentSize != ac.SegmentSize || fc.Path != ac.Path ||
			fc.Flush.Kind != ac.Flush.Kind || fc.Flush.Interval != ac.Flush.Interval || fc.Flush.LeastPages != ac.Flush.LeastPages ||
			first.bcfg.ListenAddr != again.bcfg.ListenAddr ||
			first.scfg.RetainBytes != again.scfg.RetainBytes || first.scfg.DeleteWhen != again.scfg.DeleteWhen {
			t.Fatalf("%v: configs differ", args)
		}
	}
}

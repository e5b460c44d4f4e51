package result

import (
	"encoding/json"
	"time"
)

// Unknown is recorded for any machine fact that could not be read.
const Unknown = "unknown"

// Run statuses (Manifest.Status), after fio and ClickBench: failed or
// partial runs are kept, labelled, instead of being deleted.
const (
	StatusRunning     = "running"
	StatusOK          = "ok"
	StatusInterrupted = "interrupted"
	StatusAborted     = "aborted"
)

// Manifest is the content of manifest.json: everything needed to judge and
// reproduce a run. Facts that could not be read are Unknown.
type Manifest struct {
	Schema     int    `json:"schema"`
	Experiment string `json:"experiment,omitempty"`
	Status     string `json:"status"`

	Git   GitInfo   `json:"git"`
	Build BuildInfo `json:"build"`
	Host  HostInfo  `json:"host"`
	Store StoreInfo `json:"store"`
	VM    VMInfo    `json:"vm"`
	Go    GoInfo    `json:"go"`

	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`

	// Mode is quick, reference or "" (the experiment file's own values).
	Mode string `json:"mode,omitempty"`
	// SourceDiff names the file beside the manifest holding the
	// uncommitted changes of a run made with --allow-dirty.
	SourceDiff string `json:"source_diff,omitempty"`

	// Config is the fully resolved experiment configuration.
	Config  json.RawMessage `json:"config"`
	Seed    int64           `json:"seed"`
	Command []string        `json:"command"`

	Notes    []string `json:"notes,omitempty"`
	Warnings []string `json:"warnings,omitempty"` // e.g. store on tmpfs
}

// GitInfo identifies the code that ran. Source says where SHA came from:
// "buildinfo" (the binary's VCS stamp, preferred), "git" (git rev-parse in
// the working directory, for a binary without a stamp) or Unknown.
type GitInfo struct {
	SHA    string `json:"sha"`
	Dirty  bool   `json:"dirty"`
	Source string `json:"source"`
}

// BuildInfo is the binary's own VCS stamp (runtime/debug.ReadBuildInfo:
// vcs.revision, vcs.time, vcs.modified), which describes the code that ran
// even when the working directory is another tree. Revision is Unknown for
// a binary built without VCS information (go run, go test).
type BuildInfo struct {
	Revision string `json:"vcs_revision"`
	Time     string `json:"vcs_time,omitempty"`
	Modified bool   `json:"vcs_modified"`
	VCS      string `json:"vcs,omitempty"`
}

// HostInfo describes the machine.
type HostInfo struct {
	Hostname      string `json:"hostname"`
	Kernel        string `json:"kernel"` // uname -r
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	CPUModel      string `json:"cpu_model"`
	CPUCount      int    `json:"cpu_count"`
	MemTotalBytes int64  `json:"mem_total_bytes"` // 0 when unknown
	THP           string `json:"thp"`             // transparent_hugepage/enabled
}

// StoreInfo describes the file system and device holding the store
// directory (the broker's data, which the experiment measures).
type StoreInfo struct {
	Dir          string `json:"dir"`
	MountPoint   string `json:"mount_point"`
	FSType       string `json:"fs_type"`
	MountOptions string `json:"mount_options"` // per-mount options
	SuperOptions string `json:"super_options"` // file-system (super block) options
	Device       string `json:"device"`        // mount source, e.g. /dev/nvme0n1p2
	BlockDevice  string `json:"block_device"`  // whole-disk sysfs name, e.g. nvme0n1
	Model        string `json:"model"`
	Rotational   string `json:"rotational"`
	Scheduler    string `json:"scheduler"`
	WriteCache   string `json:"write_cache"`
	LogicalBlock string `json:"logical_block_size"`
	ReadAheadKB  string `json:"read_ahead_kb"`
}

// VMInfo holds the writeback sysctls (/proc/sys/vm), verbatim.
type VMInfo struct {
	DirtyRatio              string `json:"dirty_ratio"`
	DirtyBackgroundRatio    string `json:"dirty_background_ratio"`
	DirtyBytes              string `json:"dirty_bytes"`
	DirtyBackgroundBytes    string `json:"dirty_background_bytes"`
	DirtyExpireCentisecs    string `json:"dirty_expire_centisecs"`
	DirtyWritebackCentisecs string `json:"dirty_writeback_centisecs"`
}

// GoInfo describes the toolchain and the binary's modules.
type GoInfo struct {
	Version    string   `json:"version"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	GOGC       string   `json:"gogc"`
	MainModule string   `json:"main_module"`
	Modules    []Module `json:"modules,omitempty"`
}

// Module is one dependency from runtime/debug.ReadBuildInfo.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum,omitempty"`
}

// Finish stamps the end time (UTC) and the final status.
func (m *Manifest) Finish(status string, at time.Time) {
	t := at.UTC()
	m.Finished = &t
	m.Status = status
}

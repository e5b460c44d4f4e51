package experiments

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// ErrDirtyTree is returned when a run would write into the repository's
// results/ from a source tree with uncommitted changes (see --allow-dirty).
var ErrDirtyTree = errors.New("experiments: refusing to write into results/ from a modified source tree (commit first, or pass --allow-dirty to save the diff beside the run)")

// ErrReplay marks a run directory that cannot be replayed.
var ErrReplay = errors.New("experiments: cannot replay")

// SourceDiffFile is the file beside the manifest that holds the uncommitted
// changes of a run made with --allow-dirty.
const SourceDiffFile = "source.diff"

// sourceState answers where the code comes from: git in the working
// directory and the binary's build info (both injectable for tests).
type sourceState struct {
	git       func(args ...string) (string, error)
	buildInfo func() (*debug.BuildInfo, bool)
}

func defaultSourceState() sourceState {
	return sourceState{git: gitOutput, buildInfo: debug.ReadBuildInfo}
}

// gitOutput runs git in the working directory, bounded to 10 s (a diff
// can be long).
func gitOutput(args ...string) (string, error) { return result.GitOutput(10*time.Second, args...) }

// intoRepoResults reports whether outRoot is the results/ directory at the
// top of the git work tree the command runs in.
func (s sourceState) intoRepoResults(outRoot string) bool {
	top, err := s.git("rev-parse", "--show-toplevel")
	if err != nil || strings.TrimSpace(top) == "" {
		return false
	}
	want, err1 := filepath.EvalSymlinks(filepath.Join(strings.TrimSpace(top), "results"))
	abs, err2 := filepath.Abs(outRoot)
	if err1 != nil || err2 != nil {
		return false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs == want
}

// modified reports whether the code is not exactly a commit: the binary's
// vcs.modified stamp when it has one, otherwise git status of the tree
// (results/ itself excluded).
func (s sourceState) modified() (bool, string) {
	if bi, ok := s.buildInfo(); ok && bi != nil {
		for _, st := range bi.Settings {
			if st.Key == "vcs.modified" {
				return st.Value == "true", "build info vcs.modified=" + st.Value
			}
		}
	}
	out, err := s.git("status", "--porcelain", "--", ".", ":(exclude)results")
	if err != nil {
		return false, "no git and no build info"
	}
	return strings.TrimSpace(out) != "", "git status"
}

// diff is the uncommitted change set: git diff against HEAD and the list of
// untracked files (results/ excluded).
func (s sourceState) diff() []byte {
	var b bytes.Buffer
	if st, err := s.git("status", "--porcelain", "--", ".", ":(exclude)results"); err == nil {
		b.WriteString("# git status --porcelain (results/ excluded)\n")
		for _, l := range strings.Split(strings.TrimRight(st, "\n"), "\n") {
			if l != "" {
				b.WriteString("# " + l + "\n")
			}
		}
	}
	if d, err := s.git("diff", "HEAD", "--", ".", ":(exclude)results"); err == nil {
		b.WriteString(d)
	}
	return b.Bytes()
}

// checkSource refuses a modified tree writing into the repository's
// results/ unless allowDirty; with allowDirty it returns the diff to save.
func (s sourceState) checkSource(outRoot string, allowDirty bool) ([]byte, error) {
	if !s.intoRepoResults(outRoot) {
		return nil, nil
	}
	mod, how := s.modified()
	if !mod {
		return nil, nil
	}
	if !allowDirty {
		return nil, fmt.Errorf("%w [%s]", ErrDirtyTree, how)
	}
	return s.diff(), nil
}

// LoadReplay reads a run directory's manifest and returns the experiment
// exactly as that run resolved it (cells, repetitions, durations, seed,
// pairings), ready to Run with Options.Replay.
func LoadReplay(runDir string) (*Experiment, result.Manifest, error) {
	m, err := result.ReadManifest(filepath.Join(runDir, result.ManifestFile))
	if err != nil {
		return nil, m, fmt.Errorf("%w: %w", ErrReplay, err)
	}
	if len(m.Config) == 0 || string(m.Config) == "null" {
		return nil, m, fmt.Errorf("%w: %s records no resolved config", ErrReplay, runDir)
	}
	dec := json.NewDecoder(bytes.NewReader(m.Config))
	dec.DisallowUnknownFields()
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		return nil, m, fmt.Errorf("%w: %s: config: %w", ErrReplay, runDir, err)
	}
	// A recorded config has every field it knew set; fields added since
	// take their defaults (what that run had without naming them).
	e.fillDefaults()
	if err := e.Validate(); err != nil {
		return nil, m, fmt.Errorf("%w: %s: %w", ErrReplay, runDir, err)
	}
	return &e, m, nil
}

// writeSourceDiff saves the diff beside the manifest.
func writeSourceDiff(runDir string, diff []byte) error {
	return result.WriteFileAtomic(filepath.Join(runDir, SourceDiffFile), diff, 0o644)
}

// ErrReplayRevision marks a replay by a binary of another revision than the
// recorded run's, without --at-head.
var ErrReplayRevision = fmt.Errorf("%w: another revision", ErrReplay)

// binaryRevision is this binary's vcs.revision ("" without a VCS stamp:
// go run, go test).
func binaryRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi == nil {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return ""
}

// ReplayRevision checks that this binary is the revision the recorded run
// was made by (its manifest's build stamp, else its commit). A different or
// unknown revision is refused unless atHead, and then the returned note
// (for the new manifest's warnings) says which revision ran instead.
func ReplayRevision(m result.Manifest, atHead bool) (string, error) {
	return replayRevision(m, atHead, binaryRevision())
}

func replayRevision(m result.Manifest, atHead bool, now string) (string, error) {
	was := m.Build.Revision
	if was == "" || was == result.Unknown {
		was = m.Git.SHA
	}
	if was != "" && was != result.Unknown && was == now {
		return "", nil
	}
	was, now = cmp.Or(was, result.Unknown), cmp.Or(now, result.Unknown+" (a binary without a VCS stamp)")
	if !atHead {
		return "", fmt.Errorf("%w: the run was made by revision %s, this binary is %s: build that revision, or pass --at-head to replay its config with this code",
			ErrReplayRevision, was, now)
	}
	return fmt.Sprintf("replay AT HEAD (--at-head): the recorded run was made by revision %s; this replay ran revision %s", was, now), nil
}

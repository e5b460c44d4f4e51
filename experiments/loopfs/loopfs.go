// Package loopfs makes the file system an experiment variable: it creates
// a sparse image file, attaches it to a loop device, formats it as ext4, xfs
// or btrfs and mounts it, so that a store can run on each file system on the
// same underlying disk. It needs root and the file system's mkfs tool; when
// either is missing, Check and Mount return an error wrapping ErrUnavailable
// whose text is the reason to report (or skip with).
//
// A Mount is undone by Close: unmount (lazily if the file system stays
// busy), detach the loop device, remove the image and the mount point.
// Close is idempotent and safe to call from another goroutine (a signal
// handler), so a harness can call it on exit and on Ctrl-C alike.
//
// The mkfs and mount options are part of the experiment's manifest
// (Mount.Manifest).
package loopfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Types are the supported file systems.
var Types = []string{"ext4", "xfs", "btrfs"}

// ErrUnavailable is wrapped when the machine cannot make the mount (not
// root, a tool missing, no loop device).
var ErrUnavailable = errors.New("loopfs: unavailable")

// ErrUnknownType is returned for a file system outside Types.
var ErrUnknownType = errors.New("loopfs: unknown file system type")

// Spec describes one file system to make.
type Spec struct {
	// Type is ext4, xfs or btrfs.
	Type string
	// Size is the image size in bytes (sparse: only written blocks use
	// space on the host).
	Size int64
	// MkfsOptions replace DefaultMkfsOptions(Type) when non-nil.
	MkfsOptions []string
	// MountOptions replace DefaultMountOptions(Type) when non-empty.
	MountOptions string
}

// DefaultMkfsOptions are the options mkfs gets when Spec.MkfsOptions is
// nil: forced, quiet, and for ext4 with its inode tables and journal
// initialised at mkfs time (not by a background thread during the run).
func DefaultMkfsOptions(typ string) []string {
	switch typ {
	case "ext4":
		return []string{"-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"}
	case "xfs":
		return []string{"-f", "-q"}
	case "btrfs":
		return []string{"-f", "-q"}
	}
	return nil
}

// DefaultMountOptions are the mount options when Spec.MountOptions is
// empty.
func DefaultMountOptions(typ string) string { return "noatime" }

func mkfsTool(typ string) string { return "mkfs." + typ }

// Check reports whether a file system of type typ can be mounted here.
func Check(typ string) error {
	known := false
	for _, t := range Types {
		known = known || t == typ
	}
	if !known {
		return fmt.Errorf("%w %q (want one of %s)", ErrUnknownType, typ, strings.Join(Types, ", "))
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: mounting a loop device needs root (uid %d)", ErrUnavailable, os.Geteuid())
	}
	for _, tool := range []string{"losetup", "mount", "umount", mkfsTool(typ)} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found (install %s)", ErrUnavailable, tool, packageOf(tool))
		}
	}
	return nil
}

// packageOf names the Debian package that provides tool.
func packageOf(tool string) string {
	switch tool {
	case "mkfs.ext4":
		return "e2fsprogs"
	case "mkfs.xfs":
		return "xfsprogs"
	case "mkfs.btrfs":
		return "btrfs-progs"
	case "losetup", "mount", "umount":
		return "mount"
	}
	return tool
}

// Mount is a mounted loop file system.
type Mount struct {
	// Dir is the mount point: put the store under it.
	Dir string
	// Device is the loop device, Image the sparse file behind it.
	Device, Image string
	Spec          Spec

	mu     sync.Mutex
	closed bool
}

// Manifest returns what an experiment's manifest records about the mount.
func (m *Mount) Manifest() map[string]string {
	return map[string]string{
		"fs":            m.Spec.Type,
		"fs_size":       fmt.Sprint(m.Spec.Size),
		"mkfs_options":  strings.Join(m.Spec.MkfsOptions, " "),
		"mount_options": m.Spec.MountOptions,
		"loop_device":   m.Device,
		"image":         m.Image,
	}
}

// New makes and mounts the file system under workDir (the image is
// workDir/<type>.img, the mount point workDir/<type>). Everything made is
// removed again if a step fails.
func New(ctx context.Context, workDir string, spec Spec) (_ *Mount, err error) {
	if err := Check(spec.Type); err != nil {
		return nil, err
	}
	if spec.Size < 64<<20 {
		return nil, fmt.Errorf("loopfs: size %d: want at least 64 MiB", spec.Size)
	}
	if spec.MkfsOptions == nil {
		spec.MkfsOptions = DefaultMkfsOptions(spec.Type)
	}
	if spec.MountOptions == "" {
		spec.MountOptions = DefaultMountOptions(spec.Type)
	}
	m := &Mount{Spec: spec, Image: filepath.Join(workDir, spec.Type+".img"), Dir: filepath.Join(workDir, spec.Type)}
	defer func() {
		if err != nil {
			err = errors.Join(err, m.Close())
		}
	}()
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return m, fmt.Errorf("loopfs: %w", err)
	}
	f, err := os.OpenFile(m.Image, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return m, fmt.Errorf("loopfs: create image: %w", err)
	}
	terr := f.Truncate(spec.Size)
	if cerr := f.Close(); terr == nil {
		terr = cerr
	}
	if terr != nil {
		return m, fmt.Errorf("loopfs: size image: %w", terr)
	}
	out, err := run(ctx, "losetup", "--find", "--show", m.Image)
	if err != nil {
		return m, fmt.Errorf("%w: no loop device: %w", ErrUnavailable, err)
	}
	m.Device = strings.TrimSpace(out)
	if _, err := run(ctx, mkfsTool(spec.Type), append(append([]string(nil), spec.MkfsOptions...), m.Device)...); err != nil {
		return m, fmt.Errorf("loopfs: %w", err)
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return m, fmt.Errorf("loopfs: %w", err)
	}
	if _, err := run(ctx, "mount", "-t", spec.Type, "-o", spec.MountOptions, m.Device, m.Dir); err != nil {
		return m, fmt.Errorf("loopfs: %w", err)
	}
	return m, nil
}

// Close unmounts, detaches and removes what New made. It is idempotent.
func (m *Mount) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var errs []error
	ctx := context.Background()
	if mounted(m.Dir) {
		if _, err := run(ctx, "umount", m.Dir); err != nil {
			// Busy (a process still has a file open): detach now, the
			// kernel finishes when it is released.
			if _, lerr := run(ctx, "umount", "-l", m.Dir); lerr != nil {
				errs = append(errs, err, lerr)
			}
		}
	}
	if m.Device != "" {
		if _, err := run(ctx, "losetup", "-d", m.Device); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(m.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := os.Remove(m.Image); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("loopfs: close %s: %w", m.Dir, err)
	}
	return nil
}

// mounted reports whether dir is a mount point (listed in /proc/self/mounts).
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return true // cannot tell: try to unmount
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] == dir {
			return true
		}
	}
	return false
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

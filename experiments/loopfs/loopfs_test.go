package loopfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Superblock magics (statfs f_type) of the supported file systems.
var magic = map[string]int64{"ext4": 0xEF53, "xfs": 0x58465342, "btrfs": 0x9123683E}

func TestMountEachType(t *testing.T) {
	for _, typ := range Types {
		t.Run(typ, func(t *testing.T) {
			if err := Check(typ); err != nil {
				t.Skipf("%s", err)
			}
			work := t.TempDir()
			m, err := New(context.Background(), work, Spec{Type: typ, Size: 320 << 20})
			if errors.Is(err, ErrUnavailable) {
				t.Skipf("%s", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var st unix.Statfs_t
			if err := unix.Statfs(m.Dir, &st); err != nil {
				t.Fatal(err)
			}
			if int64(st.Type) != magic[typ] {
				t.Fatalf("statfs type %#x, want %#x (%s)", st.Type, magic[typ], typ)
			}
			p := filepath.Join(m.Dir, "f")
			if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			man := m.Manifest()
			if man["fs"] != typ || man["mount_options"] != "noatime" || man["mkfs_options"] == "" {
				t.Fatalf("manifest %v", man)
			}
			if err := m.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if err := m.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
			if mounted(m.Dir) {
				t.Fatalf("%s still mounted after Close", m.Dir)
			}
			for _, left := range []string{m.Dir, m.Image} {
				if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s left behind (%v)", left, err)
				}
			}
			if out, _ := run(context.Background(), "losetup", "-a"); strings.Contains(out, m.Image) {
				t.Fatalf("loop device still attached to %s: %s", m.Image, out)
			}
		})
	}
}

func TestCheckRefusesUnknownType(t *testing.T) {
	if err := Check("ntfs"); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("Check(ntfs) = %v", err)
	}
}

// TestFailedMkfsLeavesNothing: a failing step removes the image and
// detaches the loop device.
func TestFailedMkfsLeavesNothing(t *testing.T) {
	if err := Check("ext4"); err != nil {
		t.Skipf("%s", err)
	}
	work := t.TempDir()
	_, err := New(context.Background(), work, Spec{Type: "ext4", Size: 64 << 20, MkfsOptions: []string{"-O", "no_such_feature"}})
	if err == nil {
		t.Fatalf("mkfs with a bogus feature succeeded")
	}
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("%s", err)
	}
	if _, serr := os.Stat(filepath.Join(work, "ext4.img")); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("image left behind after a failed mkfs (%v): %v", serr, err)
	}
	if out, _ := run(context.Background(), "losetup", "-a"); strings.Contains(out, work) {
		t.Fatalf("loop device left attached: %s", out)
	}
}

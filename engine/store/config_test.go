package store

import (
	"errors"
	"os"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
)

// A config file is replaced keeping the previous version as .bak, which a
// read falls back to when the file is broken; names with a path are
// refused.
func TestConfigFileAtomicWithBackup(t *testing.T) {
	cfg := testConfig(t, t.TempDir(), iopath.Mmap, flush.Async)
	s := openStore(t, cfg)
	defer mustClose(t, s)
	read := func() (string, bool) {
		var got string
		ok, err := s.ReadConfigFile("x.json", func(b []byte) error {
			if len(b) == 0 || b[0] != '{' {
				return errors.New("not an object")
			}
			got = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}
	if _, ok := read(); ok {
		t.Fatal("a file that was never written was read")
	}
	for _, v := range []string{`{"v":1}`, `{"v":2}`} {
		if err := s.WriteConfigFile("x.json", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := read(); !ok || got != `{"v":2}` {
		t.Fatalf("read %q %v", got, ok)
	}
	if b, err := os.ReadFile(ConfigPath(cfg.Root, "x.json.bak")); err != nil || string(b) != `{"v":1}` {
		t.Fatalf(".bak holds %q (%v)", b, err)
	}
	if err := os.WriteFile(ConfigPath(cfg.Root, "x.json"), []byte("{broken"[1:]), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := read(); !ok || got != `{"v":1}` {
		t.Fatalf("read %q %v, want the .bak", got, ok)
	}
	for _, bad := range []string{"", "a/b", "..", `a\b`} {
		if err := s.WriteConfigFile(bad, []byte("{}")); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("WriteConfigFile(%q): %v", bad, err)
		}
	}
}

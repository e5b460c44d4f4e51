package bytesize

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "64KiB": 64 << 10, "8MiB": 8 << 20, "1GiB": 1 << 30,
		"2MB": 2 << 20, "3K": 3 << 10, " 5 GiB ": 5 << 30, "7B": 7, "0": 0} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "big", "-1", "1.5GiB", "GiB", "1TiB"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) err = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 4096: "4KiB", 8 << 20: "8MiB", 1 << 30: "1GiB", 3<<30 + 1<<20: "3073MiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	}
}

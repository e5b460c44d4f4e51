package probe

import (
	"errors"
	"strings"
	"testing"
)

const vmstatText = `nr_free_pages 1995245
nr_dirty 1536
nr_writeback 12
nr_file_pages 421337
pgpgin 123456
pgpgout 7890123
pgfault 99887766
pgmajfault 4321
workingset_refault_file 17
`

const ioText = `rchar: 323934931
wchar: 323929600
syscr: 632687
syscw: 632675
read_bytes: 0
write_bytes: 323932160
cancelled_write_bytes: 0
`

const meminfoText = `MemTotal:       16318412 kB
Dirty:              6144 kB
Writeback:             0 kB
`

func TestParseVmstat(t *testing.T) {
	m, err := ParseKeyValues(strings.NewReader(vmstatText))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{"nr_dirty": 1536, "nr_writeback": 12, "pgpgout": 7890123, "pgmajfault": 4321, "workingset_refault_file": 17} {
		if m[k] != want {
			t.Fatalf("%s = %d want %d", k, m[k], want)
		}
	}
	if len(m) != 9 {
		t.Fatalf("%d fields", len(m))
	}
}

func TestParseProcIOAndMeminfo(t *testing.T) {
	m, err := ParseKeyValues(strings.NewReader(ioText))
	if err != nil {
		t.Fatal(err)
	}
	if m["write_bytes"] != 323932160 || m["syscr"] != 632687 || m["read_bytes"] != 0 || len(m) != 7 {
		t.Fatalf("io %v", m)
	}
	mi, err := ParseKeyValues(strings.NewReader(meminfoText))
	if err != nil || mi["Dirty"] != 6144 || mi["MemTotal"] != 16318412 {
		t.Fatalf("meminfo %v %v", mi, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{"nr_dirty\n", "nr_dirty x\n", "a 1\nb 2.5\n"} {
		if _, err := ParseKeyValues(strings.NewReader(text)); !errors.Is(err, ErrParse) {
			t.Fatalf("%q: err %v", text, err)
		}
	}
}

func TestParseStatFaults(t *testing.T) {
	// Field 2 with spaces and a ')' inside; minflt = 1234 (field 10), majflt = 56 (field 12).
	line := "4242 (my (weird) cmd) S 1 4242 4242 0 -1 4194560 1234 0 56 0 10 20 0 0 20 0 8 0 100 1000000 300 18446744073709551615"
	min, maj, err := ParseStatFaults(line)
	if err != nil || min != 1234 || maj != 56 {
		t.Fatalf("minflt %d majflt %d err %v", min, maj, err)
	}
	for _, bad := range []string{"no paren", "1 (x) S 1 2"} {
		if _, _, err := ParseStatFaults(bad); !errors.Is(err, ErrParse) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	v2, v1, err := ParseProcCgroup("12:memory:/process_api/abc\n4:cpu,cpuacct:/\n1:name=systemd:/init.scope\n0::/user.slice/x.scope\n")
	if err != nil {
		t.Fatal(err)
	}
	if v2 != "/user.slice/x.scope" || v1["memory"] != "/process_api/abc" || v1["cpuacct"] != "/" || v1["name=systemd"] != "/init.scope" {
		t.Fatalf("v2 %q v1 %v", v2, v1)
	}
	if _, _, err := ParseProcCgroup("garbage\n"); !errors.Is(err, ErrParse) {
		t.Fatalf("garbage: %v", err)
	}
}

package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrParse marks malformed /proc text.
var ErrParse = errors.New("probe: malformed /proc data")

// ParseKeyValues reads lines of "key value" (/proc/vmstat) or "key: value
// [unit]" (/proc/<pid>/io, /proc/meminfo) into a map; the unit is ignored.
// Empty lines are skipped; a line without a numeric value is an error.
func ParseKeyValues(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if len(fs) < 2 {
			return nil, fmt.Errorf("%w: line %d %q: no value", ErrParse, line, sc.Text())
		}
		v, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d %q: %v", ErrParse, line, sc.Text(), err)
		}
		out[strings.TrimSuffix(fs[0], ":")] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("probe: reading: %w", err)
	}
	return out, nil
}

// ParseStatFaults reads minflt and majflt (fields 10 and 12) from a
// /proc/<pid>/stat line. The command name (field 2) may contain spaces and
// parentheses, so fields are counted after the last ')'.
func ParseStatFaults(stat string) (minflt, majflt int64, err error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("%w: stat line without ')'", ErrParse)
	}
	fs := strings.Fields(stat[i+1:]) // fs[0] is field 3 (state)
	if len(fs) < 10 {
		return 0, 0, fmt.Errorf("%w: stat line has %d fields after the name", ErrParse, len(fs))
	}
	if minflt, err = strconv.ParseInt(fs[7], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("%w: minflt %q", ErrParse, fs[7])
	}
	if majflt, err = strconv.ParseInt(fs[9], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("%w: majflt %q", ErrParse, fs[9])
	}
	return minflt, majflt, nil
}

// ReadKeyValues parses a /proc key-value file.
func ReadKeyValues(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	defer f.Close()
	m, err := ParseKeyValues(f)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return m, nil
}

// ReadVmstat reads <procRoot>/vmstat ("" = /proc).
func ReadVmstat(procRoot string) (map[string]int64, error) {
	return ReadKeyValues(filepath.Join(procDir(procRoot), "vmstat"))
}

// ReadProcIO reads <procRoot>/<pid>/io (pid 0 = self). Reading another
// process's io needs ptrace access to it (same user or root).
func ReadProcIO(procRoot string, pid int) (map[string]int64, error) {
	return ReadKeyValues(filepath.Join(procDir(procRoot), pidDir(pid), "io"))
}

func procDir(root string) string {
	if root == "" {
		return "/proc"
	}
	return root
}

func pidDir(pid int) string {
	if pid <= 0 {
		return "self"
	}
	return strconv.Itoa(pid)
}

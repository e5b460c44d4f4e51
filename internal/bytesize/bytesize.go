// Package bytesize reads and writes byte counts with a binary suffix
// ("4096", "64KiB", "8MiB", "1GiB"): the one size syntax of experiment
// files, the broker's flags and its config file.
package bytesize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrSyntax marks a string that is not a size.
var ErrSyntax = errors.New("bytesize: not a size")

// units are the accepted suffixes, longest first; KB/MB/GB and K/M/G are
// powers of 1024 too.
var units = []struct {
	suf string
	m   int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}

// Parse parses "4096", "64KiB", "8MiB", "1GiB" (also KB/MB/GB as powers of
// 1024, and K/M/G; spaces around the number are allowed). A negative or
// malformed size is an ErrSyntax error.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suf)), u.m
			break
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	return v * mult, nil
}

// Format writes n in the largest binary unit that divides it exactly
// ("1GiB", "64KiB"), else as plain bytes; Parse reads it back.
func Format(n int64) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n != 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n != 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

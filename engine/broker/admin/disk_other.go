//go:build !unix

package admin

import "errors"

// diskUsage is not measured on this platform; the runtime info leaves the
// disk keys out.
func diskUsage(string) (float64, uint64, uint64, error) {
	return 0, 0, 0, errors.New("broker: disk usage not measured on this platform")
}

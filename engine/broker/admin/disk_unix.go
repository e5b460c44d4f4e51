//go:build unix

package admin

import "golang.org/x/sys/unix"

// diskUsage measures the partition holding path as Java's broker does for
// commitLogDiskRatio (UtilAll.getDiskPartitionSpaceUsedPercent: used /
// (used + available to the user)) and commitLogDirCapacity (total and free
// bytes).
func diskUsage(path string) (ratio float64, total, free uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, 0, err
	}
	bs := uint64(st.Bsize)
	total, free = st.Blocks*bs, st.Bfree*bs
	used, avail := total-free, st.Bavail*bs
	if used+avail > 0 {
		ratio = float64(used) / float64(used+avail)
	}
	return ratio, total, free, nil
}

// Package pagecache observes and trims what the kernel's page cache holds of
// the store's own files: the "what the page cache holds" part of the files
// layer (architecture.md), used by probes and by cold-run preparation.
//
// Residency is measured with mincore(2) on a temporary read-only MAP_SHARED
// mapping of the file (or on a mapping the caller already has, see
// MappedResidency). Cost: mapping a file and calling mincore touches no page
// of it (no faults, no I/O); it costs one mmap/munmap pair per window of at
// most WindowBytes (1 GiB) plus a vector of one byte per 4 KiB page (256 KiB
// for a 1 GiB file), so sampling a directory of 1 GiB segments every second is
// cheap. A page counts as resident when bit 0 of its mincore byte is set,
// which is how vmtouch and fincore report it.
//
// Dropping is per file only: DropFile is posix_fadvise(POSIX_FADV_DONTNEED)
// on one of the store's own file descriptors. It never touches
// /proc/sys/vm/drop_caches and needs no privilege. The kernel drops only
// clean, unmapped, unlocked pages, so call fdatasync first (SyncAndDrop does
// both) and unmap the file's mappings if they should go too.
//
// Concurrency: every function is safe for concurrent use; they share no
// state. Results are a snapshot: the page cache changes while they run.
package pagecache

import (
	"errors"
	"os"
)

// WindowBytes is the largest mapping Residency creates at once; larger files
// are measured window by window.
const WindowBytes = 1 << 30

var (
	// ErrUnsupported is returned on systems without mincore/fadvise.
	ErrUnsupported = errors.New("pagecache: not supported on this operating system")
	// ErrUnaligned is returned by MappedResidency when the slice does not
	// start on a page boundary (it must come from mmap).
	ErrUnaligned = errors.New("pagecache: mapping does not start on a page boundary")
)

// PageSize is the kernel page size used for page counts.
func PageSize() int { return os.Getpagesize() }

// Pages returns the number of pages covering size bytes.
func Pages(size int64) int {
	if size <= 0 {
		return 0
	}
	ps := int64(PageSize())
	return int((size + ps - 1) / ps)
}

// FileResidency is the residency of one file.
type FileResidency struct {
	Name     string `json:"name"` // base name within the directory
	Size     int64  `json:"size"` // bytes
	Resident int    `json:"resident_pages"`
	Total    int    `json:"total_pages"`
}

// Fraction is Resident/Total (0 for an empty file).
func (r FileResidency) Fraction() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Resident) / float64(r.Total)
}

// ResidentBytes is Resident pages in bytes (at most Size rounded up to a page).
func (r FileResidency) ResidentBytes() int64 { return int64(r.Resident) * int64(PageSize()) }

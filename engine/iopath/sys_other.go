//go:build !linux

package iopath

import (
	"fmt"
	"unsafe"
)

// oDirect is 0: the direct write path reports ErrUnsupported off Linux.
const oDirect = 0

var mlock = func(b []byte) error { return fmt.Errorf("mlock: %w", ErrUnsupported) }

// Advice is accepted and ignored off Linux.
func madvise(b []byte, a Advice) error                 { return nil }
func fadvise(fd uintptr, off, n int64, a Advice) error { return nil }

// anonMap returns page-aligned heap memory off Linux.
func anonMap(n int) ([]byte, error) {
	b := make([]byte, n+pageSize)
	skip := (pageSize - int(uintptr(unsafe.Pointer(&b[0]))%pageSize)) % pageSize
	return b[skip : skip+n : skip+n], nil
}

func anonUnmap(b []byte) error { return nil }

func dioAlign(fd uintptr) (offsetAlign, memAlign int64) { return pageSize, pageSize }

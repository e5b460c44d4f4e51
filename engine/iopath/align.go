package iopath

import "unsafe"

// pageSize is the stride of warm-up (RocketMQ writes one byte every 4096
// bytes) and the alignment used when the OS reports none.
const pageSize = 4096

func alignDown(n, a int64) int64 { return n - n%a }

func alignUp(n, a int64) int64 {
	if r := n % a; r != 0 {
		return n + a - r
	}
	return n
}

// alignedAlloc returns n bytes of Go heap memory whose first byte is
// aligned to a (a power of two), for O_DIRECT read buffers.
func alignedAlloc(n, a int64) []byte {
	b := make([]byte, n+a)
	skip := (a - int64(uintptr(unsafe.Pointer(&b[0])))%a) % a
	return b[skip : skip+n : skip+n]
}

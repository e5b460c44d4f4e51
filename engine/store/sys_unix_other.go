//go:build unix && !linux

package store

func sysinfoMemory() int64 { return 0 }

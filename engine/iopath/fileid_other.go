//go:build !unix

package iopath

import "os"

func devIno(fi os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

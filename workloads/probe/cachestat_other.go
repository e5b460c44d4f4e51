//go:build !linux

package probe

import "os"

func cachestat(*os.File) ([5]int64, error) { return [5]int64{}, ErrCachestatUnsupported }

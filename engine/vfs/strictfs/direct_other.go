//go:build !linux

package strictfs

// directFlag is 0 where there is no O_DIRECT.
const directFlag = 0

package strictfs

import "syscall"

// directFlag is the O_DIRECT open flag whose alignment rules the FS enforces.
const directFlag = syscall.O_DIRECT

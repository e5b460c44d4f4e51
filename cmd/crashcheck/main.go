// Command crashcheck is the Go half of scripts/crashloop.sh: it produces
// load against a broker over the network and logs every acknowledged
// message, and after each SIGKILL and restart of the broker it checks that
// nothing acknowledged was lost and nothing corrupt is served.
//
//	crashcheck freeport                       print a free 127.0.0.1 port
//	crashcheck wait    -addr A [-broker]      wait until a name server / broker answers
//	crashcheck produce -addr A -acks FILE ... send until SIGTERM, log acknowledgements
//	crashcheck verify  -addr A -acks FILE ... pull every queue and check the acknowledgements
//	crashcheck offline -store DIR ...         open the stopped broker's store and check it
//
// Acknowledgement log (one line per message the broker answered SUCCESS,
// written and fdatasynced by a single writer goroutine):
//
//	ACK <cycle> <flush> <topic> <queueId> <queueOffset> <sha256(body) hex> <UNIQ_KEY> <SEQ>
//
// The survivors file has the same format: every acknowledgement a verify
// found stored. verify requires the survivors and, when the cycle ran under
// sync or group flush, every acknowledgement of the cycle; under async an
// acknowledgement may be missing only at the tail of its queue (the
// recovered log is a clean prefix), never replaced by another message —
// unless -strict-async says the cycle's write path (mmap, pwrite) keeps
// acknowledged bytes in the kernel page cache, which a killed process
// cannot lose.
//
// Everything binds or dials 127.0.0.1 only; every loop is bounded by a
// deadline or a count.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "freeport":
		err = freePort()
	case "wait":
		err = runWait(os.Args[2:])
	case "produce":
		err = runProduce(os.Args[2:])
	case "verify":
		err = runVerify(os.Args[2:])
	case "offline":
		err = runOffline(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashcheck:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: crashcheck freeport | wait | produce | verify | offline [flags]")
	os.Exit(2)
}

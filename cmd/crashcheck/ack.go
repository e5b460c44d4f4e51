package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ack is one line of an acknowledgement or survivors file.
type ack struct {
	cycle   int
	flush   string
	topic   string
	queueID int32
	offset  int64
	bodySHA string
	uniq    string
	seq     string
}

type queueSlot struct {
	topic   string
	queueID int32
	offset  int64
}

func (a ack) slot() queueSlot { return queueSlot{a.topic, a.queueID, a.offset} }

func (a ack) line() string {
	return fmt.Sprintf("ACK %d %s %s %d %d %s %s %s\n", a.cycle, a.flush, a.topic, a.queueID, a.offset, a.bodySHA, a.uniq, a.seq)
}

func bodySHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// durable reports whether an acknowledgement under this flush policy
// promises survival of a process crash.
func (a ack) durable() bool {
	return a.flush == "sync" || a.flush == "group" || a.flush == "rmqgroup" || a.flush == "dsync"
}

func parseAck(line string) (ack, error) {
	f := strings.Fields(line)
	if len(f) != 9 || f[0] != "ACK" {
		return ack{}, fmt.Errorf("bad ack line %q", line)
	}
	cycle, err1 := strconv.Atoi(f[1])
	q, err2 := strconv.ParseInt(f[4], 10, 32)
	off, err3 := strconv.ParseInt(f[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return ack{}, fmt.Errorf("bad ack line %q", line)
	}
	return ack{cycle: cycle, flush: f[2], topic: f[3], queueID: int32(q), offset: off, bodySHA: f[6], uniq: f[7], seq: f[8]}, nil
}

// readAcks reads an ack file; a missing file is empty. A torn last line
// (the writer was stopped mid-line) is ignored.
func readAcks(path string) ([]ack, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []ack
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var pending string
	for sc.Scan() {
		if pending != "" {
			a, err := parseAck(pending)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, a)
		}
		pending = sc.Text()
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if pending != "" {
		if a, err := parseAck(pending); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// writeAcks replaces path with acks (write to a temporary file, fsync,
// rename).
func writeAcks(path string, acks []ack) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, a := range acks {
		w.WriteString(a.line())
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

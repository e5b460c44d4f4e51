package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/store"
)

// runOffline opens the store of a stopped broker and checks it without the
// network: every commit-log record from the min to the max offset decodes
// with a valid body CRC at its own physical offset, each queue of the topic
// holds offsets 0..n-1 in log order, the consume queues agree (max offset,
// every message served by GetMessage is the logged one) and every survivor
// is stored identically.
func runOffline(args []string) error {
	fs := flag.NewFlagSet("offline", flag.ExitOnError)
	dir := fs.String("store", "", "store root of the stopped broker")
	segSize := fs.Int64("segment-size", 1<<30, "commit-log segment size in bytes (as the broker ran)")
	survPath := fs.String("survivors", "", "survivors file written by verify")
	topic := fs.String("topic", "CRASH", "topic")
	queues := fs.Int("queues", 4, "queues of the topic")
	fs.Parse(args)
	if *dir == "" {
		return errors.New("offline: -store is required")
	}
	cfg := store.DefaultConfig(*dir)
	cfg.CommitLog.SegmentSize = *segSize
	cfg.CleanInterval = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := store.Open(cfg)
	if err != nil {
		return fmt.Errorf("offline: open %s: %w", *dir, err)
	}
	defer s.Close()
	rep := s.Recovery()
	var res checkResult
	log := s.CommitLog()
	next := map[int32]int64{}
	var buf []byte
	var records int64
	for off := log.MinOffset(); off < log.MaxOffset(); {
		var rec record.Record
		buf, rec, err = log.ReadRecord(off, buf)
		if errors.Is(err, record.ErrBlank) {
			off = log.RollNextFile(off)
			continue
		}
		if err != nil {
			return fmt.Errorf("offline: commit log at %d: %w", off, err)
		}
		if _, err := record.Decode(buf[:rec.TotalSize], true); err != nil {
			return fmt.Errorf("offline: record at %d fails its check: %w", off, err)
		}
		if rec.PhysicalOffset != off {
			return fmt.Errorf("offline: record at %d claims physical offset %d", off, rec.PhysicalOffset)
		}
		records++
		if string(rec.Topic) == *topic {
			if rec.QueueOffset != next[rec.QueueID] {
				res.corrupt++
				res.problem("queue %d: record at %d has queue offset %d, want %d", rec.QueueID, off, rec.QueueOffset, next[rec.QueueID])
			}
			next[rec.QueueID] = rec.QueueOffset + 1
		}
		off += int64(rec.TotalSize)
	}
	found := map[queueSlot]stored{}
	maxOff := map[queueSlot]int64{}
	for q := int32(0); q < int32(*queues); q++ {
		maxO := s.GetMaxOffsetInQueue(*topic, q)
		maxOff[queueSlot{*topic, q, 0}] = maxO
		if maxO != next[q] {
			res.corrupt++
			res.problem("queue %d: consume queue max %d, commit log holds %d", q, maxO, next[q])
		}
		for off := s.GetMinOffsetInQueue(*topic, q); off >= 0 && off < maxO; {
			g, err := s.GetMessage("crashcheck", *topic, q, off, 32, 1<<20, nil)
			if err != nil {
				return fmt.Errorf("offline: get %s/%d@%d: %w", *topic, q, off, err)
			}
			if g.Status != store.Found || len(g.Messages) == 0 {
				res.corrupt++
				res.problem("queue %d@%d: %v below max %d", q, off, g.Status, maxO)
				break
			}
			for _, m := range g.Messages {
				rec, err := record.Decode(g.Buffer[m.Pos:m.Pos+int(m.Size)], true)
				if err != nil || rec.QueueOffset != off {
					res.corrupt++
					res.problem("queue %d@%d: served %d: %v", q, off, rec.QueueOffset, err)
				}
				uniq, _ := rec.Property(record.PropertyUniqKey)
				seq, _ := rec.Property("SEQ")
				found[queueSlot{*topic, q, off}] = stored{bodySHA: bodySHA(rec.Body), uniq: string(uniq), seq: string(seq)}
				res.records++
				off++
			}
		}
	}
	var survivors []ack
	if *survPath != "" {
		if survivors, err = readAcks(*survPath); err != nil {
			return err
		}
	}
	checkAcks(survivors, nil, found, maxOff, false, &res)
	for _, p := range res.problems {
		fmt.Fprintln(os.Stderr, "offline:", p)
	}
	fmt.Printf("offline: abnormal_recovery=%v records=%d topic_records=%d survivors=%d lost=%d corrupt=%d\n",
		rep.Abnormal, records, res.records, len(survivors), res.lost, res.corrupt)
	if res.lost > 0 || res.corrupt > 0 {
		return fmt.Errorf("offline: %d survivors lost, %d problems", res.lost, res.corrupt)
	}
	return nil
}

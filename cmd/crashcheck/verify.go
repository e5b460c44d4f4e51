package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// stored is what verify found at one queue slot.
type stored struct {
	bodySHA, uniq, seq string
}

// matches reports whether s is the acknowledged message a.
func (s stored) matches(a ack) bool {
	return s.bodySHA == a.bodySHA && s.uniq == a.uniq && s.seq == a.seq
}

// checkResult counts what a verification found.
type checkResult struct {
	acknowledged, required, lost, asyncLost, corrupt int
	records                                          int64
	problems                                         []string
}

func (r *checkResult) problem(format string, args ...any) {
	if len(r.problems) < 20 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

// checkAcks compares the survivors of earlier cycles (all required) and
// this cycle's acknowledgements (required under sync/group, and under async
// too with strictAsync; otherwise present-and-identical or missing at the
// queue's tail) with the queues as found (slot → message; max offset per
// queue). It returns the new survivors.
func checkAcks(survivors, acks []ack, found map[queueSlot]stored, maxOff map[queueSlot]int64, strictAsync bool, res *checkResult) []ack {
	next := append([]ack(nil), survivors...)
	check := func(a ack, required bool) {
		s, ok := found[a.slot()]
		switch {
		case ok && s.matches(a):
		case ok:
			res.corrupt++
			res.problem("%s/%d@%d: holds %s (seq %s), acknowledged %s (seq %s, cycle %d, %s)",
				a.topic, a.queueID, a.offset, s.uniq, s.seq, a.uniq, a.seq, a.cycle, a.flush)
		case required:
			res.lost++
			res.problem("%s/%d@%d: acknowledged under %s in cycle %d (seq %s) is missing; queue max %d",
				a.topic, a.queueID, a.offset, a.flush, a.cycle, a.seq, maxOff[queueSlot{a.topic, a.queueID, 0}])
		default:
			res.asyncLost++
		}
	}
	for _, a := range survivors {
		res.required++
		check(a, true)
	}
	// Under async a lost acknowledgement must be at the tail of its queue:
	// every acknowledged offset above a lost one is lost too.
	lowestLost := map[queueSlot]int64{}
	for _, a := range acks {
		res.acknowledged++
		required := a.durable() || strictAsync
		if required {
			res.required++
		}
		before := res.lost + res.asyncLost
		check(a, required)
		if res.lost+res.asyncLost > before {
			k := queueSlot{a.topic, a.queueID, 0}
			if v, ok := lowestLost[k]; !ok || a.offset < v {
				lowestLost[k] = a.offset
			}
			continue
		}
		if s, ok := found[a.slot()]; ok && s.matches(a) {
			next = append(next, a)
		}
	}
	for _, a := range acks {
		k := queueSlot{a.topic, a.queueID, 0}
		if low, ok := lowestLost[k]; ok && a.offset > low {
			if _, present := found[a.slot()]; present {
				res.corrupt++
				res.problem("%s/%d: offset %d acknowledged and present above lost offset %d: not a clean prefix",
					a.topic, a.queueID, a.offset, low)
			}
		}
	}
	sort.Slice(next, func(i, j int) bool {
		if next[i].queueID != next[j].queueID {
			return next[i].queueID < next[j].queueID
		}
		return next[i].offset < next[j].offset
	})
	return next
}

// runVerify pulls every queue of the topic from its min to its max offset
// through the broker and checks the acknowledgements.
func runVerify(args []string) error {
	fs := flag.NewFlagSet("verify", flag.ExitOnError)
	addr := fs.String("addr", "", "broker address (127.0.0.1:port)")
	ackPath := fs.String("acks", "", "this cycle's acknowledgement log")
	survPath := fs.String("survivors", "", "survivors file (read, then rewritten)")
	topic := fs.String("topic", "CRASH", "topic")
	queues := fs.Int("queues", 4, "queues of the topic")
	cycle := fs.Int("cycle", 0, "cycle number (for the report)")
	label := fs.String("label", "", "free text for the report (write path, flush)")
	strict := fs.Bool("strict-async", false, "require async acknowledgements too (mmap and pwrite: the page cache outlives a killed process)")
	fs.Parse(args)
	if *addr == "" || *survPath == "" {
		return errors.New("verify: -addr and -survivors are required")
	}
	survivors, err := readAcks(*survPath)
	if err != nil {
		return err
	}
	var acks []ack
	if *ackPath != "" {
		if acks, err = readAcks(*ackPath); err != nil {
			return err
		}
	}
	cl := newClient()
	defer cl.Close()
	var res checkResult
	found := map[queueSlot]stored{}
	maxOff := map[queueSlot]int64{}
	uniqSeen := map[string]queueSlot{}
	for q := int32(0); q < int32(*queues); q++ {
		if err := pullQueue(cl, *addr, *topic, q, found, maxOff, uniqSeen, &res); err != nil {
			return err
		}
	}
	next := checkAcks(survivors, acks, found, maxOff, *strict, &res)
	for _, p := range res.problems {
		fmt.Fprintln(os.Stderr, "verify:", p)
	}
	if err := writeAcks(*survPath, next); err != nil {
		return err
	}
	fmt.Printf("cycle=%d %s acknowledged=%d required=%d lost=%d async_lost=%d corrupt=%d records=%d\n",
		*cycle, *label, res.acknowledged, res.required, res.lost, res.asyncLost, res.corrupt, res.records)
	if res.lost > 0 || res.corrupt > 0 {
		return fmt.Errorf("verify: cycle %d: %d acknowledged messages lost, %d corrupt or out of place", *cycle, res.lost, res.corrupt)
	}
	return nil
}

// pullQueue reads one queue with PULL_MESSAGE from its min offset to its max:
// every record must decode with a valid body CRC, belong to the queue, carry
// the next queue offset (no hole, no duplicate) and a UNIQ_KEY seen nowhere
// else.
func pullQueue(cl *remoting.Client, addr, topic string, q int32, found map[queueSlot]stored, maxOff map[queueSlot]int64,
	uniqSeen map[string]queueSlot, res *checkResult) error {
	maxO, err := queueOffset(cl, addr, protocol.ReqGetMaxOffset, topic, q)
	if err != nil {
		return err
	}
	minO, err := queueOffset(cl, addr, protocol.ReqGetMinOffset, topic, q)
	if err != nil {
		return err
	}
	maxOff[queueSlot{topic, q, 0}] = maxO
	if minO != 0 {
		res.corrupt++
		res.problem("%s/%d: min offset %d, want 0 (nothing is cleaned in a crash loop)", topic, q, minO)
	}
	off := minO
	for guard := 0; off < maxO; guard++ {
		if guard > int(maxO-minO)+1000 {
			return fmt.Errorf("verify: %s/%d: pull does not advance at %d", topic, q, off)
		}
		ext := protocol.PullMessageHeader{ConsumerGroup: "crashcheck", Topic: topic, QueueID: q, QueueOffset: off,
			MaxMsgNums: 32, CommitOffset: -1, Subscription: "*", ExpressionType: "TAG"}.ExtFields()
		resp, err := call(cl, addr, 10*time.Second, protocol.ReqPullMessage, ext, nil)
		if err != nil {
			return fmt.Errorf("verify: pull %s/%d@%d: %w", topic, q, off, err)
		}
		if resp.Code != protocol.RespSuccess {
			res.corrupt++
			res.problem("%s/%d@%d: pull answered %s %q below the max offset %d (a hole?)", topic, q, off,
				protocol.ResponseCodeName(resp.Code), resp.Remark, maxO)
			nb, err := resp.ExtFields.Int64("nextBeginOffset")
			if err != nil || nb <= off {
				return fmt.Errorf("verify: %s/%d@%d: cannot continue: %s", topic, q, off, protocol.ResponseCodeName(resp.Code))
			}
			off = nb
			continue
		}
		body := resp.Body
		if len(body) == 0 {
			return fmt.Errorf("verify: %s/%d@%d: SUCCESS with an empty body", topic, q, off)
		}
		for len(body) > 0 {
			rec, err := record.Decode(body, true)
			if err != nil {
				res.corrupt++
				res.problem("%s/%d@%d: served record fails its check: %v", topic, q, off, err)
				return fmt.Errorf("verify: corrupt record served at %s/%d@%d: %w", topic, q, off, err)
			}
			body = body[rec.TotalSize:]
			if string(rec.Topic) != topic || rec.QueueID != q || rec.QueueOffset != off {
				res.corrupt++
				res.problem("%s/%d: expected offset %d, got %s/%d@%d (hole or duplicate)", topic, q, off, rec.Topic, rec.QueueID, rec.QueueOffset)
				if rec.QueueOffset < off {
					continue // a duplicate: skip it
				}
				off = rec.QueueOffset
			}
			uniq, _ := rec.Property(record.PropertyUniqKey)
			seq, _ := rec.Property("SEQ")
			slot := queueSlot{topic, q, off}
			if prev, dup := uniqSeen[string(uniq)]; dup {
				res.corrupt++
				res.problem("%s/%d@%d: UNIQ_KEY %s stored twice (also at %d/%d)", topic, q, off, uniq, prev.queueID, prev.offset)
			}
			uniqSeen[string(uniq)] = slot
			found[slot] = stored{bodySHA: bodySHA(rec.Body), uniq: string(uniq), seq: string(seq)}
			res.records++
			off++
		}
	}
	return nil
}

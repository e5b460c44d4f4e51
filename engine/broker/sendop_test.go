package broker_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
)

// TestSendAnswersDescribeTheirOwnMessage: a single send's response is
// built in a pooled sendOp whose msgId/queueOffset/queueId values are
// strings over the op's own buffer, and under group commit the wait is
// handed to reused waiter goroutines. Under every flush policy, with
// concurrent producers, each answer still describes the message its
// producer sent — the record at the answered msgId's commit-log offset
// holds that producer's body, at the answered queue and queue offset,
// with the answered transactionId as its UNIQ_KEY — and no two answers
// share a queue offset: no op was reused (nor its buffer rewritten) before
// its answer was written.
func TestSendAnswersDescribeTheirOwnMessage(t *testing.T) {
	for _, pol := range flush.Kinds() {
		t.Run("flush="+string(pol), func(t *testing.T) {
			ns := startNamesrv(t)
			e := startRealEnv(t, t.TempDir(), pol, ns.Addr())
			const topic, queues, producers, each = "Answers", 3, 12, 15
			e.createTopic(topic, queues)

			type answer struct {
				body                 string
				queueID, queueOffset int64
				msgID, transactionID string
			}
			answers := make(chan answer, producers*each)
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := range each {
						body := fmt.Sprintf("producer %d message %d", p, i)
						resp := e.send(topic, int32((p+i)%queues), body, "")
						if resp.Code != protocol.RespSuccess {
							t.Errorf("%s: %s %q", body, protocol.ResponseCodeName(resp.Code), resp.Remark)
							return
						}
						qid, err1 := strconv.ParseInt(resp.ExtFields["queueId"], 10, 32)
						qoff, err2 := strconv.ParseInt(resp.ExtFields["queueOffset"], 10, 64)
						if err1 != nil || err2 != nil {
							t.Errorf("%s: answer %v", body, resp.ExtFields)
							return
						}
						answers <- answer{body, qid, qoff, resp.ExtFields["msgId"], resp.ExtFields["transactionId"]}
					}
				})
			}
			wg.Wait()
			close(answers)
			if t.Failed() {
				t.FailNow()
			}
			seen := map[[2]int64]string{}
			n := 0
			for a := range answers {
				n++
				_, phys, err := record.ParseOffsetMsgID(a.msgID)
				if err != nil {
					t.Fatalf("%s: msgId %q: %v", a.body, a.msgID, err)
				}
				raw, err := e.b.Store().ReadRecord(phys)
				if err != nil {
					t.Fatalf("%s: record at %d: %v", a.body, phys, err)
				}
				rec, err := record.Decode(raw, true)
				if err != nil {
					t.Fatalf("%s: record at %d: %v", a.body, phys, err)
				}
				uniq, _ := rec.Property(record.PropertyUniqKey)
				if string(rec.Body) != a.body || int64(rec.QueueID) != a.queueID || rec.QueueOffset != a.queueOffset ||
					string(uniq) != a.transactionID || a.transactionID == "" {
					t.Fatalf("answer %+v, but the record at its msgId holds %q at %d/%d with UNIQ_KEY %q",
						a, rec.Body, rec.QueueID, rec.QueueOffset, uniq)
				}
				k := [2]int64{a.queueID, a.queueOffset}
				if other, dup := seen[k]; dup {
					t.Fatalf("%q and %q were both answered queue %d offset %d", other, a.body, k[0], k[1])
				}
				seen[k] = a.body
			}
			if n != producers*each {
				t.Fatalf("%d answers for %d sends", n, producers*each)
			}
		})
	}
}

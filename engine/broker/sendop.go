package broker

import (
	"context"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// sendOp is one single send (SEND_MESSAGE, SEND_MESSAGE_V2) from its
// header to its answer: the message, the staged put between its stages
// and the response live in it, so a send allocates none of them. It is
// taken from sendOpPool by processSend and given back by answer once the
// response is written.
//
// Ownership: one goroutine at a time — the send worker, then (handOn) the
// waiter goroutine it hands the wait to. The store must not keep msg or
// its Body, which points into the request's pooled frame (the MessageStore
// contract); resp and its ext values, which alias ids, are only read by
// conn.Reply, which encodes them before answer returns the op.
type sendOp struct {
	b    *Broker
	ctx  context.Context
	conn *remoting.Conn
	req  *remoting.Command
	sc   *SendContext // nil without send hooks
	sp   StagedPutter // the store's staged puts, for the wait

	msg     record.Message
	topic   string
	bodyLen int
	queueID int32
	uniq    string
	recall  string    // the recall handle of a timer message (delay.RecallHandle), else ""
	res     PutResult // the provisional result AppendStaged returned, for WaitStaged

	resp remoting.Command   // a stored send's response
	ext  remoting.ExtFields // resp's ExtFields, kept (emptied) across sends
	// ids holds resp's msgId, queueOffset and queueId: their ext values are
	// strings over it, valid until the op goes back to the pool.
	ids [96]byte
}

var sendOpPool = sync.Pool{New: func() any { return new(sendOp) }}

func (b *Broker) newSendOp(ctx context.Context, conn *remoting.Conn, req *remoting.Command) *sendOp {
	op := sendOpPool.Get().(*sendOp)
	op.b, op.ctx, op.conn, op.req = b, ctx, conn, req
	op.sc = b.sendContext(conn, req)
	return op
}

// answer runs the after hooks, writes resp, returns the request (its
// Command, frame buffer and header map: remoting's Command.Release) to
// the remoting pools and op to its pool. resp may be op's own. Nothing
// refers to the request any more: the store copied the body during the
// put (the MessageStore contract), the header's strings are not in the
// frame, and Reply encoded the response.
func (op *sendOp) answer(resp *remoting.Command) {
	b, req := op.b, op.req
	b.sendEnd(op.sc, resp)
	b.replySend(op.conn, req, resp)
	req.Release()
	if resp != &op.resp {
		resp.ReleaseExtFields()
	}
	ext := op.ext
	clear(ext)
	*op = sendOp{ext: ext}
	sendOpPool.Put(op)
}

// storedResponse builds a stored single send's response in op: code and
// remark of putResponse, and the ext fields a producer reads (msgId,
// queueOffset, queueId, transactionId), with no allocation.
func (op *sendOp) storedResponse(code int32, remark string, phys, queueOffset int64) *remoting.Command {
	resp := &op.resp
	resp.ResetResponse(code, remark)
	if op.ext == nil {
		op.ext = make(remoting.ExtFields, 8)
	}
	ext := op.ext
	resp.ExtFields = ext
	ids := record.AppendOffsetMsgID(op.ids[:0], op.b.storeHost, phys)
	idEnd := len(ids)
	ids = strconv.AppendInt(ids, queueOffset, 10)
	offEnd := len(ids)
	ids = strconv.AppendInt(ids, int64(op.queueID), 10)
	if len(ids) > len(op.ids) { // cannot happen: the longest (IPv6) fields take 87 bytes
		panic("broker: send response ids overflow their buffer")
	}
	// The strings alias op.ids, written above and not again until the op
	// is reused, after the reply is encoded (answer).
	s := unsafe.String(&op.ids[0], len(ids))
	ext["msgId"], ext["queueOffset"], ext["queueId"] = s[:idEnd], s[idEnd:offEnd], s[offEnd:]
	ext["transactionId"] = op.uniq
	if op.recall != "" {
		ext["recallHandle"] = op.recall
	}
	ext["MSG_REGION"] = "DefaultRegion"
	ext["TRACE_ON"] = "true"
	return resp
}

// finishStaged waits for op's staged put and answers it.
func (op *sendOp) finishStaged() {
	res, err := op.sp.WaitStaged(op.ctx, op.res)
	op.answer(op.b.sendAnswer(op, res, err))
}

// waiterIdle is how long a waiter goroutine with nothing to wait for stays
// for the next handed-on send before it exits.
const waiterIdle = 5 * time.Second

// handOn gives op's wait and answer to a waiter goroutine: an idle one
// (b.waiters) if any, else a new one, tracked by the broker's WaitGroup
// (Shutdown waits for them before closing the store). At most
// SendQueueSize waits run at once: beyond that handOn returns false and
// the caller waits itself, which slows the send workers down as a full
// queue would.
func (b *Broker) handOn(op *sendOp) bool {
	select {
	case b.putWaits <- struct{}{}:
	default:
		return false
	}
	select {
	case b.waiters <- op:
	default:
		b.wg.Add(1)
		go b.waiter(op)
	}
	return true
}

// waiter runs handed-on sends: op, then any handOn gives it, until it has
// been idle for waiterIdle or the broker stops. Reusing the goroutines
// saves a goroutine start (and its closure) per send.
func (b *Broker) waiter(op *sendOp) {
	defer b.wg.Done()
	idle := time.NewTimer(waiterIdle)
	defer idle.Stop()
	for {
		op.finishStaged()
		<-b.putWaits
		idle.Reset(waiterIdle)
		select {
		case op = <-b.waiters:
		case <-idle.C:
			return
		case <-b.stop:
			return
		}
	}
}

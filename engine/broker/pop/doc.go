// Package pop is the broker's POP consumption (RocketMQ 5's
// PopMessageProcessor, AckMessageProcessor, ChangeInvisibleTimeProcessor
// and PopReviveService): the broker balances a group's consumers over the
// queues itself and leases each popped message for an invisible time. A
// message that is not acked within it comes back, through the group's
// retry topic %RETRY%<group>_<topic>, with its reconsume times raised;
// after retryMaxTimes+1 deliveries it goes to %DLQ%<group> instead. A
// FIFO pop (order) hands out one batch of a queue at a time, in order,
// and delivers the same messages again from the same queue when they are
// not acked in time.
//
// The Go API (Service.Pop, Ack, ChangeInvisible, ToDLQ) is what the gRPC
// front end calls; Register serves the remoting codes POP_MESSAGE,
// ACK_MESSAGE, BATCH_ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME,
// PEEK_MESSAGE, NOTIFICATION and POLLING_INFO over the same service.
//
// # Receipt handles
//
// Java's ExtraInfo with the proxy's commit-log offset appended (see
// Handle): "startOffset popTime invisibleTime reviveQid topicType
// brokerName queueId offset commitLogOffset". A remoting pop response
// carries the first eight fields in each message's POP_CK property.
//
// # On-disk state (all in the message store)
//
//   - The revive topic rmq_sys_REVIVE_LOG_<cluster>, ReviveQueueNum queues
//     (a pop's checkpoint goes to queue queueId % ReviveQueueNum). Records
//     are JSON bodies tagged as Java's: "ck" a checkpoint (PopCheckPoint:
//     so start offset, pt pop time, it invisible time ms, n count, q queue,
//     t topic read, c group, d the messages' offset differences to so,
//     bn broker), "ack" one ack (AckMsg: ao offset, so, c, t, q, pt, bn),
//     "bAck" several (BatchAckMsg: aol offsets). Unlike Java, the records
//     are stored at once, not as timer messages due at the revive time:
//     the service keeps the pending checkpoints in memory and revives each
//     when its time comes. A revive stores the un-acked messages in the
//     retry topic and then a "bAck" of them, which finishes the
//     checkpoint. A FIFO ack is an "ack"/"bAck" with "fo", the group's
//     consumer offset of the queue after it (FIFO pops write no
//     checkpoints, as Java's).
//   - The consumer offsets (the broker's consumerOffset.json): a group's
//     pop offset of each queue it pops (committed once the pop's
//     checkpoint is stored), and the revive offsets of group
//     CID_RMQ_SYS_REVIVE_GROUP on the revive topic: every record below a
//     queue's revive offset belongs to a finished checkpoint.
//
// Recovery (Start) reads each revive queue from its revive offset:
// checkpoints found become pending again, acks mark their messages, and
// pop offsets move past every checkpoint found. So after a crash (the
// consumer offsets on file may be seconds old) every un-acked message
// comes back after its invisible time, and an acked message whose ack was
// answered is not delivered again (its ack record is in the log after its
// checkpoint). The narrow windows that deliver twice instead: a crash
// between a revive's retry copies and its "bAck", or between a change of
// invisible time's new checkpoint and the ack of the old handle.
//
// # Concurrency
//
// Every method is safe for concurrent use. One mutex (mu) guards the
// pending checkpoints and the FIFO queues; a lock per (group, topic,
// queue) serializes pops of one queue (a pop that finds it taken skips
// the queue, as Java's tryLock); a lock per revive queue orders a
// record's store with the bookkeeping of its offset. Acks count
// themselves in mu (acking) between their check and their record, and
// the revive service revives nothing while one is in progress, so an ack
// answered before the invisible time ran out is never overtaken by the
// revive. The revive service is one goroutine between Start and Stop;
// long polls wait on a channel per topic that Notify closes.
//
// The package never imports engine/broker: Deps is its view of the store,
// the topic table, the consumer offsets and the subscription groups.
package pop

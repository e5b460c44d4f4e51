// Package txn is the broker's transactional messages, in the shape of
// RocketMQ's TransactionalMessageBridge, TransactionalMessageServiceImpl,
// EndTransactionProcessor and TransactionalMessageCheckService.
//
// A producer sends a half (prepared) message: TRAN_MSG=true, the SYSFLAG's
// transaction bits PREPARED. It is stored in RMQ_SYS_TRANS_HALF_TOPIC
// queue 0 with its destination in REAL_TOPIC/REAL_QID, its UNIQ_KEY copied
// to __transactionId__ and the transaction bits cleared (so the half
// topic's consume queue indexes it); consumers of the real topic never see
// it. END_TRANSACTION (37) commits it — the half is read back by its
// commit-log offset and stored in its real topic with the transaction bits
// COMMIT and PreparedTransactionOffset set to the half's commit-log offset —
// or rolls it back; either way an op record marks the half resolved.
//
// On-disk state, all in the message store:
//
//   - RMQ_SYS_TRANS_HALF_TOPIC queue 0: half messages, and the copies the
//     check service re-puts (TRANSACTION_CHECK_TIMES counts the checks;
//     TRAN_PREPARED_QUEUE_OFFSET names the first half's queue offset).
//   - RMQ_SYS_TRANS_OP_HALF_TOPIC queue 0: op records, tag "d", body the
//     decimal queue offsets of the halves they resolve, separated by ","
//     (one offset, as RocketMQ 4.x writes them; a re-put copy also names
//     its first half's offset). RocketMQ 5's batched "o1,o2," parses too.
//   - Consumer offsets of group CID_RMQ_SYS_TRANS on both topics (the
//     check service's progress, as Java keeps it): every half below the
//     half offset is resolved, re-put for a check, or discarded; every op
//     record below the op offset names only halves below the half offset.
//     Halves above it survive a restart and are checked again; resolved
//     ones are not.
//
// The check service scans every TransactionCheckInterval: a half older
// than TransactionTimeout without an op record is re-put as a copy with
// TRANSACTION_CHECK_TIMES bumped, and CHECK_TRANSACTION_STATE (39) goes
// oneway to a live connection of its producer group (PGROUP) with the copy
// encoded as the body; the producer answers with a oneway END_TRANSACTION
// naming the copy. A half checked TransactionCheckMax times is discarded to
// TRANS_CHECK_MAX_TIME_TOPIC. Only a master checks.
//
// Concurrency: END_TRANSACTION handlers run on their own executor; the
// check service is one goroutine. They share txnState.resolved under its
// mutex: claiming a half there before committing it makes a repeated
// END_TRANSACTION — or the answer to a check racing a late commit of the
// same transaction — store the message once (best effort across restarts:
// the set is rebuilt from the op records the scan reads).
//
// It serves END_TRANSACTION (Service.Register); Service.DivertHalf is the
// send path's diversion of a half message. It is not the store, the
// client tables (Deps.ProducerConn finds a producer to check back) nor
// the send path that stores a committed message (Deps.StoreCommitted
// applies the delay level and timer and stores it). The package never
// imports engine/broker.
package txn

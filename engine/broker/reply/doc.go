// Package reply is the broker's request-reply (RocketMQ 4.6+), in the
// shape of ReplyMessageProcessor: a requester sends an ordinary message
// with CORRELATION_ID, REPLY_TO_CLIENT (its client id) and TTL; the
// consumer answers with a message of MSG_TYPE "reply" to the cluster's
// reply topic, sent as SEND_REPLY_MESSAGE(_V2) (324/325); the broker
// pushes that reply to the requester's connection
// (PUSH_REPLY_MESSAGE_TO_CLIENT, 326) and, with Config.StoreReplies, also
// stores it in the reply topic.
//
// It serves SEND_REPLY_MESSAGE(_V2) (Service.Register) on its own
// executor, whose workers wait for the requester's answer to the push.
// Service.NoteRequester is the send path's note of the connection a
// request came over. It is not the send path (Deps.Prepare applies the
// send checks and picks the queue, Deps.Put stores), nor the client
// tables (Deps.ProducerConn finds a requester that sent a heartbeat).
// The package never imports engine/broker.
//
// Concurrency: all methods are safe for concurrent use; the requester
// table has its own mutex and a connection's close callback removes it.
package reply

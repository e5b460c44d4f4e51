// Package remoting implements RocketMQ's remoting protocol: the frame codec
// (JSON and ROCKETMQ binary headers), a TCP server that dispatches requests to
// processors on bounded executors, and a client with connection reuse and
// opaque-matched request/response calls. It imports only the standard library.
//
// # Frame
//
// Every message on a connection, request or response, is one frame (all
// integers big endian):
//
//	+--------------+-----------------------------------+--------------+------------+
//	| int32 length | int32 serializeType<<24 | hdrLen  | header bytes | body bytes |
//	+--------------+-----------------------------------+--------------+------------+
//	length = 4 + hdrLen + len(body)   (the length field itself is not counted)
//
// hdrLen is the low 24 bits of the second word, the serialize type its top
// byte: 0 = JSON, 1 = ROCKETMQ (binary). A frame whose 4+length exceeds the
// configured maximum (16 MiB by default, as Netty's LengthFieldBasedFrameDecoder
// in the Java broker), whose length is below 4, whose hdrLen exceeds length-4,
// whose serialize type is unknown, or whose header is not a JSON object or a
// well-formed ROCKETMQ header, is a protocol error: the connection is closed
// (the opaque of a frame whose header cannot be read is unknown, so no error
// response is possible). Anything else wrong with a well-framed request is
// answered with its opaque and the connection stays up (see badinput.go).
//
// # JSON header
//
// An object with the RemotingCommand fields; this package writes them with
// sorted keys, as fastjson does in the Java broker:
//
//	{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":0,
//	 "serializeTypeCurrentRPC":"JSON","version":453}
//
// remark and extFields are omitted when empty. Every extFields value is
// written as a JSON string (the Go client rejects a header with a numeric ext
// value). The decoder reads what other clients write, as the Java broker
// does: extFields values that are strings, numbers (kept as their literal
// text: "readQueueNums":8 reads as "8"), booleans ("true"/"false") or null
// (absent); integers as numbers or numeric strings; member names
// case-insensitively; unknown members skipped; any JSON value as language.
// A member of the wrong type (an object as code, an array as an ext value)
// is answered SYSTEM_ERROR naming the member, and so is a header (JSON or
// ROCKETMQ) with more than MaxExtFields (256) extFields entries, whose
// keys beyond the bound are not stored. The header as a whole is bounded
// by the frame (16 MiB by default) and its 24-bit length.
//
// # ROCKETMQ binary header
//
//	int16 code | int8 language | int16 version | int32 opaque | int32 flag |
//	int32 remarkLen, remark | int32 extLen, extLen bytes of
//	{int16 keyLen, key, int32 valLen, value}...
//
// # Flags, opaque, oneway
//
// flag bit 0 (FlagResponse) marks a response, bit 1 (FlagOneway) a oneway
// request. A response echoes the request's opaque. A request with the oneway
// bit gets no response. The official Go client never sets the oneway bit (its
// "oneway" requests carry flag 0) and drops replies it does not wait for, so
// processors should answer every request that lacks the bit.
//
// # Concurrency
//
// A Conn is safe for concurrent use: frames are written whole under a
// per-connection mutex, one goroutine reads, and requests are handled
// concurrently (each on its processor's Executor on a server, on its own
// goroutine on a client). A Command is owned by one goroutine at a time; the
// request handed to a processor must not be modified after it was replied to.
// Server and Client are safe for concurrent use; processors are registered
// before Start.
//
// # Memory
//
// A request read by a server connection costs one allocation when its
// processor recycles it: the 256-byte chunk its header's decoded strings
// (ExtFields keys and values, remark) are copied into, unless they are
// interned (strArena, intern.go); a string over 64 bytes that does not
// fit gets its own. No decoded string points into the frame or into
// another header's strings, so one the broker keeps (a topic name) pins
// at most its chunk. Its frame buffer (up to 64 KiB),
// its Command and its ExtFields map come from pools, and go back to them
// only when the processor calls Command.Release after answering — the
// broker does for single sends — so a processor that keeps a request, its
// Body (which points into the frame) or its map is never affected; the
// header's strings never point into the frame. See recycle.go.
package remoting

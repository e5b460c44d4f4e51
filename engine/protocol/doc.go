// Package protocol holds the types and constants of RocketMQ's remoting
// protocol that both sides of a connection need: topic configs and their
// DataVersion, permission bits, system topic names, route and cluster data,
// broker registration bodies, subscription-group configs, the admin bodies
// the broker writes and the admin client reads, the request headers both
// sides encode and parse (SEND_MESSAGE's with its V2 one-letter names,
// PULL_MESSAGE's, END_TRANSACTION's, REGISTER_BROKER's; a bad field is a
// *FieldError, which engine/remoting answers SYSTEM_ERROR with Java's
// remark), and (codes.go) the request and response codes with their names. Headers are read from and written to
// plain map[string]string, the underlying type of remoting.ExtFields, so
// this package never imports the transport.
//
// It is defined once here and imported by the broker, the name server, the
// admin client (cmd/brokerlab/internal/mqadmin) and the drivers, so no client
// imports a server package for its types.
//
// What it is not: it does no I/O, holds no state and knows nothing of frames,
// connections or the header codec — that is engine/remoting, the transport.
// Encoders that depend on remoting's JSON writer stay with their users; the
// pure encoders and decoders of bodies whose wire form encoding/json cannot
// produce or read (route data with numeric keys) live here. The package
// imports only the standard library (protocol_test.go checks it), so
// engine/remoting, engine/store and engine/acl could all import it.
//
// Field order in every JSON struct is the wire order (fastjson writes fields
// alphabetically); changing it changes bytes on the wire and in config files.
//
// Everything here is a plain value: safe for concurrent use as long as
// callers do not share a value they mutate.
package protocol

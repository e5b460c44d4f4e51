// Package acl is RocketMQ's plain access control (the "ACL 1.0" of
// rocketmq-acl's PlainAccessValidator): accounts identified by an access key,
// requests signed with the account's secret key, per-topic and per-group
// permissions, admin-only request codes and white-listed remote addresses.
//
// # Model
//
// A Config is the content of a plain_acl.yml file: globalWhiteRemoteAddresses
// and accounts, each with accessKey, secretKey, whiteRemoteAddress, admin,
// defaultTopicPerm, defaultGroupPerm, topicPerms and groupPerms ("Name=PERM"
// entries, PERM one of PUB, SUB, PUB|SUB, SUB|PUB, DENY). Compile validates
// it into immutable Rules; a Checker holds the current Rules and swaps them
// atomically (Store), so a reloaded file takes effect for the next request
// without locking the request path.
//
// # Decision order (PlainPermissionManager.validate)
//
//  1. A remote address matching a global white address is let through.
//  2. A request without an AccessKey field is refused; so is an unknown key.
//  3. A remote address matching the account's whiteRemoteAddress is let
//     through without a signature or permission check (as RocketMQ does).
//  4. The Signature field must equal Base64(HmacSHA1(secretKey, content)),
//     content being the values of all other ext fields in key order followed
//     by the body (see Content).
//  5. A send of RMQ_SYS_TRACE_TOPIC needs nothing more.
//  6. Admin accounts may do anything; admin-only request codes (AdminCodes)
//     are refused to other accounts.
//  7. Every resource the request touches (Resources) needs its permission:
//     the account's explicit entry for it, or else its default topic or
//     group permission. DENY in the owned permission refuses.
//
// Groups are keyed as their retry topic "%RETRY%<group>", as RocketMQ keys
// them, so a request naming a %RETRY% topic is checked against the group.
//
// Concurrency: Rules are immutable after Compile; a Checker is safe for
// concurrent use.
package acl

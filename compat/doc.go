// Package compat holds brokerlab's compatibility test: the official Apache
// RocketMQ Go client (github.com/apache/rocketmq-client-go/v2), unmodified,
// against brokerlab's name server and broker on loopback. It is a separate
// module so the client's dependencies stay out of brokerlab's go.mod.
//
//	cd compat && go test ./...
package compat

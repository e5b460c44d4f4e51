package broker

import (
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// authorize checks a request against the access-control list (Config.ACL,
// RocketMQ's plain ACL): nil lets it through; a refusal is NO_PERMISSION
// with a remark naming the account, the resource and the permission, before
// the handler runs, so nothing is stored or changed. Refusals are logged at
// most once per second (the first of each second; Checker.Counts has them all).
func (b *Broker) authorize(code int32, conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	c := b.cfg.ACL
	if c == nil {
		return nil
	}
	remote := ""
	if a := conn.RemoteAddr(); a != nil {
		remote = a.String()
	}
	err := c.Check(acl.Request{Code: code, CodeName: protocol.RequestCodeName(code), Version: req.Version,
		RemoteAddr: remote, Ext: req.ExtFields, Body: req.Body})
	if err == nil {
		return nil
	}
	if now := time.Now().Unix(); aclLogSecond.Swap(now) != now {
		b.log.Warn("request refused by the ACL", "remote", remote, "code", protocol.RequestCodeName(code), "reason", err)
	}
	return remoting.NewResponse(protocol.RespNoPermission, err.Error())
}

// aclLogSecond is the Unix second of the last logged refusal (shared by the
// brokers of a process: a rate limit on logging only).
var aclLogSecond atomic.Int64

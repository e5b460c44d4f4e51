package broker

// registerReply registers request-reply (324/325) and CHECK_CLIENT_CONFIG (46).
func (b *Broker) registerReply() {}

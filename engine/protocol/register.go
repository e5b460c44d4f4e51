package protocol

// RegisterBrokerBody is the body of REGISTER_BROKER (103): the broker's topic
// table (a client older than V3_0_11 sends the wrapper alone).
type RegisterBrokerBody struct {
	FilterServerList            []string                    `json:"filterServerList"`
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
}

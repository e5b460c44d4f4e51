package natsdriver

import (
	"fmt"
	"strconv"
	"strings"
)

// escapeTopic keeps [A-Za-z0-9_-] and writes any other byte as %XX.
func escapeTopic(topic string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// queueNames are the JetStream names of one (topic, queue).
type queueNames struct {
	stream, subject, directGet string
}

func namesOf(topic string, queueID int32) (queueNames, error) {
	if topic == "" || queueID < 0 {
		return queueNames{}, fmt.Errorf("%w: topic %q queue %d", ErrQueue, topic, queueID)
	}
	esc, q := escapeTopic(topic), strconv.Itoa(int(queueID))
	stream := esc + "~" + q
	return queueNames{stream: stream, subject: esc + "." + q, directGet: "$JS.API.DIRECT.GET." + stream}, nil
}

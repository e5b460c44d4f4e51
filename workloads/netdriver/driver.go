package netdriver

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/workloads"
)

// Driver is the broker as the harness sees it.
type Driver struct {
	cfg      Config
	namesrvs []string
	client   *remoting.Client
	closed   atomic.Bool

	mu struct {
		sync.RWMutex
		routes  map[string]*route
		batches map[queueRef]*batchQueue
	}
}

var (
	_ workloads.Driver = (*Driver)(nil)
	_ workloads.Source = (*Driver)(nil)
)

// New returns a driver; connections are made on first use.
func New(cfg Config) (*Driver, error) {
	d := &Driver{cfg: cfg}
	for _, a := range strings.FieldsFunc(cfg.Namesrv, func(r rune) bool { return r == ';' || r == ',' }) {
		d.namesrvs = append(d.namesrvs, strings.TrimSpace(a))
	}
	if len(d.namesrvs) == 0 && cfg.Broker == "" {
		return nil, fmt.Errorf("%w: a name server or a broker address is required", ErrBadConfig)
	}
	if d.cfg.Name == "" {
		d.cfg.Name = "broker"
	}
	if d.cfg.Timeout <= 0 {
		d.cfg.Timeout = 3 * time.Second
	}
	if d.cfg.MaxInFlightBatches <= 0 {
		d.cfg.MaxInFlightBatches = 2
	}
	if cfg.TLS && cfg.Client.TLS == nil {
		cfg.Client.TLS = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}
	}
	d.client = remoting.NewClient(cfg.Client)
	d.mu.routes = make(map[string]*route)
	d.mu.batches = make(map[queueRef]*batchQueue)
	return d, nil
}

// Name implements workloads.Driver.
func (d *Driver) Name() string { return d.cfg.Name }

// Close implements workloads.Driver: it closes the connections.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	return d.client.Close()
}

// invoke sends req to addr and returns the response if its code is SUCCESS.
func (d *Driver) invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	if d.closed.Load() {
		return nil, workloads.ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	resp, err := d.client.InvokeSync(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("netdriver: %s to %s: %w", protocol.RequestCodeName(req.Code), addr, err)
	}
	return resp, checkCode(req.Code, resp)
}

func checkCode(code int32, resp *remoting.Command) error {
	if resp.Code == protocol.RespSuccess {
		return nil
	}
	return fmt.Errorf("%w: %s: %w", ErrRejected, protocol.RequestCodeName(code),
		&remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
}

// sendRequest builds the SEND_MESSAGE_V2 request of m for queue q.
func (d *Driver) sendRequest(m *workloads.Message, q queueRef) *remoting.Command {
	h := protocol.SendMessageHeader{
		ProducerGroup: d.cfg.ProducerGroup, Topic: m.Topic, DefaultTopic: protocol.DefaultTopic, DefaultTopicQueueNums: 4,
		QueueID: q.queueID, BornTimestamp: time.Now().UnixMilli(), Properties: properties(m), BrokerName: q.brokerName,
	}
	req := remoting.NewRequest(protocol.ReqSendMessageV2, h.ExtFields(true))
	req.Body = m.Body
	return req
}

func properties(m *workloads.Message) string {
	var p []byte
	if m.Tags != "" {
		p = record.AppendProperty(p, record.PropertyTags, m.Tags)
	}
	if m.Keys != "" {
		p = record.AppendProperty(p, record.PropertyKeys, m.Keys)
	}
	return string(p)
}

// Send implements workloads.Driver: it returns once the broker acknowledged
// m under its flush policy (a FLUSH_DISK_TIMEOUT answer is an error).
func (d *Driver) Send(ctx context.Context, m *workloads.Message) error {
	q, err := d.queue(ctx, m.Topic, m.QueueID, true)
	if err != nil {
		return err
	}
	if d.cfg.Batch > 1 {
		return d.batchQueue(q, m.Topic).send(ctx, m)
	}
	_, err = d.invoke(ctx, q.addr, d.sendRequest(m, q))
	d.forgetOnTopicError(m.Topic, err)
	return err
}

// openQueue is the queue an asynchronous or oneway send of m goes to, or
// workloads.ErrClosed once the driver is closed.
func (d *Driver) openQueue(ctx context.Context, m *workloads.Message) (queueRef, error) {
	if d.closed.Load() {
		return queueRef{}, workloads.ErrClosed
	}
	return d.queue(ctx, m.Topic, m.QueueID, true)
}

// SendAsync sends m and calls cb with the outcome once, from another
// goroutine, unless SendAsync itself returns an error.
func (d *Driver) SendAsync(ctx context.Context, m *workloads.Message, cb func(error)) error {
	q, err := d.openQueue(ctx, m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	req := d.sendRequest(m, q)
	err = d.client.InvokeAsync(ctx, q.addr, req, func(resp *remoting.Command, err error) {
		cancel()
		if err == nil {
			err = checkCode(req.Code, resp)
		}
		cb(err)
	})
	if err != nil {
		cancel()
	}
	return err
}

// SendOneway writes m with the oneway flag: the broker stores it without
// answering, so nothing reports whether it was stored.
func (d *Driver) SendOneway(ctx context.Context, m *workloads.Message) error {
	q, err := d.openQueue(ctx, m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	return d.client.InvokeOneway(ctx, q.addr, d.sendRequest(m, q))
}

// SendBatch sends ms, which must share topic and queue, as one
// SEND_BATCH_MESSAGE request.
func (d *Driver) SendBatch(ctx context.Context, ms []*workloads.Message) error {
	if len(ms) == 0 {
		return nil
	}
	q, err := d.queue(ctx, ms[0].Topic, ms[0].QueueID, true)
	if err != nil {
		return err
	}
	for _, m := range ms[1:] {
		if m.Topic != ms[0].Topic || m.QueueID != ms[0].QueueID {
			return fmt.Errorf("%w: a batch spans queues", ErrBadConfig)
		}
	}
	return d.sendBatchTo(ctx, q, ms[0].Topic, ms)
}

func (d *Driver) sendBatchTo(ctx context.Context, q queueRef, topic string, ms []*workloads.Message) error {
	items := make([]record.BatchItem, len(ms))
	n := 0
	for i, m := range ms {
		items[i] = record.BatchItem{Body: m.Body, Properties: properties(m)}
		n += items[i].Size()
	}
	body := make([]byte, 0, n)
	for _, it := range items {
		body = record.AppendBatchItem(body, it)
	}
	h := protocol.SendMessageHeader{
		ProducerGroup: d.cfg.ProducerGroup, Topic: topic, DefaultTopic: protocol.DefaultTopic, DefaultTopicQueueNums: 4,
		QueueID: q.queueID, BornTimestamp: time.Now().UnixMilli(), Batch: true, BrokerName: q.brokerName,
	}
	req := remoting.NewRequest(protocol.ReqSendBatchMessage, h.ExtFields(true))
	req.Body = body
	_, err := d.invoke(ctx, q.addr, req)
	d.forgetOnTopicError(topic, err)
	return err
}

// forgetOnTopicError drops the route of a topic the broker says it does not
// have, so the next call asks the name servers again.
func (d *Driver) forgetOnTopicError(topic string, err error) {
	if err == nil {
		return
	}
	if re, ok := remoting.AsResponseError(err); ok && (re.Code == protocol.RespTopicNotExist || re.Code == protocol.RespNoPermission) {
		d.forget(topic)
	}
}

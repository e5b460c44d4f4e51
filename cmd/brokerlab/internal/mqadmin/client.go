package mqadmin

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/engine/acl"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// uniqueKeyQueryFlag is the ext field QUERY_MESSAGE carries when the key is
// a client message id (MixAll.UNIQUE_MSG_QUERY_FLAG).
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

var (
	// ErrNoNamesrv: a name server is needed and none was given.
	ErrNoNamesrv = errors.New("mqadmin: no name server address (-n or NAMESRV_ADDR)")
	// ErrNotFound: the cluster, topic, group or message asked for does not exist.
	ErrNotFound = errors.New("mqadmin: not found")
)

// Config configures an Admin.
type Config struct {
	// NamesrvAddrs are tried in order; the first that answers is used.
	NamesrvAddrs []string
	// Timeout bounds each request (default 5 s, DefaultMQAdminExt's timeoutMillis).
	Timeout time.Duration
	// TLS, if set, is used on every connection.
	TLS *tls.Config
	// AccessKey and SecretKey, if set, sign every request as RocketMQ's
	// AclClientRPCHook does (brokers running with an ACL file).
	AccessKey, SecretKey string
}

// Admin sends admin requests to name servers and brokers. Safe for
// concurrent use; Close it when done.
type Admin struct {
	cfg Config
	cl  *remoting.Client
}

// New returns an Admin; connections are opened on first use.
func New(cfg Config) *Admin {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	cc := remoting.DefaultClientConfig()
	cc.TLS = cfg.TLS
	cc.DialTimeout = min(cc.DialTimeout, cfg.Timeout)
	return &Admin{cfg: cfg, cl: remoting.NewClient(cc)}
}

// Close closes every connection.
func (a *Admin) Close() error { return a.cl.Close() }

// NamesrvAddrs returns the configured name servers.
func (a *Admin) NamesrvAddrs() []string { return a.cfg.NamesrvAddrs }

func (a *Admin) invoke(ctx context.Context, addr string, code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Timeout)
	defer cancel()
	req := remoting.NewRequest(code, ext)
	req.Body = body
	if a.cfg.AccessKey != "" {
		acl.Sign(req.Ext(), body, req.Version, a.cfg.AccessKey, a.cfg.SecretKey, "")
	}
	resp, err := a.cl.InvokeSync(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("mqadmin: %s to %s: %w", protocol.RequestCodeName(code), addr, err)
	}
	return resp, nil
}

// call invokes and returns the response only if it is SUCCESS.
func (a *Admin) call(ctx context.Context, addr string, code int32, ext remoting.ExtFields, body []byte) (*remoting.Command, error) {
	resp, err := a.invoke(ctx, addr, code, ext, body)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.RespSuccess {
		return nil, responseErr(code, addr, resp)
	}
	return resp, nil
}

func responseErr(code int32, addr string, resp *remoting.Command) error {
	return fmt.Errorf("mqadmin: %s to %s: %w", protocol.RequestCodeName(code), addr,
		&remoting.ResponseError{Code: resp.Code, Remark: resp.Remark})
}

// ResponseCode returns the response code in err's chain, or -1.
func ResponseCode(err error) int32 {
	if re, ok := remoting.AsResponseError(err); ok {
		return re.Code
	}
	return -1
}

// namesrv sends a request to the first name server that answers.
func (a *Admin) namesrv(ctx context.Context, code int32, ext remoting.ExtFields) (*remoting.Command, string, error) {
	if len(a.cfg.NamesrvAddrs) == 0 {
		return nil, "", ErrNoNamesrv
	}
	var errs []error
	for _, addr := range a.cfg.NamesrvAddrs {
		resp, err := a.invoke(ctx, addr, code, ext, nil)
		if err == nil {
			return resp, addr, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", errors.Join(errs...)
}

// ClusterInfo asks a name server for its brokers by cluster (GET_BROKER_CLUSTER_INFO, 106).
func (a *Admin) ClusterInfo(ctx context.Context) (*protocol.ClusterInfo, error) {
	resp, addr, err := a.namesrv(ctx, protocol.ReqGetBrokerClusterInfo, nil)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.RespSuccess {
		return nil, responseErr(protocol.ReqGetBrokerClusterInfo, addr, resp)
	}
	return protocol.DecodeClusterInfo(resp.Body)
}

// TopicList asks a name server for every topic (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 206).
func (a *Admin) TopicList(ctx context.Context) ([]string, error) {
	resp, addr, err := a.namesrv(ctx, protocol.ReqGetAllTopicListFromNameserver, nil)
	if err != nil {
		return nil, err
	}
	if resp.Code != protocol.RespSuccess {
		return nil, responseErr(protocol.ReqGetAllTopicListFromNameserver, addr, resp)
	}
	return DecodeTopicList(resp.Body)
}

// TopicRoute asks a name server for topic's route (GET_ROUTEINFO_BY_TOPIC,
// 105); ErrNotFound if it has none.
func (a *Admin) TopicRoute(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	resp, addr, err := a.namesrv(ctx, protocol.ReqGetRouteInfoByTopic, remoting.ExtFields{"topic": topic})
	if err != nil {
		return nil, err
	}
	switch resp.Code {
	case protocol.RespSuccess:
		return protocol.DecodeTopicRouteData(resp.Body)
	case protocol.RespTopicNotExist:
		return nil, fmt.Errorf("%w: topic %q has no route on %s", ErrNotFound, topic, addr)
	}
	return nil, responseErr(protocol.ReqGetRouteInfoByTopic, addr, resp)
}

// DeleteTopicInNamesrvs removes topic's route on every name server
// (DELETE_TOPIC_IN_NAMESRV, 216), only cluster's brokers if cluster is set.
func (a *Admin) DeleteTopicInNamesrvs(ctx context.Context, topic, cluster string) error {
	if len(a.cfg.NamesrvAddrs) == 0 {
		return ErrNoNamesrv
	}
	ext := remoting.ExtFields{"topic": topic}
	if cluster != "" {
		ext["clusterName"] = cluster
	}
	for _, addr := range a.cfg.NamesrvAddrs {
		if _, err := a.call(ctx, addr, protocol.ReqDeleteTopicInNamesrv, ext, nil); err != nil {
			return err
		}
	}
	return nil
}

// CreateTopic creates or updates a topic on one broker (UPDATE_AND_CREATE_TOPIC, 17).
func (a *Admin) CreateTopic(ctx context.Context, addr string, tc protocol.CreateTopicRequestHeader) error {
	ext := remoting.ExtFields{"topic": tc.TopicName, "defaultTopic": protocol.DefaultTopic, "topicFilterType": protocol.DefaultTopicFilterType}
	ext.SetInt32("readQueueNums", tc.ReadQueueNums)
	ext.SetInt32("writeQueueNums", tc.WriteQueueNums)
	ext.SetInt32("perm", tc.Perm)
	ext.SetInt32("topicSysFlag", tc.TopicSysFlag)
	ext.SetBool("order", tc.Order)
	if tc.Attributes != "" {
		ext["attributes"] = tc.Attributes
	}
	_, err := a.call(ctx, addr, protocol.ReqUpdateAndCreateTopic, ext, nil)
	return err
}

// DeleteTopicInBroker deletes a topic on one broker (DELETE_TOPIC_IN_BROKER, 215).
func (a *Admin) DeleteTopicInBroker(ctx context.Context, addr, topic string) error {
	_, err := a.call(ctx, addr, protocol.ReqDeleteTopicInBroker, remoting.ExtFields{"topic": topic}, nil)
	return err
}

// TopicStats asks one broker for a topic's queue offsets (GET_TOPIC_STATS_INFO, 202).
func (a *Admin) TopicStats(ctx context.Context, addr, topic string) (*TopicStats, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetTopicStatsInfo, remoting.ExtFields{"topic": topic}, nil)
	if err != nil {
		return nil, err
	}
	return DecodeTopicStats(resp.Body)
}

// ConsumeStats asks one broker for a group's progress (GET_CONSUME_STATS,
// 208), on topic only if it is set.
func (a *Admin) ConsumeStats(ctx context.Context, addr, group, topic string) (*ConsumeStats, error) {
	ext := remoting.ExtFields{"consumerGroup": group}
	if topic != "" {
		ext["topic"] = topic
	}
	resp, err := a.call(ctx, addr, protocol.ReqGetConsumeStats, ext, nil)
	if err != nil {
		return nil, err
	}
	return DecodeConsumeStats(resp.Body)
}

// ConsumerConnection asks one broker for a group's consumers (GET_CONSUMER_CONNECTION_LIST, 203).
func (a *Admin) ConsumerConnection(ctx context.Context, addr, group string) (*ConsumerConnection, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetConsumerConnectionList, remoting.ExtFields{"consumerGroup": group}, nil)
	if err != nil {
		return nil, err
	}
	return DecodeConsumerConnection(resp.Body)
}

// ProducerConnection asks one broker for a group's producers (GET_PRODUCER_CONNECTION_LIST, 204).
func (a *Admin) ProducerConnection(ctx context.Context, addr, group string) ([]Connection, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetProducerConnectionList, remoting.ExtFields{"producerGroup": group}, nil)
	if err != nil {
		return nil, err
	}
	return DecodeProducerConnection(resp.Body)
}

// ConsumeByWho asks one broker which groups consume topic (QUERY_TOPIC_CONSUME_BY_WHO, 300).
func (a *Admin) ConsumeByWho(ctx context.Context, addr, topic string) ([]string, error) {
	resp, err := a.call(ctx, addr, protocol.ReqQueryTopicConsumeByWho, remoting.ExtFields{"topic": topic}, nil)
	if err != nil {
		return nil, err
	}
	return DecodeGroupList(resp.Body)
}

// ResetOffset asks one broker to reset group's offsets on topic to the
// first message stored at or after timestamp (ms; -1 = the queue ends) and
// push them to the group's live consumers (INVOKE_BROKER_TO_RESET_OFFSET,
// 222). force resets forward too. A 4.x broker answers a group with no
// live consumer CONSUMER_NOT_ONLINE (see ResponseCode); brokerlab and 5.x
// brokers commit the reset and answer SUCCESS.
func (a *Admin) ResetOffset(ctx context.Context, addr, topic, group string, timestamp int64, force bool) ([]QueueOffset, error) {
	ext := remoting.ExtFields{"topic": topic, "group": group, "queueId": "-1", "offset": "-1"}
	ext.SetInt64("timestamp", timestamp)
	ext.SetBool("isForce", force)
	return a.resetOffset(ctx, addr, ext)
}

// resetOffset sends INVOKE_BROKER_TO_RESET_OFFSET and decodes the offset
// table it answers with.
func (a *Admin) resetOffset(ctx context.Context, addr string, ext remoting.ExtFields) ([]QueueOffset, error) {
	resp, err := a.call(ctx, addr, protocol.ReqInvokeBrokerToResetOffset, ext, nil)
	if err != nil {
		return nil, err
	}
	if len(resp.Body) == 0 {
		return []QueueOffset{}, nil
	}
	return DecodeResetOffsetBody(resp.Body)
}

// ResetQueueOffset asks one broker to push offset for one queue to group's
// live consumers (INVOKE_BROKER_TO_RESET_OFFSET with queueId and offset,
// as resetOffsetByQueueId sends after committing the offset).
func (a *Admin) ResetQueueOffset(ctx context.Context, addr, topic, group string, queueID int32, offset int64) ([]QueueOffset, error) {
	ext := remoting.ExtFields{"topic": topic, "group": group, "timestamp": "0", "isForce": "true"}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("offset", offset)
	return a.resetOffset(ctx, addr, ext)
}

// SearchOffset asks one broker for the offset of the first message of a
// queue stored at or after timestamp (SEARCH_OFFSET_BY_TIMESTAMP, 29).
func (a *Admin) SearchOffset(ctx context.Context, addr, topic string, queueID int32, timestamp int64) (int64, error) {
	ext := remoting.ExtFields{"topic": topic}
	ext.SetInt32("queueId", queueID)
	ext.SetInt64("timestamp", timestamp)
	resp, err := a.call(ctx, addr, protocol.ReqSearchOffsetByTimestamp, ext, nil)
	if err != nil {
		return 0, err
	}
	return resp.Ext().Int64("offset")
}

// MaxOffset asks one broker for a queue's max offset (GET_MAX_OFFSET, 30).
func (a *Admin) MaxOffset(ctx context.Context, addr, topic string, queueID int32) (int64, error) {
	ext := remoting.ExtFields{"topic": topic}
	ext.SetInt32("queueId", queueID)
	resp, err := a.call(ctx, addr, protocol.ReqGetMaxOffset, ext, nil)
	if err != nil {
		return 0, err
	}
	return resp.Ext().Int64("offset")
}

// UpdateConsumerOffset commits a group's offset of one queue (UPDATE_CONSUMER_OFFSET, 15).
func (a *Admin) UpdateConsumerOffset(ctx context.Context, addr, group string, mq protocol.MessageQueue, offset int64) error {
	ext := remoting.ExtFields{"consumerGroup": group, "topic": mq.Topic}
	ext.SetInt32("queueId", mq.QueueID)
	ext.SetInt64("commitOffset", offset)
	_, err := a.call(ctx, addr, protocol.ReqUpdateConsumerOffset, ext, nil)
	return err
}

// CreateSubscriptionGroup creates or updates a group on one broker
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, 200).
func (a *Admin) CreateSubscriptionGroup(ctx context.Context, addr string, cfg protocol.SubscriptionGroupConfig) error {
	if cfg.Attributes == nil {
		cfg.Attributes = map[string]string{}
	}
	body, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("mqadmin: subscription group %s: %w", cfg.GroupName, err)
	}
	_, err = a.call(ctx, addr, protocol.ReqUpdateAndCreateSubscriptionGroup, nil, body)
	return err
}

// DeleteSubscriptionGroup deletes a group on one broker, its consumer
// offsets too if cleanOffset (DELETE_SUBSCRIPTIONGROUP, 207).
func (a *Admin) DeleteSubscriptionGroup(ctx context.Context, addr, group string, cleanOffset bool) error {
	ext := remoting.ExtFields{"groupName": group}
	ext.SetBool("cleanOffset", cleanOffset)
	_, err := a.call(ctx, addr, protocol.ReqDeleteSubscriptionGroup, ext, nil)
	return err
}

// SubscriptionGroups asks one broker for its groups (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, 201).
func (a *Admin) SubscriptionGroups(ctx context.Context, addr string) ([]protocol.SubscriptionGroupConfig, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetAllSubscriptionGroupConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	return DecodeSubscriptionGroups(resp.Body)
}

// RuntimeInfo asks one broker for its runtime stats table (GET_BROKER_RUNTIME_INFO, 28).
func (a *Admin) RuntimeInfo(ctx context.Context, addr string) (map[string]string, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetBrokerRuntimeInfo, nil, nil)
	if err != nil {
		return nil, err
	}
	return DecodeKVTable(resp.Body)
}

// BrokerConfig asks one broker for its configuration (GET_BROKER_CONFIG, 26).
func (a *Admin) BrokerConfig(ctx context.Context, addr string) (map[string]string, error) {
	resp, err := a.call(ctx, addr, protocol.ReqGetBrokerConfig, nil, nil)
	if err != nil {
		return nil, err
	}
	return ParseProperties(string(resp.Body))
}

// UpdateBrokerConfig sets broker configuration keys on one broker (UPDATE_BROKER_CONFIG, 25).
func (a *Admin) UpdateBrokerConfig(ctx context.Context, addr string, props map[string]string) error {
	if len(props) == 0 {
		return nil
	}
	_, err := a.call(ctx, addr, protocol.ReqUpdateBrokerConfig, nil, []byte(FormatProperties(props)))
	return err
}

// QueryResult is one broker's QUERY_MESSAGE answer.
type QueryResult struct {
	IndexLastUpdateTimestamp int64
	Messages                 []Message
}

// QueryMessage asks one broker for the messages of topic indexed under key
// (a KEYS entry, or a client message id if uniq) stored within [begin,
// end] ms (QUERY_MESSAGE, 12). QUERY_NOT_FOUND is an empty result.
func (a *Admin) QueryMessage(ctx context.Context, addr, topic, key string, maxNum int32, begin, end int64, uniq bool) (*QueryResult, error) {
	ext := remoting.ExtFields{"topic": topic, "key": key, uniqueKeyQueryFlag: strconv.FormatBool(uniq)}
	ext.SetInt32("maxNum", maxNum)
	ext.SetInt64("beginTimestamp", begin)
	ext.SetInt64("endTimestamp", end)
	resp, err := a.invoke(ctx, addr, protocol.ReqQueryMessage, ext, nil)
	if err != nil {
		return nil, err
	}
	switch resp.Code {
	case protocol.RespSuccess:
	case protocol.RespQueryNotFound:
		return &QueryResult{}, nil
	default:
		return nil, responseErr(protocol.ReqQueryMessage, addr, resp)
	}
	res := &QueryResult{}
	res.IndexLastUpdateTimestamp, _ = resp.Ext().OptInt64("indexLastUpdateTimestamp", 0)
	if res.Messages, err = DecodeMessages(resp.Body); err != nil {
		return nil, err
	}
	return res, nil
}

// ViewMessage reads the message at a commit-log offset of one broker (VIEW_MESSAGE_BY_ID, 33).
func (a *Admin) ViewMessage(ctx context.Context, addr, topic string, offset int64) (*Message, error) {
	ext := remoting.ExtFields{}
	if topic != "" {
		ext["topic"] = topic
	}
	ext.SetInt64("offset", offset)
	resp, err := a.call(ctx, addr, protocol.ReqViewMessageByID, ext, nil)
	if err != nil {
		return nil, err
	}
	msgs, err := DecodeMessages(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no message at offset %d of %s", ErrNotFound, offset, addr)
	}
	return &msgs[0], nil
}

package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// configBlackList are the keys UPDATE_BROKER_CONFIG refuses with
// NO_PERMISSION (Java's default configBlackList).
var configBlackList = []string{"configBlackList", "brokerConfigPath"}

// liveConfigKey is a broker setting UPDATE_BROKER_CONFIG changes at run
// time: set parses and applies a value.
type liveConfigKey struct {
	get func(b *Broker) string
	set func(b *Broker, v string) error
}

func boolKey(f func(b *Broker) *atomic.Bool) liveConfigKey {
	return liveConfigKey{
		get: func(b *Broker) string { return strconv.FormatBool(f(b).Load()) },
		set: func(b *Broker, v string) error {
			x, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return err
			}
			f(b).Store(x)
			return nil
		},
	}
}

// liveConfig are the settings that take effect at once when updated.
// Everything else GET_BROKER_CONFIG shows is fixed for the process (the
// listener, pools, store layout and roles are built at start).
var liveConfig = map[string]liveConfigKey{
	"autoCreateSubscriptionGroup": boolKey(func(b *Broker) *atomic.Bool { return &b.ops.autoCreateSubGroup }),
	"autoCreateTopicEnable":       boolKey(func(b *Broker) *atomic.Bool { return &b.ops.autoCreateTopic }),
	"longPollingEnable":           boolKey(func(b *Broker) *atomic.Bool { return &b.ops.longPolling }),
	"shortPollingTimeMills": {
		get: func(b *Broker) string {
			return strconv.FormatInt(time.Duration(b.ops.shortPolling.Load()).Milliseconds(), 10)
		},
		set: func(b *Broker, v string) error {
			ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || ms < 0 {
				return fmt.Errorf("not a non-negative number of milliseconds: %q", v)
			}
			b.ops.shortPolling.Store(int64(time.Duration(ms) * time.Millisecond))
			return nil
		},
	},
}

// LiveConfigKeys lists the keys UPDATE_BROKER_CONFIG accepts, sorted.
func LiveConfigKeys() []string { return slices.Sorted(maps.Keys(liveConfig)) }

// brokerProperties is the broker's configuration under Java's key names
// (BrokerConfig, NettyServerConfig, MessageStoreConfig), as far as this
// broker has the setting.
func (b *Broker) brokerProperties() map[string]string {
	c := b.cfg
	p := map[string]string{
		"brokerName":                           c.BrokerName,
		"brokerClusterName":                    c.ClusterName,
		"brokerId":                             strconv.FormatInt(c.BrokerID, 10),
		"brokerRole":                           string(c.Role),
		"namesrvAddr":                          strings.Join(c.NamesrvAddrs, ";"),
		"defaultTopicQueueNums":                strconv.Itoa(int(c.DefaultTopicQueueNums)),
		"sendMessageThreadPoolNums":            strconv.Itoa(c.SendWorkers),
		"sendThreadPoolQueueCapacity":          strconv.Itoa(c.SendQueueSize),
		"waitTimeMillsInSendQueue":             strconv.FormatInt(c.SendQueueMaxWait.Milliseconds(), 10),
		"pullMessageThreadPoolNums":            strconv.Itoa(c.PullExecutor.Workers),
		"pullThreadPoolQueueCapacity":          strconv.Itoa(c.PullExecutor.QueueSize),
		"queryMessageThreadPoolNums":           strconv.Itoa(c.QueryExecutor.Workers),
		"queryThreadPoolQueueCapacity":         strconv.Itoa(c.QueryExecutor.QueueSize),
		"clientManageThreadPoolNums":           strconv.Itoa(c.ClientManageExecutor.Workers),
		"clientManagerThreadPoolQueueCapacity": strconv.Itoa(c.ClientManageExecutor.QueueSize),
		"heartbeatThreadPoolNums":              strconv.Itoa(c.HeartbeatExecutor.Workers),
		"heartbeatThreadPoolQueueCapacity":     strconv.Itoa(c.HeartbeatExecutor.QueueSize),
		"slaveReadEnable":                      strconv.FormatBool(c.SlaveReadEnable),
		"haMasterAddress":                      c.HAMasterAddr,
		"messageDelayLevel":                    FormatDelayLevels(c.DelayLevels),
		"maxMessageSize":                       strconv.Itoa(c.MaxBodySize),
		"registerBrokerTimeoutMills":           strconv.FormatInt(c.RegisterTimeout.Milliseconds(), 10),
		"configBlackList":                      strings.Join(configBlackList, ";"),
	}
	if b.storeHost.IsValid() {
		p["brokerIP1"] = b.storeHost.Addr().String()
		p["listenPort"] = strconv.Itoa(int(b.storeHost.Port()))
	}
	if ds, ok := b.store.(DiskStatser); ok {
		p["storePathRootDir"] = ds.DiskStats().Root
	}
	if es, ok := b.store.(EngineStore); ok {
		maps.Copy(p, storeConfigProperties(es.EngineStore().Config())) // ops_diskratio.go
	}
	for k, lk := range liveConfig {
		p[k] = lk.get(b)
	}
	maps.Copy(p, b.timerProperties())
	return p
}

// getBrokerConfig handles GET_BROKER_CONFIG (26): the properties as
// "key=value\n" lines sorted by key (MixAll.properties2String), the
// config's DataVersion as JSON in the header field version.
func (b *Broker) getBrokerConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	p := b.brokerProperties()
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(p[k])
		sb.WriteByte('\n')
	}
	b.ops.cfgVersion.Lock()
	ver, err := json.Marshal(b.ops.cfgVersion.v)
	b.ops.cfgVersion.Unlock()
	if err != nil {
		return nil, err
	}
	resp := bodyResponse([]byte(sb.String()))
	resp.Ext()["version"] = string(ver)
	return resp, nil
}

// parseProperties reads Java properties text: key=value or key:value
// lines, '#' and '!' comments, surrounding blanks trimmed.
func parseProperties(body []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			return nil, fmt.Errorf("line %q is not key=value", line)
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out, sc.Err()
}

// updateBrokerConfig handles UPDATE_BROKER_CONFIG (25): the body is Java
// properties text. Black-listed keys get NO_PERMISSION "Can not update
// config in black list."; a key that cannot change while the broker runs,
// or a bad value, gets INVALID_PARAMETER naming it, and nothing is applied.
// Otherwise every key takes effect at once and the config's DataVersion
// moves on. Changes last until the broker restarts: brokerlab's config is
// its command line and --config file, which the broker does not rewrite.
func (b *Broker) updateBrokerConfig(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
	props, err := parseProperties(req.Body)
	if err != nil {
		return responsef(protocol.RespSystemError, "string2Properties error: %v", err), nil
	}
	if len(props) == 0 {
		return success(), nil
	}
	keys := slices.Sorted(maps.Keys(props))
	var fixed []string
	for _, k := range keys {
		if slices.Contains(configBlackList, k) {
			return remoting.NewResponse(protocol.RespNoPermission, "Can not update config in black list."), nil
		}
		if _, ok := liveConfig[k]; !ok {
			fixed = append(fixed, k)
		}
	}
	if len(fixed) > 0 {
		return responsef(protocol.RespInvalidParameter,
			"can not update %s while the broker runs (changeable: %s); nothing was changed",
			strings.Join(fixed, ", "), strings.Join(LiveConfigKeys(), ", ")), nil
	}
	b.ops.cfgMu.Lock()
	defer b.ops.cfgMu.Unlock()
	old := map[string]string{}
	for _, k := range keys {
		old[k] = liveConfig[k].get(b)
	}
	for _, k := range keys {
		if err := liveConfig[k].set(b, props[k]); err != nil {
			for rk, v := range old { // undo: all or nothing
				_ = liveConfig[rk].set(b, v)
			}
			return responsef(protocol.RespInvalidParameter, "bad value for %s: %v; nothing was changed", k, err), nil
		}
	}
	b.ops.cfgVersion.Lock()
	b.ops.cfgVersion.v.Counter++
	b.ops.cfgVersion.v.Timestamp = time.Now().UnixMilli()
	b.ops.cfgVersion.Unlock()
	b.log.Info("broker config updated", "keys", keys)
	return success(), nil
}

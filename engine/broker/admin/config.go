package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/javaprops"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// configBlackList are the keys UPDATE_BROKER_CONFIG refuses with
// NO_PERMISSION (Java's default configBlackList).
var configBlackList = []string{"configBlackList", "brokerConfigPath"}

// LiveKey is a broker setting UPDATE_BROKER_CONFIG changes at run time:
// Get formats its value, Set parses and applies one. Both are safe for
// concurrent use.
type LiveKey struct {
	Get func() string
	Set func(v string) error
}

// BoolKey is a LiveKey over an atomic bool.
func BoolKey(v *atomic.Bool) LiveKey {
	return LiveKey{
		Get: func() string { return strconv.FormatBool(v.Load()) },
		Set: func(s string) error {
			x, err := strconv.ParseBool(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			v.Store(x)
			return nil
		},
	}
}

// liveKeys are the settings that take effect at once when updated: the
// service's own and the broker's extra ones. Everything else
// GET_BROKER_CONFIG shows is fixed for the process (the listener, pools,
// store layout and roles are built at start).
func (s *Service) liveKeys(extra map[string]LiveKey) map[string]LiveKey {
	m := map[string]LiveKey{
		"autoCreateSubscriptionGroup": BoolKey(&s.autoCreateSubGroup),
		"autoCreateTopicEnable":       BoolKey(&s.autoCreateTopic),
		"longPollingEnable":           BoolKey(&s.longPolling),
		"shortPollingTimeMills": {
			Get: func() string {
				return strconv.FormatInt(time.Duration(s.shortPolling.Load()).Milliseconds(), 10)
			},
			Set: func(v string) error {
				ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil || ms < 0 {
					return fmt.Errorf("not a non-negative number of milliseconds: %q", v)
				}
				s.shortPolling.Store(int64(time.Duration(ms) * time.Millisecond))
				return nil
			},
		},
	}
	maps.Copy(m, extra)
	return m
}

// LiveConfigKeys lists the keys UPDATE_BROKER_CONFIG accepts, sorted.
func (s *Service) LiveConfigKeys() []string { return slices.Sorted(maps.Keys(s.live)) }

// properties is the broker's configuration under Java's key names
// (BrokerConfig, NettyServerConfig, MessageStoreConfig), as far as this
// broker has the setting: the broker's fixed ones, the store's, the live
// ones.
func (s *Service) properties() map[string]string {
	p := map[string]string{}
	if s.deps.Properties != nil {
		p = s.deps.Properties()
	}
	p["configBlackList"] = strings.Join(configBlackList, ";")
	if s.deps.Disk != nil {
		if d, ok := s.deps.Disk(); ok {
			p["storePathRootDir"] = d.Root
		}
	}
	if es := s.engine(); es != nil {
		maps.Copy(p, storeConfigProperties(es.Config())) // diskratio.go
	}
	for k, lk := range s.live {
		p[k] = lk.Get()
	}
	return p
}

// engine is the engine/store under the message store, nil when none.
func (s *Service) engine() *store.Store {
	if s.deps.Engine == nil {
		return nil
	}
	return s.deps.Engine()
}

// getBrokerConfig handles GET_BROKER_CONFIG (26): the properties as
// "key=value\n" lines sorted by key (MixAll.properties2String, javaprops.FormatMap), the
// config's DataVersion as JSON in the header field version.
func (s *Service) getBrokerConfig(_ context.Context, _ *remoting.Conn, _ *remoting.Command) (*remoting.Command, error) {
	body := javaprops.FormatMap(s.properties())
	s.cfgVersion.Lock()
	ver, err := json.Marshal(s.cfgVersion.v)
	s.cfgVersion.Unlock()
	if err != nil {
		return nil, err
	}
	resp := bodyResponse([]byte(body))
	resp.Ext()["version"] = string(ver)
	return resp, nil
}

// parseProperties reads an UPDATE_BROKER_CONFIG body (Java properties text,
// engine/javaprops), with surrounding blanks trimmed from each value.
func parseProperties(body []byte) (map[string]string, error) {
	props, err := javaprops.ParseMap(body)
	for k, v := range props {
		props[k] = strings.TrimSpace(v)
	}
	return props, err
}

// updateBrokerConfig handles UPDATE_BROKER_CONFIG (25): the body is Java
// properties text. Black-listed keys get NO_PERMISSION "Can not update
// config in black list."; a key that cannot change while the broker runs,
// or a bad value, gets INVALID_PARAMETER naming it, and nothing is applied.
// Otherwise every key takes effect at once and the config's DataVersion
// moves on. Changes last until the broker restarts: brokerlab's config is
// its command line and --config file, which the broker does not rewrite.
func (s *Service) updateBrokerConfig(_ context.Context, _ *remoting.Conn, req *remoting.Command) (*remoting.Command, error) {
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
		if _, ok := s.live[k]; !ok {
			fixed = append(fixed, k)
		}
	}
	if len(fixed) > 0 {
		return responsef(protocol.RespInvalidParameter,
			"can not update %s while the broker runs (changeable: %s); nothing was changed",
			strings.Join(fixed, ", "), strings.Join(s.LiveConfigKeys(), ", ")), nil
	}
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	old := map[string]string{}
	for _, k := range keys {
		old[k] = s.live[k].Get()
	}
	for _, k := range keys {
		if err := s.live[k].Set(props[k]); err != nil {
			for rk, v := range old { // undo: all or nothing
				_ = s.live[rk].Set(v)
			}
			return responsef(protocol.RespInvalidParameter, "bad value for %s: %v; nothing was changed", k, err), nil
		}
	}
	s.cfgVersion.Lock()
	s.cfgVersion.v.Counter++
	s.cfgVersion.v.Timestamp = time.Now().UnixMilli()
	s.cfgVersion.Unlock()
	s.log.Info("broker config updated", "keys", keys)
	return success(), nil
}

package meta

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// Queues is what the offset processors read of the message store.
type Queues interface {
	// MinOffset is the smallest queue offset still stored.
	MinOffset(topic string, queueID int32) int64
	// InMemory reports whether the message at offset is stored and held
	// in memory by the store's own measure.
	InMemory(topic string, queueID int32, offset int64) bool
}

// Table is the broker's processor table: Handle routes code to fn on the
// executor named executor ("" for the default one), behind the broker's
// one ACL and readiness gate.
type Table interface {
	Handle(code int32, executor string, fn remoting.ProcessorFunc)
}

// ClientManageExecutor is the executor the offset and lock codes run on.
const ClientManageExecutor = "client-manage"

// Deps is what the service needs from the broker.
type Deps struct {
	// Queues answers QUERY_CONSUMER_OFFSET for a group without an offset;
	// its calls come only from requests, after Load.
	Queues Queues
	// OnTopicsChange is called after every change of the topic table
	// (the broker registers with the name servers); it must not block.
	OnTopicsChange func()
}

// Service is the broker's metadata managers: topics, subscription
// groups, consumer offsets and queue locks. New builds it with empty
// tables; Load reads the persisted ones once the store is open, before
// any request is served. The tables are safe for concurrent use; Topics
// and Offsets are set by Load and read-only afterwards.
type Service struct {
	deps  Deps
	files ConfigFiles

	Topics  *Topics
	Offsets *Offsets
	Locks   *Locks

	groupsOnce sync.Once
	groups     *Groups
	groupsErr  error
}

// New builds the service.
func New(d Deps) *Service {
	return &Service{deps: d, Locks: newLocks()}
}

// Load reads the topic and offset tables from files (nil: the tables
// live in memory only). The subscription groups are read on first use.
func (s *Service) Load(files ConfigFiles) error {
	s.files = files
	topics, err := loadTopics(files, s.deps.OnTopicsChange)
	if err != nil {
		return err
	}
	offsets, err := loadOffsets(files)
	if err != nil {
		return err
	}
	s.Topics, s.Offsets = topics, offsets
	return nil
}

// Groups returns the subscription group table, loading it from
// SubscriptionGroupFile on first use; a table that cannot be read keeps
// failing with the same error.
func (s *Service) Groups() (*Groups, error) {
	s.groupsOnce.Do(func() {
		if s.files == nil {
			s.groups, s.groupsErr = loadGroups(nil, nil)
			return
		}
		var content []byte
		if _, err := s.files.ReadConfigFile(SubscriptionGroupFile, func(p []byte) error {
			var w protocol.SubscriptionGroupWrapper
			if err := json.Unmarshal(p, &w); err != nil {
				return err
			}
			content = p
			return nil
		}); err != nil {
			s.groupsErr = fmt.Errorf("meta: load %s: %w", SubscriptionGroupFile, err)
			return
		}
		save := func(p []byte) error { return s.files.WriteConfigFile(SubscriptionGroupFile, p) }
		s.groups, s.groupsErr = loadGroups(content, save)
	})
	return s.groups, s.groupsErr
}

// Register routes the codes the service serves: QUERY_CONSUMER_OFFSET,
// UPDATE_CONSUMER_OFFSET, LOCK_BATCH_MQ and UNLOCK_BATCH_MQ.
func (s *Service) Register(t Table) {
	t.Handle(protocol.ReqQueryConsumerOffset, ClientManageExecutor, s.queryConsumerOffset)
	t.Handle(protocol.ReqUpdateConsumerOffset, ClientManageExecutor, s.updateConsumerOffset)
	t.Handle(protocol.ReqLockBatchMQ, ClientManageExecutor, s.lockBatchMQ)
	t.Handle(protocol.ReqUnlockBatchMQ, ClientManageExecutor, s.unlockBatchMQ)
}

func success() *remoting.Command { return remoting.NewResponse(protocol.RespSuccess, "") }

func bodyResponse(body []byte) *remoting.Command {
	resp := success()
	resp.Body = body
	return resp
}

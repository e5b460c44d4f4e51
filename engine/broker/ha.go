package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/brokerlab/brokerlab/engine/broker/slave"
	"github.com/brokerlab/brokerlab/engine/ha"
	"github.com/brokerlab/brokerlab/engine/namesrv"
	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
	"github.com/brokerlab/brokerlab/engine/store"
)

// BrokerRole is RocketMQ's brokerRole.
type BrokerRole string

// Roles.
const (
	// AsyncMaster acknowledges a send once it is stored (and flushed as the
	// flush policy says); slaves catch up asynchronously.
	AsyncMaster BrokerRole = "ASYNC_MASTER"
	// SyncMaster acknowledges a send once a slave reported the message's
	// end too (RocketMQ 4.x): FLUSH_SLAVE_TIMEOUT after SlaveTimeout,
	// SLAVE_NOT_AVAILABLE when no slave is within haMaxGapNotInSync.
	SyncMaster BrokerRole = "SYNC_MASTER"
	// Slave replicates its master's commit log, serves reads and refuses
	// sends.
	Slave BrokerRole = "SLAVE"
)

// ParseBrokerRole parses a role name (case-insensitive).
func ParseBrokerRole(s string) (BrokerRole, error) {
	switch r := BrokerRole(strings.ToUpper(strings.TrimSpace(s))); r {
	case AsyncMaster, SyncMaster, Slave:
		return r, nil
	case "":
		return AsyncMaster, nil
	}
	return "", fmt.Errorf("%w: broker role %q (want ASYNC_MASTER, SYNC_MASTER or SLAVE)", ErrBadConfig, s)
}

// slaveRefusalRemark is SendMessageProcessor's SERVICE_NOT_AVAILABLE remark.
const slaveRefusalRemark = "service not available now. It may be caused by one of the following reasons: " +
	"the broker's disk is full [%s], messages are put to the slave, message store has been shut down, etc."

// haState is a broker's replication state, set by startHA.
type haState struct {
	svc  *ha.Service // masters over an engine/store store
	cli  *ha.Client  // slaves
	addr string      // the advertised haServerAddr ("" without a service)
	// master is a slave's master remoting address (masterAddr of the
	// registration reply).
	master   atomic.Pointer[string]
	syncOnce sync.Once // starts the slave's metadata copy
}

func (c *Config) validateHA() error {
	if c.Role == "" {
		c.Role = AsyncMaster
	}
	if _, err := ParseBrokerRole(string(c.Role)); err != nil {
		return err
	}
	switch {
	case c.Role == Slave && c.BrokerID <= 0:
		return fmt.Errorf("%w: a SLAVE needs a broker id of at least 1", ErrBadConfig)
	case c.Role != Slave && c.BrokerID != protocol.MasterID:
		return fmt.Errorf("%w: a master's broker id is %d, got %d", ErrBadConfig, protocol.MasterID, c.BrokerID)
	case c.SlaveTimeout <= 0 && c.Role == SyncMaster:
		return fmt.Errorf("%w: SYNC_MASTER needs a positive slave timeout", ErrBadConfig)
	}
	return nil
}

// Role is the broker's role.
func (b *Broker) Role() BrokerRole { return b.cfg.Role }

// HAService is a master's HA service (nil for slaves and stores other than
// engine/store).
func (b *Broker) HAService() *ha.Service { return b.ha.svc }

// HAClient is a slave's HA client (nil for masters).
func (b *Broker) HAClient() *ha.Client { return b.ha.cli }

// HAAddr is the advertised HA address ("" without an HA service).
func (b *Broker) HAAddr() string { return b.ha.addr }

// startHA starts the HA service (masters) or client (slaves) over the
// opened store and returns the store the broker uses: ms wrapped so that
// puts notify the HA service and, on a SYNC_MASTER, wait for a slave. On
// error ms is closed.
func (b *Broker) startHA(ms MessageStore) (MessageStore, error) {
	es, ok := ms.(EngineStore)
	if !ok {
		if b.cfg.Role == AsyncMaster {
			return ms, nil // no replication without a commit log
		}
		_ = ms.Close()
		return nil, fmt.Errorf("%w: role %s needs an engine/store message store", ErrBadConfig, b.cfg.Role)
	}
	st := es.EngineStore()
	switch b.cfg.Role {
	case Slave:
		cc := b.cfg.HAClient
		cc.MasterAddr = b.cfg.HAMasterAddr
		if cc.Logger == nil {
			cc.Logger = b.log
		}
		b.ha.cli = ha.NewClient(st, cc)
	default:
		st.SetSlave(false)
		hc := b.cfg.HA
		if hc.ListenAddr == "" {
			listen, err := netip.ParseAddrPort(b.server.Addr())
			if err != nil || listen.Port() == 65535 {
				_ = ms.Close()
				return nil, fmt.Errorf("%w: no HA port after listen address %q", ErrBadConfig, b.server.Addr())
			}
			port := listen.Port() + 1
			if _, p, err := net.SplitHostPort(b.cfg.ListenAddr); err == nil && (p == "0" || p == "") {
				port = 0 // an ephemeral listen port has no "+ 1": the HA port is ephemeral too
			}
			hc.ListenAddr = netip.AddrPortFrom(listen.Addr(), port).String()
		}
		if hc.Logger == nil {
			hc.Logger = b.log
		}
		svc, err := ha.NewService(st, hc)
		if err != nil {
			_ = ms.Close()
			return nil, fmt.Errorf("broker: %w", err)
		}
		_, port, _ := net.SplitHostPort(svc.Addr())
		b.ha.svc = svc
		b.ha.addr = net.JoinHostPort(b.storeHost.Addr().String(), port)
	}
	return &haStore{MessageStore: ms, st: st, b: b}, nil
}

// registerWithHA is one REGISTER_BROKER with the broker's id and HA
// address; a slave takes its master's HA address from the reply
// (handleRegisterBrokerResult) unless HAMasterAddr is set.
func (b *Broker) registerWithHA(ctx context.Context, ns string, req namesrv.RegisterBrokerRequest) (namesrv.RegisterBrokerResult, error) {
	req.BrokerID = b.cfg.BrokerID
	req.HAServerAddr = b.ha.addr
	res, err := namesrv.RegisterBroker(ctx, b.ns, ns, req)
	if err != nil {
		return res, err
	}
	if b.ha.cli != nil && b.cfg.HAMasterAddr == "" && res.HAServerAddr != "" {
		b.ha.cli.SetMasterAddr(res.HAServerAddr)
	}
	if res.MasterAddr != "" {
		b.setMasterAddr(res.MasterAddr)
	}
	if b.ha.cli != nil {
		// After Start set up the topic table (registrations follow it).
		b.ha.syncOnce.Do(b.startSlaveSync)
	}
	return res, nil
}

// refuseOnSlave answers a send on a slave (SERVICE_NOT_AVAILABLE, the
// remark of RocketMQ's SendMessageProcessor), nil elsewhere.
func (b *Broker) refuseOnSlave() *remoting.Command {
	if b.cfg.Role != Slave {
		return nil
	}
	return remoting.NewResponse(protocol.RespServiceNotAvailable, fmt.Sprintf(slaveRefusalRemark, b.diskUtil()))
}

// diskUtil is RocketMQ's "CL: %5.2f CQ: %5.2f INDEX: %5.2f" (one
// partition here: the store root's).
func (b *Broker) diskUtil() string {
	u := -1.0
	if ds, ok := b.store.(DiskStatser); ok {
		if d := ds.DiskStats(); d.HasUsage {
			u = d.Usage * 100
		}
	}
	return fmt.Sprintf("CL: %5.2f CQ: %5.2f INDEX: %5.2f", u, u, u)
}

// slavePullCode: a slave without slaveReadEnable serves no messages and
// sends the consumer back to the master (4.9.x PULL_RETRY_IMMEDIATELY).
func (b *Broker) slavePullCode(code int32) int32 {
	if b.cfg.Role == Slave && !b.cfg.SlaveReadEnable {
		return protocol.RespPullRetryImmediately
	}
	return code
}

// suggestBrokerID is a pull reply's suggestWhichBrokerId: with
// slaveReadEnable, 1 (whichBrokerWhenConsumeSlowly) when the consumer reads
// beyond the in-memory window, else 0 (the group's brokerId); 0 without it.
func (b *Broker) suggestBrokerID(res GetResult) string {
	if b.cfg.SlaveReadEnable && res.SuggestPullingFromSlave {
		return "1"
	}
	return "0"
}

// haStore wraps the broker's store: puts on a slave are refused; on a
// master every stored put wakes the HA writers and, on a SYNC_MASTER, a put
// whose producer waits (WAIT not "false") returns only once a slave has it
// (CommitLog.handleHA). Close stops replication before the store.
type haStore struct {
	MessageStore
	st *store.Store // the engine/store underneath (its optional capabilities)
	b  *Broker
}

// EngineStore implements EngineStore.
func (h *haStore) EngineStore() *store.Store { return h.st }

// ReadConfigFile implements meta.ConfigFiles.
func (h *haStore) ReadConfigFile(name string, decode func([]byte) error) (bool, error) {
	return h.st.ReadConfigFile(name, decode)
}

// WriteConfigFile implements meta.ConfigFiles.
func (h *haStore) WriteConfigFile(name string, data []byte) error {
	return h.st.WriteConfigFile(name, data)
}

// DiskStats implements DiskStatser.
func (h *haStore) DiskStats() DiskStats { return storeAdapter{h.st}.DiskStats() }

func (h *haStore) Put(ctx context.Context, m *record.Message) (PutResult, error) {
	if h.b.cfg.Role == Slave {
		return PutResult{Status: PutServiceNotAvailable}, fmt.Errorf(slaveRefusalRemark, h.b.diskUtil())
	}
	res, err := h.MessageStore.Put(ctx, m)
	return h.b.replicate(ctx, res, err, waits(m))
}

// AppendStaged is Put in two stages (StagedPutter) when the wrapped store
// can stage its puts: the wait covers the flush policy and, on a
// SYNC_MASTER, the slave. Otherwise it is Put, final.
func (h *haStore) AppendStaged(ctx context.Context, m *record.Message) (PutResult, bool, error) {
	sp, ok := h.MessageStore.(StagedPutter)
	if !ok || h.b.cfg.Role == Slave {
		res, err := h.Put(ctx, m)
		return res, false, err
	}
	w := waits(m)
	res, wait, err := sp.AppendStaged(ctx, m)
	if wait {
		res.staged.innerWaits, res.staged.slaveWaits = true, w
		return res, true, nil
	}
	if !h.b.waitsForSlave(res, w) {
		res, err = h.b.replicate(ctx, res, err, w) // wakes the HA writers; does not wait
		return res, false, err
	}
	res.staged.slaveWaits, res.staged.err = w, err
	return res, true, nil
}

// WaitStaged waits for the wrapped store (if it left a wait) and then,
// on a SYNC_MASTER, for a slave.
func (h *haStore) WaitStaged(ctx context.Context, res PutResult) (PutResult, error) {
	st := res.staged
	err := st.err
	if st.innerWaits {
		res, err = h.MessageStore.(StagedPutter).WaitStaged(ctx, res)
	}
	return h.b.replicate(ctx, res, err, st.slaveWaits)
}

func (h *haStore) PutBatch(ctx context.Context, ms []*record.Message) (PutResult, error) {
	if h.b.cfg.Role == Slave {
		return PutResult{Status: PutServiceNotAvailable}, fmt.Errorf(slaveRefusalRemark, h.b.diskUtil())
	}
	res, err := h.MessageStore.PutBatch(ctx, ms)
	wait := false
	for _, m := range ms {
		wait = wait || waits(m)
	}
	return h.b.replicate(ctx, res, err, wait)
}

func (h *haStore) Close() error {
	if h.b.ha.cli != nil {
		_ = h.b.ha.cli.Close()
	}
	if h.b.ha.svc != nil {
		_ = h.b.ha.svc.Close()
	}
	return h.MessageStore.Close()
}

// waits reports whether the producer waits for the store
// (PROPERTY_WAIT_STORE_MSG_OK is not "false").
func waits(m *record.Message) bool {
	v, ok := record.Property(m.Properties, record.PropertyWaitStoreMsgOK)
	return !ok || v != "false"
}

// replicate wakes the HA writers for a stored put and, on a SYNC_MASTER,
// waits for a slave: FLUSH_SLAVE_TIMEOUT or SLAVE_NOT_AVAILABLE (both still
// "stored") override the flush status.
func (b *Broker) replicate(ctx context.Context, res PutResult, err error, wait bool) (PutResult, error) {
	if !res.Status.Stored() || b.ha.svc == nil {
		return res, err
	}
	b.ha.svc.Notify()
	if !b.waitsForSlave(res, wait) {
		return res, err
	}
	werr := b.ha.svc.WaitForSlave(ctx, res.End, b.cfg.SlaveTimeout)
	switch {
	case werr == nil:
		return res, err
	case errors.Is(werr, ha.ErrSlaveNotAvailable):
		res.Status = PutSlaveNotAvailable
	default:
		res.Status = PutFlushSlaveTimeout
	}
	return res, werr
}

// waitsForSlave reports whether a put's producer waits for a slave: a
// stored put with a known end on a SYNC_MASTER whose producer waits.
func (b *Broker) waitsForSlave(res PutResult, wait bool) bool {
	return res.Status.Stored() && b.ha.svc != nil && b.cfg.Role == SyncMaster && wait && res.End > 0
}

// masterAddr is the master's remoting address as the name servers last
// said ("" before a slave's first registration).
func (b *Broker) masterAddr() string {
	if p := b.ha.master.Load(); p != nil {
		return *p
	}
	return ""
}

func (b *Broker) setMasterAddr(addr string) { b.ha.master.Store(&addr) }

// startSlaveSync starts, on a slave, the copy of the master's topic
// configs and subscription groups (engine/broker/slave).
func (b *Broker) startSlaveSync() {
	if b.cfg.Role != Slave || b.cfg.SlaveSyncInterval <= 0 {
		return
	}
	b.goLoop(slave.New(slave.Deps{
		Meta: b.meta, Invoke: b.ns.InvokeSync, MasterAddr: b.masterAddr,
		Interval: b.cfg.SlaveSyncInterval, Timeout: b.cfg.RegisterTimeout,
		Context: b.ctx, Stop: b.stop, Logger: b.log,
	}).Run)
}

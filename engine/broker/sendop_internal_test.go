package broker

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/brokerlab/brokerlab/engine/protocol"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/remoting"
)

// TestStoredResponseAllocatesNothing: a stored send's response is built in
// its sendOp — the Command, the ext map kept across sends, and msgId,
// queueOffset and queueId as strings over the op's buffer — without an
// allocation once the op has its map, for an IPv4 and an IPv6 store host
// with the widest numbers; the values are what the producer reads.
func TestStoredResponseAllocatesNothing(t *testing.T) {
	hosts := []netip.AddrPort{
		netip.MustParseAddrPort("10.1.2.3:10911"),
		netip.MustParseAddrPort("[2001:db8::1]:10911"),
	}
	for _, host := range hosts {
		op := &sendOp{b: &Broker{storeHost: host}, queueID: -2147483648, uniq: "UNIQ"}
		const phys, qoff = int64(1<<62 + 12345), int64(-9223372036854775808)
		build := func() { op.storedResponse(protocol.RespSuccess, "", phys, qoff) }
		build() // the op's first send makes its map
		if n := testing.AllocsPerRun(200, build); n != 0 {
			t.Fatalf("host %v: building a stored send's response allocates %.1f times", host, n)
		}
		resp := op.storedResponse(protocol.RespFlushDiskTimeout, "slow disk", phys, qoff)
		ext := resp.ExtFields
		gotHost, gotPhys, err := record.ParseOffsetMsgID(ext["msgId"])
		if err != nil || gotHost != host || gotPhys != phys {
			t.Fatalf("msgId %q: %v %d %v", ext["msgId"], gotHost, gotPhys, err)
		}
		if ext["queueOffset"] != strconv.FormatInt(qoff, 10) || ext["queueId"] != "-2147483648" ||
			ext["transactionId"] != "UNIQ" || ext["MSG_REGION"] != "DefaultRegion" || ext["TRACE_ON"] != "true" || len(ext) != 6 {
			t.Fatalf("ext %v", ext)
		}
		if !resp.IsResponse() || resp.Code != protocol.RespFlushDiskTimeout || resp.Remark != "slow disk" ||
			resp.Language != remoting.LanguageGo || resp.Version != remoting.DefaultVersion {
			t.Fatalf("response %v", resp)
		}
	}
}

// TestAddSendPropertiesOneAllocation: UNIQ_KEY (when missing) and CLUSTER
// are added with one allocation, the properties string itself; the key
// returned is the message's UNIQ_KEY either way.
func TestAddSendPropertiesOneAllocation(t *testing.T) {
	b := &Broker{cfg: Config{ClusterName: "DefaultCluster"}}
	for _, props := range []string{"", "TAGS\x01a", "UNIQ_KEY\x01ABC\x02TAGS\x01a"} {
		m := &record.Message{}
		if n := testing.AllocsPerRun(200, func() { m.Properties = props; b.addSendProperties(m) }); n != 1 {
			t.Fatalf("props %q: %.1f allocations", props, n)
		}
		m.Properties = props
		uniq := b.addSendProperties(m)
		got := record.DecodeProperties(m.Properties)
		if got[record.PropertyUniqKey] != uniq || len(uniq) == 0 || got[record.PropertyCluster] != "DefaultCluster" {
			t.Fatalf("props %q -> %q (uniq %q)", props, m.Properties, uniq)
		}
		if props != "" && got["TAGS"] != "a" {
			t.Fatalf("props %q lost TAGS: %q", props, m.Properties)
		}
	}
}

// TestHandOnFull: with every wait slot taken, handOn refuses (the send
// worker waits itself) and starts no waiter.
func TestHandOnFull(t *testing.T) {
	b := &Broker{putWaits: make(chan struct{}, 1), waiters: make(chan *sendOp)}
	b.putWaits <- struct{}{}
	if b.handOn(&sendOp{b: b}) {
		t.Fatal("handOn took a wait with no slot free")
	}
}

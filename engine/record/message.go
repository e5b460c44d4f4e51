package record

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
)

// Message is what a producer sends plus the hosts the broker adds: every
// field of a record except the ones assigned under the append lock
// (QUEUEOFFSET, PHYSICALOFFSET, STORETIMESTAMP) and BODYCRC.
type Message struct {
	Topic   string
	QueueID int32
	Flag    int32 // producer's user flag
	// SysFlag bits other than FlagBornHostV6/FlagStoreHostV6, which the
	// encoder derives from BornHost and StoreHost.
	SysFlag int32
	Body    []byte
	// Properties is the encoded properties string (name 0x01 value 0x02 ...)
	// as it arrives on the wire; see EncodeProperties and AppendProperty.
	Properties    string
	BornTimestamp int64 // producer ms
	// BornHost (client socket) and StoreHost (broker address): IPv4 or IPv6;
	// IPv4-mapped IPv6 addresses are written as IPv4.
	BornHost, StoreHost       netip.AddrPort
	ReconsumeTimes            int32
	PreparedTransactionOffset int64
}

// Errors of Size, AppendEncode and Validate. The comment on each names the
// RocketMQ outcome Validate's caller should answer with.
var (
	// ErrTopicInvalid: topic blank or with characters outside
	// ^[%|a-zA-Z0-9_-]+$ (INVALID_PARAMETER, 29).
	ErrTopicInvalid = errors.New("record: topic is blank or has characters outside ^[%|a-zA-Z0-9_-]+$")
	// ErrTopicTooLong: over 127 chars (255 for %RETRY%/%DLQ% topics) in
	// Validate (INVALID_PARAMETER, 29); over 32767 bytes when encoding.
	ErrTopicTooLong = errors.New("record: topic too long")
	// ErrTopicTooLongToStore: the store hook's byte limit, over 127 bytes
	// for a topic not starting with %RETRY% (MESSAGE_ILLEGAL, 13).
	ErrTopicTooLongToStore = errors.New("record: topic too long to store")
	// ErrTopicNotSendable: a system topic clients may not send to
	// (NO_PERMISSION, 16).
	ErrTopicNotSendable = errors.New("record: topic does not accept client messages")
	// ErrBodyEmpty: a single send without body (MESSAGE_ILLEGAL, 13). Java's
	// store hook rejects a null body, and its remoting decoder yields null
	// for a frame without body bytes; see Validate. Records with an empty
	// body are valid (ValidateStored, ValidateBatchItem).
	ErrBodyEmpty = errors.New("record: message body is empty")
	// ErrBodyTooLarge: body over maxMessageSize (MESSAGE_ILLEGAL, 13).
	ErrBodyTooLarge = errors.New("record: message body too large")
	// ErrRecordTooLarge: encoded record over 2^31-1 bytes.
	ErrRecordTooLarge = errors.New("record: encoded record too large")
	// ErrPropertiesTooLong: properties over 32767 bytes
	// (PROPERTIES_SIZE_EXCEEDED, answered as MESSAGE_ILLEGAL, 13).
	ErrPropertiesTooLong = errors.New("record: properties longer than 32767 bytes")
	// ErrInvalidHost: BornHost or StoreHost is the zero netip.AddrPort.
	ErrInvalidHost = errors.New("record: born or store host is not a valid address")
)

// layout is a Message's encoded shape, computed once per encode.
type layout struct {
	sysFlag     int32
	v2          bool
	born, store netip.AddrPort
	propLen     int  // PROPERTIESLENGTH, including a CRC reservation
	addSep      bool // append 0x02 after Properties (CRC reservation only)
	reserveCRC  bool
	size        int
}

// normalizeHost unmaps IPv4-mapped IPv6 addresses and drops zones.
func normalizeHost(ap netip.AddrPort) (netip.AddrPort, bool) {
	a := ap.Addr()
	if !a.IsValid() {
		return ap, false
	}
	return netip.AddrPortFrom(a.Unmap().WithZone(""), ap.Port()), true
}

func (m *Message) layout(reserveCRC bool) (layout, error) {
	var l layout
	var ok bool
	if l.born, ok = normalizeHost(m.BornHost); !ok {
		return l, fmt.Errorf("%w: born host %v", ErrInvalidHost, m.BornHost)
	}
	if l.store, ok = normalizeHost(m.StoreHost); !ok {
		return l, fmt.Errorf("%w: store host %v", ErrInvalidHost, m.StoreHost)
	}
	l.sysFlag = m.SysFlag &^ (FlagBornHostV6 | FlagStoreHostV6)
	if l.born.Addr().Is6() {
		l.sysFlag |= FlagBornHostV6
	}
	if l.store.Addr().Is6() {
		l.sysFlag |= FlagStoreHostV6
	}
	if len(m.Topic) > MaxTopicLenV2 {
		return l, fmt.Errorf("%w: %d bytes, the record format holds at most %d", ErrTopicTooLong, len(m.Topic), MaxTopicLenV2)
	}
	l.v2 = len(m.Topic) > MaxTopicLenV1
	l.propLen = len(m.Properties)
	if reserveCRC {
		l.reserveCRC = true
		n := len(m.Properties)
		l.addSep = n > 0 && m.Properties[n-1] != PropertySeparator
		if l.addSep {
			l.propLen++
		}
		l.propLen += PropCRCReservedLen
	}
	if l.propLen > MaxPropertiesLen {
		return l, fmt.Errorf("%w: %d bytes", ErrPropertiesTooLong, l.propLen)
	}
	size := fixedSize(l.v2, l.sysFlag) + len(m.Topic) + l.propLen
	if len(m.Body) > math.MaxInt32-size {
		return l, fmt.Errorf("%w: body of %d bytes", ErrRecordTooLarge, len(m.Body))
	}
	l.size = size + len(m.Body)
	return l, nil
}

// Size returns the TOTALSIZE of m's record. It fails only where the format
// cannot hold m: a host not set (ErrInvalidHost), a topic over 32767 bytes
// (ErrTopicTooLong), properties over 32767 bytes (ErrPropertiesTooLong) or a
// record over 2^31-1 bytes (ErrRecordTooLarge). Broker policy is Validate's.
func (m *Message) Size() (int, error) {
	l, err := m.layout(false)
	return l.size, err
}

// SizePropCRC is Size for AppendEncodePropCRC: it includes the 20-byte
// "__CRC32#" reservation and a 0x02 added after properties that lack one.
func (m *Message) SizePropCRC() (int, error) {
	l, err := m.layout(true)
	return l.size, err
}

// EncodedSysFlag returns the SYSFLAG the encoder writes for m: m.SysFlag
// with the IPv6 host bits set from BornHost and StoreHost.
func (m *Message) EncodedSysFlag() int32 {
	f := m.SysFlag &^ (FlagBornHostV6 | FlagStoreHostV6)
	if b, ok := normalizeHost(m.BornHost); ok && b.Addr().Is6() {
		f |= FlagBornHostV6
	}
	if s, ok := normalizeHost(m.StoreHost); ok && s.Addr().Is6() {
		f |= FlagStoreHostV6
	}
	return f
}

package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const hexUpper = "0123456789ABCDEF"

// ErrBadMsgID is returned by ParseOffsetMsgID.
var ErrBadMsgID = errors.New("record: malformed offset message id")

func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return dst
}

// OffsetMsgID returns the offset message id of the record at physOffset
// stored by storeHost (MessageDecoder.createMessageId): upper-case hex of
// address, port as int32 and offset as int64; 32 characters for IPv4, 56 for
// IPv6. IPv4-mapped addresses count as IPv4; the zero AddrPort as 0.0.0.0:0.
func OffsetMsgID(storeHost netip.AddrPort, physOffset int64) string {
	var buf [56]byte
	return string(AppendOffsetMsgID(buf[:0], storeHost, physOffset))
}

// AppendOffsetMsgID appends OffsetMsgID(storeHost, physOffset) to dst (for
// a batch's comma-joined id list).
func AppendOffsetMsgID(dst []byte, storeHost netip.AddrPort, physOffset int64) []byte {
	var raw [28]byte
	n := 0
	if a := storeHost.Addr().Unmap(); a.Is6() {
		b := a.As16()
		n = copy(raw[:], b[:])
	} else {
		if a.Is4() {
			b := a.As4()
			copy(raw[:], b[:])
		}
		n = 4
	}
	binary.BigEndian.PutUint32(raw[n:], uint32(storeHost.Port()))
	binary.BigEndian.PutUint64(raw[n+4:], uint64(physOffset))
	return appendHex(dst, raw[:n+12])
}

// ParseOffsetMsgID returns the store host and physical offset of an offset
// message id (MessageDecoder.decodeMessageId): 32 hex digits for IPv4, 56
// for IPv6, either case.
func ParseOffsetMsgID(id string) (netip.AddrPort, int64, error) {
	var raw [28]byte
	ipLen := 0
	switch len(id) {
	case 32:
		ipLen = 4
	case 56:
		ipLen = 16
	default:
		return netip.AddrPort{}, 0, fmt.Errorf("%w: %d characters, want 32 or 56", ErrBadMsgID, len(id))
	}
	for i := 0; i < len(id); i += 2 {
		hi, ok1 := unhex(id[i])
		lo, ok2 := unhex(id[i+1])
		if !ok1 || !ok2 {
			return netip.AddrPort{}, 0, fmt.Errorf("%w: non-hex character in %q", ErrBadMsgID, id)
		}
		raw[i/2] = hi<<4 | lo
	}
	var a netip.Addr
	if ipLen == 4 {
		a = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		a = netip.AddrFrom16([16]byte(raw[:16]))
	}
	port := int32(binary.BigEndian.Uint32(raw[ipLen:]))
	if port < 0 || port > 0xFFFF {
		return netip.AddrPort{}, 0, fmt.Errorf("%w: port %d out of range", ErrBadMsgID, port)
	}
	off := int64(binary.BigEndian.Uint64(raw[ipLen+4:]))
	return netip.AddrPortFrom(a, uint16(port)), off, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// UniqIDGenerator makes UNIQ_KEY client message ids the way
// MessageClientIDSetter does: 16 bytes as 32 upper-case hex characters,
//
//	IPv4 address (4) | pid, low 16 bits (2) | class-loader hash (4) |
//	ms since the start of the current month, local time, as int32 (4) |
//	counter, low 16 bits, from 0 (2)
//
// It is safe for concurrent use.
type UniqIDGenerator struct {
	prefix  [20]byte // hex of address, pid and hash
	counter atomic.Uint32
	now     func() time.Time

	mu        sync.Mutex
	monthFrom atomic.Int64 // ms of the current month's start
	monthTo   atomic.Int64 // ms of the next month's start
}

// NewUniqIDGenerator returns a generator for ids from ip (a non-IPv4
// address is replaced, as Java does, by the low 4 bytes of the current ms
// time), pid and hash (Java's class-loader hash code; any value).
func NewUniqIDGenerator(ip netip.Addr, pid int, hash int32) *UniqIDGenerator {
	g := &UniqIDGenerator{now: time.Now}
	var raw [10]byte
	if a := ip.Unmap(); a.Is4() {
		b := a.As4()
		copy(raw[:4], b[:])
	} else {
		binary.BigEndian.PutUint32(raw[:4], uint32(time.Now().UnixMilli()))
	}
	binary.BigEndian.PutUint16(raw[4:], uint16(pid))
	binary.BigEndian.PutUint32(raw[6:], uint32(hash))
	appendHex(g.prefix[:0], raw[:])
	return g
}

// Next returns a new id.
func (g *UniqIDGenerator) Next() string {
	var buf [32]byte
	return string(g.AppendNext(buf[:0]))
}

// AppendNext appends a new id to dst.
func (g *UniqIDGenerator) AppendNext(dst []byte) []byte {
	nowMs := g.now().UnixMilli()
	if nowMs >= g.monthTo.Load() {
		g.setMonth(nowMs)
	}
	var raw [6]byte
	binary.BigEndian.PutUint32(raw[:4], uint32(int32(nowMs-g.monthFrom.Load())))
	binary.BigEndian.PutUint16(raw[4:], uint16(g.counter.Add(1)-1))
	dst = append(dst, g.prefix[:]...)
	return appendHex(dst, raw[:])
}

func (g *UniqIDGenerator) setMonth(nowMs int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if nowMs < g.monthTo.Load() {
		return
	}
	t := time.UnixMilli(nowMs).In(time.Local)
	from := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.Local)
	g.monthFrom.Store(from.UnixMilli())
	g.monthTo.Store(from.AddDate(0, 1, 0).UnixMilli())
}

var defaultUniqID = sync.OnceValue(func() *UniqIDGenerator {
	return NewUniqIDGenerator(localIPv4(), os.Getpid(), rand.Int32())
})

// NewUniqID returns an id from a process-wide generator using the first
// non-loopback IPv4 address of this host (127.0.0.1 if none), the process
// id and a random hash: what the broker sets as UNIQ_KEY when a message
// arrives without one.
func NewUniqID() string { return defaultUniqID().Next() }

// AppendNewUniqID appends NewUniqID's next id to dst (UniqIDLen bytes).
func AppendNewUniqID(dst []byte) []byte { return defaultUniqID().AppendNext(dst) }

// UniqIDLen is the length of a UNIQ_KEY id: 32 hexadecimal digits.
const UniqIDLen = 32

func localIPv4() netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					if ip = ip.Unmap(); ip.Is4() && !ip.IsLoopback() {
						return ip
					}
				}
			}
		}
	}
	return netip.AddrFrom4([4]byte{127, 0, 0, 1})
}

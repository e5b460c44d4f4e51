package record

import (
	"maps"
	"slices"
	"strings"
)

// Property separators (MessageDecoder.NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR).
const (
	NameValueSeparator = 0x01
	PropertySeparator  = 0x02
)

// Property names the store and broker use (MessageConst).
const (
	PropertyKeys                = "KEYS"     // space-separated index keys
	PropertyTags                = "TAGS"     // tag; its hash is the CQ tags code
	PropertyUniqKey             = "UNIQ_KEY" // client message id
	PropertyWaitStoreMsgOK      = "WAIT"     // "false": do not wait for flush
	PropertyDelayTimeLevel      = "DELAY"
	PropertyRealTopic           = "REAL_TOPIC"
	PropertyRealQueueID         = "REAL_QID"
	PropertyTransactionPrepared = "TRAN_MSG"
	PropertyProducerGroup       = "PGROUP"
	PropertyCluster             = "CLUSTER"
	PropertyCRC32               = "__CRC32#"
	// KeySeparator separates the keys in the KEYS property.
	KeySeparator = " "
)

// EncodeProperties returns the properties string of m (name 0x01 value 0x02
// per entry) with names in sorted order, so equal maps encode equally. It
// leaves out entries DecodeProperties would not read back as they are:
// empty names or values, names containing 0x01 or 0x02 and values
// containing 0x02.
func EncodeProperties(m map[string]string) string {
	n := 0
	for k, v := range m {
		if propertyEncodable(k, v) {
			n += len(k) + len(v) + 2
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if !propertyEncodable(k, v) {
			continue
		}
		sb.WriteString(k)
		sb.WriteByte(NameValueSeparator)
		sb.WriteString(v)
		sb.WriteByte(PropertySeparator)
	}
	return sb.String()
}

func propertyEncodable(k, v string) bool {
	return k != "" && v != "" &&
		strings.IndexByte(k, NameValueSeparator) < 0 &&
		strings.IndexByte(k, PropertySeparator) < 0 &&
		strings.IndexByte(v, PropertySeparator) < 0
}

// AppendProperty appends one "name 0x01 value 0x02" entry to an encoded
// properties string held in dst (the broker's UNIQ_KEY and CLUSTER
// additions). If dst is non-empty and does not end with 0x02, one is added
// first so the entry starts a new item.
func AppendProperty(dst []byte, name, value string) []byte {
	if n := len(dst); n > 0 && dst[n-1] != PropertySeparator {
		dst = append(dst, PropertySeparator)
	}
	dst = append(dst, name...)
	dst = append(dst, NameValueSeparator)
	dst = append(dst, value...)
	return append(dst, PropertySeparator)
}

// DecodeProperties parses a properties string the way
// MessageDecoder.string2messageProperties does: items are split on 0x02;
// an item is kept only if its first 0x01 is neither its first nor its last
// byte (so name and value are non-empty; the value may contain 0x01); a
// later duplicate name wins. It never fails.
func DecodeProperties(s string) map[string]string {
	m := make(map[string]string)
	for item := range strings.SplitSeq(s, "\x02") {
		if k, v, ok := splitItem(item); ok {
			m[k] = v
		}
	}
	return m
}

// splitItem splits one item at its first 0x01, applying the acceptance rule.
func splitItem[S ~string | ~[]byte](item S) (name, value S, ok bool) {
	for i := 0; i < len(item); i++ {
		if item[i] == NameValueSeparator {
			if i == 0 || i == len(item)-1 {
				return name, value, false
			}
			return item[:i], item[i+1:], true
		}
	}
	return name, value, false
}

// Property returns the value DecodeProperties(props)[name] would have,
// without building a map.
func Property(props, name string) (string, bool) { return lookupProperty(props, name) }

// PropertyBytes is Property over a record's properties bytes; the value
// aliases props.
func PropertyBytes(props []byte, name string) ([]byte, bool) { return lookupProperty(props, name) }

func lookupProperty[S ~string | ~[]byte](props S, name string) (S, bool) {
	var val S
	found := false
	for start := 0; start <= len(props); {
		end := start
		for end < len(props) && props[end] != PropertySeparator {
			end++
		}
		if k, v, ok := splitItem(props[start:end]); ok && equalName(k, name) {
			val, found = v, true
		}
		start = end + 1
	}
	return val, found
}

func equalName[S ~string | ~[]byte](k S, name string) bool {
	if len(k) != len(name) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] != name[i] {
			return false
		}
	}
	return true
}

// RemoveProperties returns the encoded properties s without names; s itself
// when it has none of them.
func RemoveProperties(s string, names ...string) string {
	m := DecodeProperties(s)
	n := len(m)
	for _, name := range names {
		delete(m, name)
	}
	if len(m) == n {
		return s
	}
	return EncodeProperties(m)
}

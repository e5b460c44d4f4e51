package index

import "unicode/utf16"

// javaHash continues Java's String.hashCode over s's UTF-16 code units
// (h = 31*h + c with int32 wrap-around), starting from h.
func javaHash(h int32, s string) int32 {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			for _, r := range s[i:] {
				if r >= 0x10000 {
					hi, lo := utf16.EncodeRune(r)
					h = 31*h + hi
					h = 31*h + lo
				} else {
					h = 31*h + r
				}
			}
			return h
		}
		h = 31*h + int32(c)
	}
	return h
}

// keyHash is RocketMQ's indexKeyHashMethod applied to "topic#key":
// abs(hashCode), with the overflow of abs(MinInt32) mapped to 0.
func keyHash(topic, key string) int32 {
	h := javaHash(0, topic)
	h = 31*h + '#'
	return absHash(javaHash(h, key))
}

// absHash is Java Math.abs with RocketMQ's fix-up: abs(MinInt32) overflows
// to a negative value, which becomes 0.
func absHash(h int32) int32 {
	if h < 0 {
		h = -h
	}
	if h < 0 {
		h = 0
	}
	return h
}

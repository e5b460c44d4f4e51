package record

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JavaStringHash returns Java's String.hashCode of s: h = 31*h + c over the
// UTF-16 code units of s (a character outside the BMP counts as its two
// surrogates), with int32 wrap-around. s is read as UTF-8; each byte of an
// invalid sequence counts as U+FFFD.
func JavaStringHash(s string) int32 { return hashString(0, s) }

func hashString(h int32, s string) int32 {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		h = hashRune(h, r)
		i += n
	}
	return h
}

// javaHashBytes is JavaStringHash over UTF-8 bytes, without converting.
func javaHashBytes(b []byte) int32 {
	var h int32
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		h = hashRune(h, r)
		i += n
	}
	return h
}

func hashRune(h int32, r rune) int32 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return 31*(31*h+hi) + lo
	}
	return 31*h + r
}

// TagsCode returns the consume-queue tags code of a TAGS value
// (MessageExtBrokerInner.tagsString2tagsCode): the sign-extended
// JavaStringHash, 0 for "".
func TagsCode(tags string) int64 { return int64(JavaStringHash(tags)) }

// IndexKeyHash returns the IndexFile key hash of key (already "topic#key"):
// Math.abs(key.hashCode()), with the overflowing abs(MinInt32) mapped to 0
// (IndexFile.indexKeyHashMethod).
func IndexKeyHash(key string) int32 { return positiveHash(JavaStringHash(key)) }

// TopicKeyHash is IndexKeyHash(topic + "#" + key) without building the string.
func TopicKeyHash(topic, key string) int32 {
	h := hashString(0, topic)
	h = 31*h + '#'
	return positiveHash(hashString(h, key))
}

func positiveHash(h int32) int32 {
	if h < 0 {
		h = -h
	}
	if h < 0 { // -MinInt32 overflows to MinInt32
		return 0
	}
	return h
}

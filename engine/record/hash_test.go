package record

import (
	"math"
	"testing"
)

// javaHashUnits is the definition of String.hashCode over given UTF-16
// code units, written out independently of the implementation.
func javaHashUnits(units ...uint16) int32 {
	var h uint32
	for _, u := range units {
		h = h*31 + uint32(u)
	}
	return int32(h)
}

func TestJavaStringHash(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"TagA", 2598919},
		{"hello", 99162322},
		{"Aa", 2112}, {"BB", 2112}, // the classic collision
		{"polygenelubricants", math.MinInt32},
		// U+1F600 is the surrogate pair D83D DE00 in UTF-16.
		{"\U0001F600", javaHashUnits(0xD83D, 0xDE00)},
		{"a\U0001F600b", javaHashUnits('a', 0xD83D, 0xDE00, 'b')},
		// U+10FFFF: DBFF DFFF; U+10000: D800 DC00.
		{"\U0010FFFF\U00010000", javaHashUnits(0xDBFF, 0xDFFF, 0xD800, 0xDC00)},
		// BMP non-ASCII is one unit each: é U+00E9, 中 U+4E2D.
		{"é中", javaHashUnits(0xE9, 0x4E2D)},
		// Invalid UTF-8 bytes each count as U+FFFD.
		{"\xff\xfe", javaHashUnits(0xFFFD, 0xFFFD)},
	} {
		if got := JavaStringHash(tc.s); got != tc.want {
			t.Errorf("JavaStringHash(%q) = %d, want %d", tc.s, got, tc.want)
		}
		if got := javaHashBytes([]byte(tc.s)); got != tc.want {
			t.Errorf("javaHashBytes(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	// A long string wraps around int32 many times.
	s := "%RETRY%consumer_group_with_a_long_name_TopicTest#order-1234567890"
	units := make([]uint16, len(s))
	for i := range s {
		units[i] = uint16(s[i])
	}
	if got, want := JavaStringHash(s), javaHashUnits(units...); got != want {
		t.Errorf("long string: %d, want %d", got, want)
	}
}

func TestTagsCode(t *testing.T) {
	if TagsCode("") != 0 {
		t.Error(`TagsCode("") != 0`)
	}
	if TagsCode("TagA") != 2598919 {
		t.Errorf("TagsCode(TagA) = %d", TagsCode("TagA"))
	}
	// Sign extension: a negative hash stays negative as int64.
	if got := TagsCode("polygenelubricants"); got != math.MinInt32 {
		t.Errorf("TagsCode sign extension: %d", got)
	}
	neg := "\U0001F600\U0001F600\U0001F600"
	if h := JavaStringHash(neg); h >= 0 || TagsCode(neg) != int64(h) {
		t.Errorf("TagsCode(%q) = %d, hash %d", neg, TagsCode(neg), h)
	}
}

func TestIndexKeyHash(t *testing.T) {
	if got := IndexKeyHash("polygenelubricants"); got != 0 {
		t.Errorf("abs(MinInt32) must map to 0, got %d", got)
	}
	if got := IndexKeyHash("TagA"); got != 2598919 {
		t.Errorf("IndexKeyHash(TagA) = %d", got)
	}
	neg := "\U0001F600\U0001F600\U0001F600"
	if got := IndexKeyHash(neg); got != -JavaStringHash(neg) || got <= 0 {
		t.Errorf("IndexKeyHash of a negative hash = %d", got)
	}
	for _, tc := range []struct{ topic, key string }{
		{"TopicTest", "order-1"}, {"", ""}, {"t", "\U0001F600"}, {"TopicTest", "polygenelubricants"},
	} {
		if got, want := TopicKeyHash(tc.topic, tc.key), IndexKeyHash(tc.topic+"#"+tc.key); got != want {
			t.Errorf("TopicKeyHash(%q, %q) = %d, want %d", tc.topic, tc.key, got, want)
		}
	}
}

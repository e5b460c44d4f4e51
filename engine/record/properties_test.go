package record

import (
	"maps"
	"testing"
)

func TestDecodePropertiesRules(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
	}{
		{"TAGS\x01TAG\x02WAIT\x01true\x02KEYS\x01ffff\x02", // captured producer properties
			map[string]string{"TAGS": "TAG", "WAIT": "true", "KEYS": "ffff"}},
		{"", map[string]string{}},
		{"a\x01b", map[string]string{"a": "b"}}, // no trailing separator
		{"a\x01b\x02", map[string]string{"a": "b"}},
		{"\x01b\x02", map[string]string{}},                      // separator first: rejected
		{"a\x01\x02", map[string]string{}},                      // separator last: rejected
		{"ab\x02", map[string]string{}},                         // no separator
		{"\x01\x02\x01\x01\x02", map[string]string{}},           // short items
		{"a\x01b\x01c\x02", map[string]string{"a": "b\x01c"}},   // first 0x01 splits
		{"a\x01\x01c\x02", map[string]string{"a": "\x01c"}},     // value may start with 0x01
		{"a\x011\x02a\x012\x02", map[string]string{"a": "2"}},   // last wins
		{"\x02\x02a\x01b\x02\x02", map[string]string{"a": "b"}}, // empty items skipped
		{"k\x01v\x02bad\x02x\x01y", map[string]string{"k": "v", "x": "y"}},
		{"é\x01ü\x02", map[string]string{"é": "ü"}},
	} {
		got := DecodeProperties(tc.in)
		if !maps.Equal(got, tc.want) {
			t.Errorf("DecodeProperties(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for k, v := range tc.want {
			if pv, ok := Property(tc.in, k); !ok || pv != v {
				t.Errorf("Property(%q, %q) = %q, %v; want %q", tc.in, k, pv, ok, v)
			}
			if pv, ok := PropertyBytes([]byte(tc.in), k); !ok || string(pv) != v {
				t.Errorf("PropertyBytes(%q, %q) = %q, %v; want %q", tc.in, k, pv, ok, v)
			}
		}
	}
	if _, ok := Property("TAGS\x01TAG\x02", "TAG"); ok {
		t.Error("Property found a value by name prefix")
	}
	if _, ok := Property("TAGS\x01TAG\x02", "AGS"); ok {
		t.Error("Property found a value by name suffix")
	}
}

// TestPropertyMatchesDecode checks Property against DecodeProperties on
// every string of up to 7 symbols from {a, b, 0x01, 0x02}.
func TestPropertyMatchesDecode(t *testing.T) {
	alphabet := []byte{'a', 'b', NameValueSeparator, PropertySeparator}
	names := []string{"a", "b", "ab", "ba", "aa", "bb", "aab", "a\x01b"}
	buf := make([]byte, 0, 7)
	var walk func(depth int)
	walk = func(depth int) {
		s := string(buf)
		m := DecodeProperties(s)
		for _, name := range names {
			want, wantOK := m[name]
			got, ok := Property(s, name)
			if ok != wantOK || got != want {
				t.Fatalf("Property(%q, %q) = %q, %v; DecodeProperties has %q, %v", s, name, got, ok, want, wantOK)
			}
		}
		if depth == 7 {
			return
		}
		for _, c := range alphabet {
			buf = append(buf, c)
			walk(depth + 1)
			buf = buf[:len(buf)-1]
		}
	}
	walk(0)
}

func TestEncodeProperties(t *testing.T) {
	in := map[string]string{
		"WAIT": "true", "TAGS": "TagA", "KEYS": "k1 k2",
		"":            "empty name",
		"noValue":     "",
		"bad\x01name": "v",
		"bad\x02name": "v",
		"badValue":    "a\x02b",
		"okValue":     "a\x01b",
	}
	got := EncodeProperties(in)
	want := "KEYS\x01k1 k2\x02TAGS\x01TagA\x02WAIT\x01true\x02okValue\x01a\x01b\x02"
	if got != want {
		t.Fatalf("EncodeProperties = %q, want %q", got, want)
	}
	back := DecodeProperties(got)
	wantBack := map[string]string{"WAIT": "true", "TAGS": "TagA", "KEYS": "k1 k2", "okValue": "a\x01b"}
	if !maps.Equal(back, wantBack) {
		t.Fatalf("round trip = %q", back)
	}
	if EncodeProperties(nil) != "" {
		t.Fatal("EncodeProperties(nil) not empty")
	}
	// Deterministic regardless of map iteration order.
	for range 20 {
		if EncodeProperties(maps.Clone(in)) != want {
			t.Fatal("EncodeProperties not deterministic")
		}
	}
}

func TestAppendProperty(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "UNIQ_KEY\x01ID\x02"},
		{"TAGS\x01a\x02", "TAGS\x01a\x02UNIQ_KEY\x01ID\x02"},
		{"TAGS\x01a", "TAGS\x01a\x02UNIQ_KEY\x01ID\x02"},
	} {
		got := string(AppendProperty([]byte(tc.in), PropertyUniqKey, "ID"))
		if got != tc.want {
			t.Errorf("AppendProperty(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if v, ok := Property(got, PropertyUniqKey); !ok || v != "ID" {
			t.Errorf("Property after AppendProperty(%q) = %q, %v", tc.in, v, ok)
		}
	}
}

package msgfilter

import (
	"net/netip"
	"testing"

	"github.com/brokerlab/brokerlab/engine/record"
)

// props encodes name, value pairs as a properties string.
func props(kv ...string) string {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = record.AppendProperty(b, kv[i], kv[i+1])
	}
	return string(b)
}

// TestSQLFilterMatchesRecords: CompileSQLFilter's filter decides on whole
// records (what the stores hand it), reuses compiled text, and refuses
// what does not compile.
func TestSQLFilterMatchesRecords(t *testing.T) {
	f, err := CompileSQLFilter("a BETWEEN 1 AND 3 AND TAGS <> 'skip'")
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := CompileSQLFilter("a BETWEEN 1 AND 3 AND TAGS <> 'skip'"); g != f {
		t.Error("the same text compiled twice")
	}
	rec := func(p string) []byte {
		host := netip.MustParseAddrPort("127.0.0.1:10911")
		m := &record.Message{Topic: "T", Body: []byte("x"), Properties: p, BornTimestamp: 1, BornHost: host, StoreHost: host}
		b, err := record.AppendEncode(nil, m, record.BodyCRC(m.Body), 0, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		props string
		want  bool
	}{
		{props("a", "2", record.PropertyTags, "keep"), true},
		{props("a", "2"), false}, // TAGS absent: TAGS <> 'skip' is NULL
		{props("a", "2", record.PropertyTags, "skip"), false},
		{props("a", "4"), false},
		{props("b", "2"), false},
		{"", false},
	} {
		if got := f.MatchRecord(rec(c.props)); got != c.want {
			t.Errorf("properties %q: match %v, want %v", c.props, got, c.want)
		}
	}
	if f.MatchRecord([]byte{1, 2, 3}) {
		t.Error("a record that does not decode matched")
	}
	if !f.MatchTagsCode(12345) {
		t.Error("the consume queue cannot decide a SQL92 filter")
	}
	if _, err := CompileSQLFilter("a >"); err == nil {
		t.Error("a bad expression compiled")
	}
}

// TestCompile: TAG expressions give a tags-code filter ("" and "*": none),
// SQL92 a record filter, an unknown type an error.
func TestCompile(t *testing.T) {
	if f, err := Compile("*", ExpressionTag); f != nil || err != nil {
		t.Fatalf("* = %v, %v; want no filter", f, err)
	}
	f, err := Compile("a || b", "")
	if err != nil || !f.MatchTagsCode(int64(record.JavaStringHash("b"))) || f.MatchTagsCode(int64(record.JavaStringHash("c"))) {
		t.Fatalf("tag filter %v, %v", f, err)
	}
	if f, err := Compile("a > 1", ExpressionSQL92); err != nil || f.(*SQLFilter) == nil {
		t.Fatalf("SQL92 filter %v, %v", f, err)
	}
	if _, err := Compile("x", "CLASS"); err == nil {
		t.Fatal("an unknown expression type compiled")
	}
}

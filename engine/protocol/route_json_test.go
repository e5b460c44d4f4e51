package protocol

import "testing"

func TestQuoteNumericKeys(t *testing.T) {
	cases := map[string]string{
		`{0:"a",1:"b"}`:                       `{"0":"a","1":"b"}`,
		`{"x":{ 0 :"a", -1:"b"},"y":[1,2]}`:   `{"x":{ "0" :"a", "-1":"b"},"y":[1,2]}`,
		`{"s":"{0:\"x\",1:2}","n":[{3:"c"}]}`: `{"s":"{0:\"x\",1:2}","n":[{"3":"c"}]}`,
		`{"a":1,"b":[1,{2:3}],"c":4}`:         `{"a":1,"b":[1,{"2":3}],"c":4}`,
	}
	for in, want := range cases {
		if got := string(QuoteNumericKeys([]byte(in))); got != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

package meta

import "testing"

func TestQuoteNumericKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":{0:12,1:5}}`:              `{"a":{"0":12,"1":5}}`,
		`{ -1 : 3 , 22:4}`:              `{ "-1" : 3 , "22":4}`,
		`{"a":[1,2,{3:4}],"b":"{5:6}"}`: `{"a":[1,2,{"3":4}],"b":"{5:6}"}`,
		`{"s":"x\"{7:8}"}`:              `{"s":"x\"{7:8}"}`,
	} {
		if got := string(quoteNumericKeys([]byte(in))); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

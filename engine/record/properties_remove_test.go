package record

import "testing"

func TestRemoveProperties(t *testing.T) {
	s := EncodeProperties(map[string]string{"A": "1", "B": "2", "C": "3"})
	if got := RemoveProperties(s, "Z"); got != s {
		t.Fatalf("removing an absent name changed %q to %q", s, got)
	}
	got := DecodeProperties(RemoveProperties(s, "A", "C", "Z"))
	if len(got) != 1 || got["B"] != "2" {
		t.Fatalf("after removing A and C: %v", got)
	}
}

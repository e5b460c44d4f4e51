package index

import "testing"

func TestJavaHash(t *testing.T) {
	// Values of Java's String.hashCode.
	for _, tc := range []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"TagA", 2598919},
		{"hello", 99162322},
		{"é", 233},
		{"中文", 646394},
		{"😀", 1772899}, // surrogate pair D83D DE00
		{"a😀b中", 1793360527},
		{"TopicTest#7F000001000018B4AAC2197A2C0000", 1495182877},
		{"polygenelubricants", -2147483648},
	} {
		if got := javaHash(0, tc.s); got != tc.want {
			t.Errorf("javaHash(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestKeyHash(t *testing.T) {
	if got := keyHash("TopicTest", "7F000001000018B4AAC2197A2C0000"); got != 1495182877 {
		t.Fatalf("keyHash = %d", got)
	}
	if got, want := keyHash("T", "a😀b中"), absHash(javaHash(0, "T#a😀b中")); got != want {
		t.Fatalf("keyHash = %d, want %d", got, want)
	}
	if absHash(-5) != 5 || absHash(javaHash(0, "polygenelubricants")) != 0 {
		t.Fatal("absHash")
	}
	// "Aa" and "BB" collide in Java, and so do "T#Aa" and "T#BB".
	if keyHash("T", "Aa") != keyHash("T", "BB") {
		t.Fatal("expected collision")
	}
}

package txn

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/record"
)

func TestStateClaimUnclaimResolve(t *testing.T) {
	var s txnState
	if !s.claim(5, -1) {
		t.Fatal("first claim refused")
	}
	if s.claim(5, -1) {
		t.Fatal("second claim of the same half accepted")
	}
	if done, busy := s.state(5, -1); done || !busy {
		t.Fatalf("claimed half: done %v busy %v, want busy", done, busy)
	}
	s.unclaim(5, -1)
	if done, busy := s.state(5, -1); done || busy {
		t.Fatalf("unclaimed half: done %v busy %v, want pending", done, busy)
	}
	if !s.claim(7, 5) {
		t.Fatal("claim of a copy refused")
	}
	s.markResolved(7, 5)
	if s.claim(9, 5) {
		t.Fatal("claim of another copy of a resolved half accepted")
	}
	if done, _ := s.state(9, 5); !done {
		t.Fatal("copy of a resolved half not done")
	}
}

func TestImmunityTimeAndCheckTimes(t *testing.T) {
	rec := func(props ...string) *record.Record {
		var p []byte
		for i := 0; i+1 < len(props); i += 2 {
			p = record.AppendProperty(p, props[i], props[i+1])
		}
		return &record.Record{Properties: p}
	}
	if _, ok := immunityTime(rec(), time.Second, true); ok {
		t.Fatal("immunity without the property")
	}
	if d, _ := immunityTime(rec(PropertyCheckImmunityTime, "2"), 5*time.Second, true); d != 5*time.Second {
		t.Fatalf("END_TRANSACTION immunity %v, want at least the timeout", d)
	}
	if d, _ := immunityTime(rec(PropertyCheckImmunityTime, "2"), 5*time.Second, false); d != 2*time.Second {
		t.Fatalf("scan immunity %v, want the property", d)
	}
	if n, discard := checkTimes(rec(), 3); n != 1 || discard {
		t.Fatalf("first half: %d %v", n, discard)
	}
	if n, discard := checkTimes(rec(PropertyTransactionCheckTimes, "3"), 3); n != 3 || !discard {
		t.Fatalf("checked max times: %d %v", n, discard)
	}
	if origin := preparedOrigin(rec(PropertyTransactionPreparedQueueOffset, "12")); origin != 12 {
		t.Fatalf("origin %d", origin)
	}
}

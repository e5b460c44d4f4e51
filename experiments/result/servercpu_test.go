package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// The server's CPU per message is aggregated as median and min–max over
// the repetitions that measured it, and written under its JSON names only
// when measured.
func TestServerCPUAggregatedAndOmitted(t *testing.T) {
	cells := []Cell{
		{Name: "k=p", Rep: 0, ServerCPUSeconds: 2, ServerCPUMicrosPerMsg: 40},
		{Name: "k=p", Rep: 1, ServerCPUSeconds: 1, ServerCPUMicrosPerMsg: 20},
		{Name: "k=p", Rep: 2, ServerCPUSeconds: 3, ServerCPUMicrosPerMsg: 30},
		{Name: "k=p", Rep: 3, ServerCPUSeconds: 9, ServerCPUMicrosPerMsg: 90, Error: "interrupted"},
		{Name: "k=q", Rep: 0, MsgPerSec: 5},
	}
	got := Aggregate(cells)
	if len(got) != 2 {
		t.Fatalf("summaries %+v", got)
	}
	if p := got[0]; p.ServerCPUMicrosPerMsg != (Stat{20, 30, 40, 3}) || p.ServerCPUSeconds != (Stat{1, 2, 3, 3}) {
		t.Fatalf("k=p: %+v", p)
	}
	if q := got[1]; q.ServerCPUMicrosPerMsg != (Stat{}) {
		t.Fatalf("k=q measured no CPU: %+v", q)
	}
	b, err := json.Marshal(cells[0])
	if err != nil || !strings.Contains(string(b), `"server_cpu_s":2`) || !strings.Contains(string(b), `"server_cpu_us_per_msg":40`) {
		t.Fatalf("cell JSON %s (%v)", b, err)
	}
	b, _ = json.Marshal(cells[4])
	s, _ := json.Marshal(got[1])
	if strings.Contains(string(b), "server_cpu") || strings.Contains(string(s), "server_cpu") {
		t.Fatalf("unmeasured CPU written: %s / %s", b, s)
	}
}

package broker

import (
	"testing"
	"time"
)

func TestTimerProperties(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TimerPrecision = 200 * time.Millisecond
	p := (&Broker{cfg: cfg}).timerProperties()
	if p["timerWheelEnable"] != "true" || p["timerPrecisionMs"] != "200" || p["timerMaxDelaySec"] != "259200" || p["litePullMessageEnable"] != "true" {
		t.Fatalf("%v", p)
	}
}

package main

import (
	"fmt"
	"time"

	"github.com/brokerlab/brokerlab/engine/broker"
)

// timerFile are the --config keys of timer messages and lite pull, under
// RocketMQ's names (MessageStoreConfig, BrokerConfig) and units.
type timerFile struct {
	TimerWheelEnable      *bool  `yaml:"timerWheelEnable"`
	TimerPrecisionMs      *int64 `yaml:"timerPrecisionMs"`
	TimerMaxDelaySec      *int64 `yaml:"timerMaxDelaySec"`
	TimerFlushIntervalMs  *int64 `yaml:"timerFlushIntervalMs"`
	LitePullMessageEnable *bool  `yaml:"litePullMessageEnable"`
}

// apply copies the keys present onto cfg.
func (f timerFile) apply(cfg *broker.Config) error {
	if f.TimerWheelEnable != nil {
		cfg.TimerEnable = *f.TimerWheelEnable
	}
	if f.LitePullMessageEnable != nil {
		cfg.LitePullEnable = *f.LitePullMessageEnable
	}
	if v := f.TimerPrecisionMs; v != nil {
		if *v < 1 || *v > 1000 {
			return fmt.Errorf("timerPrecisionMs %d: want 1 to 1000", *v)
		}
		cfg.TimerPrecision = time.Duration(*v) * time.Millisecond
	}
	if v := f.TimerMaxDelaySec; v != nil {
		if *v < 1 || *v > 10*365*24*3600 {
			return fmt.Errorf("timerMaxDelaySec %d: want a positive number of seconds", *v)
		}
		cfg.TimerMaxDelay = time.Duration(*v) * time.Second
	}
	if v := f.TimerFlushIntervalMs; v != nil {
		if *v < 1 {
			return fmt.Errorf("timerFlushIntervalMs %d: want a positive number of milliseconds", *v)
		}
		cfg.TimerFlushInterval = time.Duration(*v) * time.Millisecond
	}
	return nil
}

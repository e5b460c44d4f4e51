package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/broker"
)

// addHAFlags adds the replication flags to the broker command.
func addHAFlags(cmd *cobra.Command, f *haFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.role, "role", string(broker.AsyncMaster), "broker role: ASYNC_MASTER, SYNC_MASTER (a send waits for a slave) or SLAVE")
	fl.Int64Var(&f.brokerID, "broker-id", 0, "broker id: 0 for a master, >= 1 for a slave of the master with the same --broker-name")
	fl.StringVar(&f.brokerName, "broker-name", "", "broker name shared by a master and its slaves (same as --name)")
	fl.StringVar(&f.haListen, "ha-listen", "", "master: HA listen address (default: the listen host, listen port + 1)")
	fl.StringVar(&f.haMaster, "ha-master", "", "slave: the master's HA address (default: the haServerAddr the name servers return)")
	fl.BoolVar(&f.slaveRead, "slave-read", false, "slaveReadEnable: consumers may read from slaves (masters suggest the slave for cold reads; slaves serve pulls)")
	fl.DurationVar(&f.slaveTimeout, "slave-timeout", 3*time.Second, "SYNC_MASTER: how long a send waits for a slave before FLUSH_SLAVE_TIMEOUT")
}

// apply merges the replication flags and file keys onto cfg (flags set on
// the command line win).
func (f haFlags) apply(cfg *broker.Config, changed func(string) bool, file brokerFile) error {
	if changed("broker-name") {
		cfg.BrokerName = f.brokerName
	}
	role := f.role
	if file.BrokerRole != "" && !changed("role") {
		role = file.BrokerRole
	}
	r, err := broker.ParseBrokerRole(role)
	if err != nil {
		return fmt.Errorf("--role: %w", err)
	}
	cfg.Role = r
	cfg.BrokerID = f.brokerID
	if file.BrokerID != nil && !changed("broker-id") {
		cfg.BrokerID = *file.BrokerID
	}
	if r == broker.Slave && cfg.BrokerID <= 0 {
		return fmt.Errorf("--broker-id: a SLAVE needs an id >= 1, got %d", cfg.BrokerID)
	}
	cfg.HA.ListenAddr = f.haListen
	if file.HAListen != "" && !changed("ha-listen") {
		cfg.HA.ListenAddr = file.HAListen
	}
	cfg.HAMasterAddr = f.haMaster
	if file.HAMasterAddress != "" && !changed("ha-master") {
		cfg.HAMasterAddr = file.HAMasterAddress
	}
	cfg.SlaveReadEnable = f.slaveRead
	if file.SlaveReadEnable != nil && !changed("slave-read") {
		cfg.SlaveReadEnable = *file.SlaveReadEnable
	}
	if changed("slave-timeout") {
		if f.slaveTimeout <= 0 {
			return fmt.Errorf("--slave-timeout must be positive")
		}
		cfg.SlaveTimeout = f.slaveTimeout
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
)

func init() {
	registerAdmin(newBrokerStatusCmd)
	registerAdmin(newGetBrokerConfigCmd)
	registerAdmin(newUpdateBrokerConfigCmd)
}

// brokerTable is one broker's key/value table (runtime stats or config).
type brokerTable struct {
	Addr     string            `json:"addr"`
	Master   string            `json:"master,omitempty"` // getBrokerConfig -c: a slave's master
	BrokerID int64             `json:"brokerId"`
	Table    map[string]string `json:"table"`
}

func newBrokerStatusCmd(f *adminFlags) *cobra.Command {
	var brokerAddr, cluster string
	cmd := &cobra.Command{
		Use:   "brokerStatus",
		Short: "Fetch broker runtime status data",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, strings.TrimSpace(brokerAddr), strings.TrimSpace(cluster), true)
				if err != nil {
					return err
				}
				res := []brokerTable{}
				for _, b := range brokers {
					kv, err := a.RuntimeInfo(ctx, b.Addr)
					if err != nil {
						return err
					}
					res = append(res, brokerTable{Addr: b.Addr, BrokerID: b.BrokerID, Table: kv})
				}
				return f.emit(out, res, func() {
					for _, t := range res {
						for _, k := range slices.Sorted(maps.Keys(t.Table)) {
							if cluster != "" {
								fmt.Fprintf(out, "%-24s %-32s: %s\n", t.Addr, k, t.Table[k])
							} else {
								fmt.Fprintf(out, "%-32s: %s\n", k, t.Table[k])
							}
						}
					}
				})
			})
		},
	}
	cmd.Flags().StringVarP(&brokerAddr, "brokerAddr", "b", "", "broker address")
	cmd.Flags().StringVarP(&cluster, "clusterName", "c", "", "every broker (masters and slaves) of this cluster")
	return cmd
}

func newGetBrokerConfigCmd(f *adminFlags) *cobra.Command {
	var brokerAddr, cluster string
	cmd := &cobra.Command{
		Use:   "getBrokerConfig",
		Short: "Get broker config by cluster or special broker",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, strings.TrimSpace(brokerAddr), strings.TrimSpace(cluster), true)
				if err != nil {
					return err
				}
				masters := map[string]string{}
				for _, b := range brokers {
					if b.BrokerID == 0 {
						masters[b.BrokerName] = b.Addr
					}
				}
				res := []brokerTable{}
				for _, b := range brokers {
					props, err := a.BrokerConfig(ctx, b.Addr)
					if err != nil {
						return err
					}
					t := brokerTable{Addr: b.Addr, BrokerID: b.BrokerID, Table: props}
					if b.BrokerID != 0 {
						t.Master = masters[b.BrokerName]
					}
					res = append(res, t)
				}
				return f.emit(out, res, func() {
					for _, t := range res {
						switch {
						case cluster == "":
							fmt.Fprintf(out, "============%s============\n", t.Addr)
						case t.BrokerID == 0:
							fmt.Fprintf(out, "============Master: %s============\n", t.Addr)
						default:
							fmt.Fprintf(out, "============My Master: %s=====Slave: %s============\n", t.Master, t.Addr)
						}
						for _, k := range slices.Sorted(maps.Keys(t.Table)) {
							fmt.Fprintf(out, "%-50s=  %s\n", k, t.Table[k])
						}
						fmt.Fprintln(out)
					}
				})
			})
		},
	}
	cmd.Flags().StringVarP(&brokerAddr, "brokerAddr", "b", "", "broker address")
	cmd.Flags().StringVarP(&cluster, "clusterName", "c", "", "every broker (masters and slaves) of this cluster")
	return cmd
}

func newUpdateBrokerConfigCmd(f *adminFlags) *cobra.Command {
	var (
		brokerAddr, cluster, key, value string
		all                             bool
	)
	cmd := &cobra.Command{
		Use:   "updateBrokerConfig",
		Short: "Update broker's config",
		Long: `Set one broker configuration key on a broker (-b) or on every master of a
cluster (-c; -a true includes the slaves). The broker applies and persists
the keys it can change at run time and refuses the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireOne(cmd, "brokerAddr", "clusterName"); err != nil {
				return err
			}
			props := map[string]string{strings.TrimSpace(key): strings.TrimSpace(value)}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				brokers, err := targetBrokers(ctx, a, strings.TrimSpace(brokerAddr), strings.TrimSpace(cluster), all)
				if err != nil {
					return err
				}
				done := []string{}
				for _, b := range brokers {
					if err := a.UpdateBrokerConfig(ctx, b.Addr, props); err != nil {
						return err
					}
					done = append(done, b.Addr)
				}
				return f.emit(out, map[string]any{"brokers": done, "config": props}, func() {
					for _, b := range done {
						fmt.Fprintf(out, "update broker config success, %s\n", b)
					}
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&brokerAddr, "brokerAddr", "b", "", "update this broker")
	fl.StringVarP(&cluster, "clusterName", "c", "", "update every master of this cluster")
	boolArgVarP(fl, &all, "updateAllBroker", "a", false, "with -c: slaves too")
	fl.StringVarP(&key, "key", "k", "", "config key (required)")
	fl.StringVarP(&value, "value", "v", "", "config value (required)")
	_ = cmd.MarkFlagRequired("key")
	_ = cmd.MarkFlagRequired("value")
	return cmd
}

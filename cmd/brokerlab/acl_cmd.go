package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/aclfile"
	"github.com/brokerlab/brokerlab/engine/acl"
)

func init() { register(newACLCmd) }

func newACLCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Work with plain_acl.yml access-control files (brokerlab broker --acl)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate an ACL file as the broker would load it and list its accounts",
		Long: `Validate a plain_acl.yml-shaped file exactly as brokerlab broker --acl loads
and reloads it, and list its accounts. A file that fails here is refused at
start-up, and a running broker keeps its previous rules when the file is
edited into this state.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			cfg, err := aclfile.Parse(data)
			if err != nil {
				return err
			}
			if _, err := acl.Compile(cfg); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s: ok, %d accounts, global white addresses: %s\n", args[0], len(cfg.Accounts),
				orNone(strings.Join(cfg.GlobalWhiteRemoteAddresses, " ")))
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ACCESS KEY\tADMIN\tDEFAULT TOPIC\tDEFAULT GROUP\tTOPIC PERMS\tGROUP PERMS\tWHITE ADDRESS")
			for _, a := range cfg.Accounts {
				fmt.Fprintf(tw, "%s\t%v\t%s\t%s\t%s\t%s\t%s\n", a.AccessKey, a.Admin, orDeny(a.DefaultTopicPerm),
					orDeny(a.DefaultGroupPerm), orNone(strings.Join(a.TopicPerms, " ")),
					orNone(strings.Join(a.GroupPerms, " ")), orNone(a.WhiteRemoteAddress))
			}
			return tw.Flush()
		},
	})
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orDeny(s string) string {
	if s == "" {
		return "DENY"
	}
	return s
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/aclfile"
	"github.com/brokerlab/brokerlab/engine/acl"
)

// aclFlags turn on RocketMQ's plain ACL (aclEnable with plain_acl.yml).
type aclFlags struct {
	file   string
	reload time.Duration
}

func addACLFlags(cmd *cobra.Command, f *aclFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.file, "acl", "", "plain_acl.yml-shaped ACL file: requests must be signed by its accounts "+
		"(RocketMQ's plain ACL); reloaded when it changes. \"\" = no access control")
	fl.DurationVar(&f.reload, "acl-reload-interval", 2*time.Second, "how often the --acl file is checked for changes")
}

// startACL loads the --acl file and keeps it reloaded until ctx is done; nil
// without --acl. A file that does not load stops the broker from starting.
func startACL(ctx context.Context, f aclFlags, logLevel string) (*acl.Checker, error) {
	if f.file == "" {
		return nil, nil
	}
	if f.reload <= 0 {
		return nil, fmt.Errorf("--acl-reload-interval must be positive")
	}
	log, err := newLogger(logLevel)
	if err != nil {
		return nil, err
	}
	log = log.With("component", "acl")
	checker, w, err := aclfile.Open(f.file, log)
	if err != nil {
		return nil, err
	}
	log.Info("access control on", "file", f.file, "accounts", len(checker.Rules().Accounts()), "reloadEvery", f.reload)
	go w.Run(ctx, f.reload)
	return checker, nil
}

package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
)

func init() {
	registerAdmin(newQueryMsgByIDCmd)
	registerAdmin(newQueryMsgByKeyCmd)
}

// shownMessage is queryMsgById's JSON result: the message, and where its
// body was written.
type shownMessage struct {
	mqadmin.Message
	BodyPath string `json:"bodyPath"`
}

func newQueryMsgByIDCmd(f *adminFlags) *cobra.Command {
	var topic, ids, bodyFormat, bodyDir, cluster string
	cmd := &cobra.Command{
		Use:   "queryMsgById",
		Short: "Query Message by Id",
		Long: `Query messages by id: an offset message id (store host and commit-log
offset) is read from its broker, a client message id (UNIQ_KEY) is looked up
in the brokers' message index. -i takes a comma-separated list. Each body is
written to --body-dir/<msgId>, as mqadmin writes /tmp/rocketmq/msgbodys/<msgId>;
-f UTF-8 prints it too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if bodyFormat != "" && !strings.EqualFold(bodyFormat, "UTF-8") && !strings.EqualFold(bodyFormat, "UTF8") {
				return fmt.Errorf("--bodyFormat %q: only UTF-8 is supported", bodyFormat)
			}
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				var res []shownMessage
				for _, id := range strings.Split(ids, ",") {
					if id = strings.TrimSpace(id); id == "" {
						continue
					}
					m, err := a.QueryMessageByID(ctx, strings.TrimSpace(topic), id)
					if err != nil {
						return err
					}
					path, err := writeBody(bodyDir, m)
					if err != nil {
						return err
					}
					res = append(res, shownMessage{*m, path})
				}
				return f.emit(out, res, func() {
					for i, m := range res {
						if i > 0 {
							fmt.Fprintln(out)
						}
						printMessage(out, &m, bodyFormat != "")
					}
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&topic, "topic", "t", "", "topic name (required)")
	fl.StringVarP(&ids, "msgId", "i", "", "message id(s), comma-separated (required)")
	fl.StringVarP(&bodyFormat, "bodyFormat", "f", "", "print the body in this charset (UTF-8)")
	fl.StringVar(&bodyDir, "body-dir", filepath.Join(os.TempDir(), "rocketmq", "msgbodys"), "directory the bodies are written to")
	fl.StringVarP(&cluster, "cluster", "c", "", "cluster name (accepted for mqadmin compatibility)")
	_ = cmd.MarkFlagRequired("topic")
	_ = cmd.MarkFlagRequired("msgId")
	return cmd
}

// writeBody writes m's body to dir/<msgId> and returns the path.
func writeBody(dir string, m *mqadmin.Message) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--body-dir: %w", err)
	}
	path := filepath.Join(dir, filepath.Base(m.MsgID))
	if err := os.WriteFile(path, m.Body, 0o644); err != nil {
		return "", fmt.Errorf("--body-dir: %w", err)
	}
	return path, nil
}

func printMessage(out io.Writer, m *shownMessage, body bool) {
	line := func(k string, v any) { fmt.Fprintf(out, "%-20s %v\n", k, v) }
	line("OffsetID:", m.OffsetMsgID)
	line("Topic:", m.Topic)
	line("Tags:", "["+m.Tags+"]")
	line("Keys:", "["+m.Keys+"]")
	line("Queue ID:", m.QueueID)
	line("Queue Offset:", m.QueueOffset)
	line("CommitLog Offset:", m.CommitLogOffset)
	line("Reconsume Times:", m.ReconsumeTimes)
	line("Born Timestamp:", humanMillis(m.BornTimestamp))
	line("Store Timestamp:", humanMillis(m.StoreTimestamp))
	line("Born Host:", m.BornHost)
	line("Store Host:", m.StoreHost)
	line("System Flag:", m.SysFlag)
	line("Properties:", javaMap(m.Properties))
	line("Message Body Path:", m.BodyPath)
	if body {
		b := m.Body
		if !utf8.Valid(b) {
			b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
		}
		line("Message Body:", string(b))
	}
}

// javaMap prints a map as Java's toString does: {a=b, c=d} (sorted here).
func javaMap(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func newQueryMsgByKeyCmd(f *adminFlags) *cobra.Command {
	var (
		topic, key, cluster string
		begin, end          int64
		maxNum              int32
	)
	cmd := &cobra.Command{
		Use:   "queryMsgByKey",
		Short: "Query Message by Key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.run(cmd, func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error {
				msgs, err := a.QueryMessageByKey(ctx, strings.TrimSpace(topic), strings.TrimSpace(key), maxNum, begin, end, false)
				if err != nil {
					return err
				}
				return f.emit(out, msgs, func() {
					fmt.Fprintf(out, "%-50s %4s %40s\n", "#Message ID", "#QID", "#Offset")
					for _, m := range msgs {
						fmt.Fprintf(out, "%-50s %4d %40d\n", m.MsgID, m.QueueID, m.QueueOffset)
					}
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&topic, "topic", "t", "", "topic name (required)")
	fl.StringVarP(&key, "msgKey", "k", "", "message key (required)")
	fl.Int64VarP(&begin, "beginTimestamp", "b", 0, "begin timestamp (ms)")
	fl.Int64VarP(&end, "endTimestamp", "e", 1<<63-1, "end timestamp (ms)")
	fl.Int32VarP(&maxNum, "maxNum", "m", 64, "maximum number of messages returned")
	fl.StringVarP(&cluster, "cluster", "c", "", "cluster name (accepted for mqadmin compatibility)")
	_ = cmd.MarkFlagRequired("topic")
	_ = cmd.MarkFlagRequired("msgKey")
	return cmd
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/mqadmin"
	"github.com/brokerlab/brokerlab/engine/protocol"
)

func init() { register(newAdminCmd) }

// adminFlags are the flags every admin subcommand shares.
type adminFlags struct {
	namesrv string
	timeout time.Duration
	json    bool
	tls     tlsFlags
	// accessKey and secretKey sign requests for brokers with an ACL file.
	accessKey, secretKey string
}

// adminSubcommands are added to `admin` by the admin_*.go files.
var adminSubcommands []func(*adminFlags) *cobra.Command

func registerAdmin(f func(*adminFlags) *cobra.Command) {
	adminSubcommands = append(adminSubcommands, f)
}

func newAdminCmd() *cobra.Command {
	f := &adminFlags{}
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Operate a RocketMQ cluster: topics, groups, offsets, brokers, messages (mqadmin's commands)",
		Long: `Operator commands named and flagged as RocketMQ's mqadmin names them, speaking
the remoting protocol to the name servers (-n) and brokers. They work against
brokerlab brokers and Apache RocketMQ brokers alike. Output is a table as
mqadmin prints it; --json prints the same data as JSON.`,
		Example: `  brokerlab admin clusterList -n 127.0.0.1:9876
  brokerlab admin updateTopic -n 127.0.0.1:9876 -c DefaultCluster -t Orders -r 8 -w 8
  brokerlab admin consumerProgress -n 127.0.0.1:9876 -g billing --json`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	def := os.Getenv("NAMESRV_ADDR")
	if def == "" {
		def = "127.0.0.1:9876"
	}
	pf.StringVarP(&f.namesrv, "namesrvAddr", "n", def, "name server addresses, ';'-separated ($NAMESRV_ADDR when set)")
	pf.DurationVar(&f.timeout, "timeout", 5*time.Second, "timeout of each request")
	pf.BoolVar(&f.json, "json", false, "print JSON instead of a table")
	pf.StringVar(&f.accessKey, "access-key", os.Getenv("ROCKETMQ_ACCESS_KEY"), "ACL access key: sign every request (brokers started with --acl; $ROCKETMQ_ACCESS_KEY)")
	pf.StringVar(&f.secretKey, "secret-key", os.Getenv("ROCKETMQ_SECRET_KEY"), "ACL secret key for --access-key ($ROCKETMQ_SECRET_KEY)")
	pf.BoolVar(&f.tls.enable, "tls-enable", false, "connect over TLS")
	pf.StringVar(&f.tls.configFile, "tls-config-file", "", "RocketMQ tls.properties file (tls.enable, tls.client.* keys); flags override it")
	pf.StringVar(&f.tls.clientCert, "tls-client-cert", "", "client certificate, PEM, for servers that ask for one")
	pf.StringVar(&f.tls.clientKey, "tls-client-key", "", "client private key, unencrypted PEM (with --tls-client-cert)")
	pf.StringVar(&f.tls.clientCA, "tls-client-ca", "", "CA certificates, PEM, that server certificates are verified against (implies --tls-verify-server)")
	pf.BoolVar(&f.tls.verifyServer, "tls-verify-server", false, "verify server certificates (default: accept any, as RocketMQ clients do)")
	for _, sub := range adminSubcommands {
		cmd.AddCommand(sub(f))
	}
	return cmd
}

// run opens an Admin with the shared flags and calls fn with it.
func (f *adminFlags) run(cmd *cobra.Command, fn func(ctx context.Context, a *mqadmin.Admin, out io.Writer) error) error {
	changed := func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed
	}
	tlsConf, err := f.tls.client(changed, tlsFile{})
	if err != nil {
		return err
	}
	if (f.accessKey == "") != (f.secretKey == "") {
		return fmt.Errorf("admin: --access-key and --secret-key go together")
	}
	a := mqadmin.New(mqadmin.Config{NamesrvAddrs: splitAddrs(f.namesrv), Timeout: f.timeout, TLS: tlsConf,
		AccessKey: f.accessKey, SecretKey: f.secretKey})
	defer a.Close()
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return fn(ctx, a, cmd.OutOrStdout())
}

// emit prints v as indented JSON with --json, else calls table.
func (f *adminFlags) emit(out io.Writer, v any, table func()) error {
	if !f.json {
		table()
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// frontStringAtLeast is UtilAll.frontStringAtLeast: s cut to at most n
// characters (mqadmin's tables truncate long names this way).
func frontStringAtLeast(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// humanMillis is UtilAll.timeMillisToHumanString2: local "yyyy-MM-dd HH:mm:ss,SSS".
func humanMillis(ms int64) string {
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000")
}

// parseMillis reads a resetOffsetByTime timestamp: "now", epoch ms, or
// local "yyyy-MM-dd#HH:mm:ss:SSS" (UtilAll.YYYY_MM_DD_HH_MM_SS_SSS).
func parseMillis(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "now" {
		return now.UnixMilli(), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	bad := fmt.Errorf("timestamp %q: want now, epoch milliseconds or yyyy-MM-dd#HH:mm:ss:SSS", s)
	// Go layouts know milliseconds only after '.' or ','; split ":SSS" off.
	i := strings.LastIndexByte(s, ':')
	if i < 0 || len(s)-i != 4 {
		return 0, bad
	}
	ms, err := strconv.Atoi(s[i+1:])
	if err != nil || ms < 0 {
		return 0, bad
	}
	t, err := time.ParseInLocation("2006-01-02#15:04:05", s[:i], time.Local)
	if err != nil {
		return 0, bad
	}
	return t.UnixMilli() + int64(ms), nil
}

// requireOne checks that exactly one of the named flags is set (mqadmin's
// required option groups, e.g. -b or -c).
func requireOne(cmd *cobra.Command, names ...string) error {
	n := 0
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("give exactly one of --%s", strings.Join(names, ", --"))
	}
	return nil
}

// targetBrokers resolves -b ADDR or -c CLUSTER into broker addresses:
// cluster masters, and slaves too if slaves.
func targetBrokers(ctx context.Context, a *mqadmin.Admin, addr, cluster string, slaves bool) ([]mqadmin.BrokerAddr, error) {
	if addr != "" {
		return []mqadmin.BrokerAddr{{Addr: addr}}, nil
	}
	return a.ClusterBrokers(ctx, cluster, slaves)
}

// perm2String is PermName.perm2String: "RW-", "R--", ...
func perm2String(perm int32) string {
	b := []byte("---")
	if perm&protocol.PermRead != 0 {
		b[0] = 'R'
	}
	if perm&protocol.PermWrite != 0 {
		b[1] = 'W'
	}
	if perm&protocol.PermInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}

// boolArg is a boolean flag that takes its value as an argument ("-o true",
// "-s false"), as mqadmin's boolean options do; "-o=true" works too.
type boolArg struct{ p *bool }

func (b boolArg) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(*b.p)
}

func (b boolArg) Set(s string) error {
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want true or false, not %q", s)
	}
	*b.p = v
	return nil
}

func (boolArg) Type() string { return "true|false" }

func boolArgVarP(fs *pflag.FlagSet, p *bool, name, short string, def bool, usage string) {
	*p = def
	fs.VarP(boolArg{p}, name, short, usage)
}

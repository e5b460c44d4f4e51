package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/cmd/brokerlab/internal/brokerconf"
	"github.com/brokerlab/brokerlab/engine/namesrv"
)

// namesrvFlags are the namesrv subcommand's flags.
type namesrvFlags struct {
	listen, logLevel, metrics string
	propsFile                 string // -c: RocketMQ namesrv.properties
	printConfig               bool
	tls                       tlsFlags
}

// namesrvSetup is what the namesrv command resolved from its flags and
// its -c file.
type namesrvSetup struct {
	cfg      namesrv.Config
	metrics  string
	warnings []string // unknown keys, logged at start
}

// namesrvFile is a namesrv.properties mapped: NamesrvConfig and
// NettyServerConfig keys in RocketMQ's units (milliseconds), the TLS keys,
// and brokerlab's metricsListen.
type namesrvFile struct {
	listen                      string
	scanInterval                *int64
	deleteTopicWithRegistration *bool
	defaultWorkers, defaultQ    *int64
	clientWorkers, clientQ      *int64
	tls                         tlsFile
	metricsListen               string
}

// namesrvFileFromProps maps namesrv.properties (mqnamesrv -c). listenPort
// and bindAddress give the listen address when either is set (Java's
// defaults: 9876 on 0.0.0.0).
func namesrvFileFromProps(p *brokerconf.Props) (namesrvFile, error) {
	var f namesrvFile
	f.listen = listenProp(p, 9876)
	p.Int("scanNotActiveBrokerInterval", 1, 1<<40, &f.scanInterval)
	p.Bool("deleteTopicWithBrokerRegistration", &f.deleteTopicWithRegistration)
	p.Int("defaultThreadPoolNums", 1, 1<<20, &f.defaultWorkers)
	p.Int("defaultThreadPoolQueueCapacity", 1, 1<<30, &f.defaultQ)
	p.Int("clientRequestThreadPoolNums", 1, 1<<20, &f.clientWorkers)
	p.Int("clientRequestThreadPoolQueueCapacity", 1, 1<<30, &f.clientQ)
	t := &f.tls
	for key, dst := range map[string]*string{
		"tls.server.mode": &t.Mode, "tls.server.certPath": &t.CertPath, "tls.server.keyPath": &t.KeyPath,
		"tls.server.trustCertPath": &t.TrustCertPath, "tls.server.need.client.auth": &t.NeedClientAuth,
	} {
		p.String(key, dst)
	}
	p.String("metricsListen", &f.metricsListen)
	return f, p.Err()
}

// resolveNamesrv merges the flags set on the command line over the -c file
// over the defaults.
func resolveNamesrv(cmd *cobra.Command, f namesrvFlags) (namesrvSetup, error) {
	out := namesrvSetup{cfg: namesrv.DefaultConfig()}
	var file namesrvFile
	if f.propsFile != "" {
		p, err := brokerconf.ParseFile(f.propsFile)
		if err != nil {
			return out, fmt.Errorf("-c: %w", err)
		}
		if file, err = namesrvFileFromProps(p); err != nil {
			return out, fmt.Errorf("-c %s: %w", f.propsFile, err)
		}
		for _, e := range p.Unused() {
			out.warnings = append(out.warnings, fmt.Sprintf("%s line %d: unknown key %s=%s ignored", f.propsFile, e.Line, e.Key, e.Value))
		}
	}
	changed := cmd.Flags().Changed
	c := &out.cfg
	c.Remoting.Addr = f.listen
	if file.listen != "" && !changed("listen") {
		c.Remoting.Addr = file.listen
	}
	if file.scanInterval != nil {
		c.ScanInterval = time.Duration(*file.scanInterval) * time.Millisecond
	}
	if file.deleteTopicWithRegistration != nil {
		c.DeleteTopicWithBrokerRegistration = *file.deleteTopicWithRegistration
	}
	for _, x := range []struct {
		v   *int64
		dst *int
	}{
		{file.defaultWorkers, &c.DefaultExecutor.Workers}, {file.defaultQ, &c.DefaultExecutor.QueueSize},
		{file.clientWorkers, &c.ClientExecutor.Workers}, {file.clientQ, &c.ClientExecutor.QueueSize},
	} {
		if x.v != nil {
			*x.dst = int(*x.v)
		}
	}
	var err error
	if c.Remoting.TLS, err = f.tls.server(changed, file.tls); err != nil {
		return out, err
	}
	out.metrics = f.metrics
	if file.metricsListen != "" && !changed("metrics-listen") {
		out.metrics = file.metricsListen
	}
	return out, nil
}

// printNamesrvConfig writes s as a namesrv.properties that -c reads back
// to the same configuration.
func printNamesrvConfig(w io.Writer, s namesrvSetup) error {
	head := "brokerlab namesrv: resolved configuration (flags > -c file > defaults)"
	for _, warn := range s.warnings {
		head += "\nwarning: " + warn
	}
	if err := brokerconf.WriteComment(w, head); err != nil {
		return err
	}
	return brokerconf.Write(w, namesrvProps(s))
}

// namesrvProps is s as namesrv.properties entries.
func namesrvProps(s namesrvSetup) []brokerconf.Entry {
	c := s.cfg
	var out []brokerconf.Entry
	add := func(k, v string) { out = append(out, brokerconf.Entry{Key: k, Value: v}) }
	in := func(k string, v int64) { add(k, strconv.FormatInt(v, 10)) }
	if host, port, err := net.SplitHostPort(c.Remoting.Addr); err == nil {
		add("bindAddress", host)
		add("listenPort", port)
	}
	in("scanNotActiveBrokerInterval", c.ScanInterval.Milliseconds())
	add("deleteTopicWithBrokerRegistration", strconv.FormatBool(c.DeleteTopicWithBrokerRegistration))
	in("defaultThreadPoolNums", int64(c.DefaultExecutor.Workers))
	in("defaultThreadPoolQueueCapacity", int64(c.DefaultExecutor.QueueSize))
	in("clientRequestThreadPoolNums", int64(c.ClientExecutor.Workers))
	in("clientRequestThreadPoolQueueCapacity", int64(c.ClientExecutor.QueueSize))
	t := c.Remoting.TLS
	add("tls.server.mode", string(t.Mode))
	add("tls.server.certPath", t.CertFile)
	add("tls.server.keyPath", t.KeyFile)
	add("tls.server.trustCertPath", t.CAFile)
	add("tls.server.need.client.auth", string(t.ClientAuth))
	add("metricsListen", s.metrics)
	return out
}

package main

import "testing"

func TestGRPCListenResolve(t *testing.T) {
	port := int64(8081)
	none := func(string) bool { return false }
	flagSet := func(f string) bool { return f == "grpc-listen" }
	cases := []struct {
		name    string
		file    grpcFile
		changed func(string) bool
		flag    string
		want    string
	}{
		{"off by default", grpcFile{}, none, "", ""},
		{"flag", grpcFile{}, flagSet, "127.0.0.1:9", "127.0.0.1:9"},
		{"file address", grpcFile{GRPCListen: "0.0.0.0:7"}, none, "", "0.0.0.0:7"},
		{"port on the listen host", grpcFile{GRPCServerPort: &port}, none, "", "10.0.0.1:8081"},
		{"flag wins over the file", grpcFile{GRPCServerPort: &port}, flagSet, "127.0.0.1:9", "127.0.0.1:9"},
	}
	for _, c := range cases {
		got, err := c.file.resolve(c.changed, c.flag, "10.0.0.1:10911")
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		}
	}
}

package proxy_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyProxyImportsGRPC keeps grpc, protobuf and the RocketMQ 5 client's
// generated code out of every engine package but this one.
func TestOnlyProxyImportsGRPC(t *testing.T) {
	banned := []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/apache/rocketmq-clients"}
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if filepath.Base(path) == "proxy" || filepath.Base(path) == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		checked++
		for _, imp := range pkg.Imports {
			for _, b := range banned {
				if strings.HasPrefix(imp, b) {
					t.Errorf("engine package %s imports %s: only engine/proxy may", path, imp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked only %d engine packages", checked)
	}
}

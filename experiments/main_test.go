package experiments

import (
	"os"
	"testing"
)

// TestMain lets this test binary serve as a transport-process cell's
// server: the tests re-execute it with ChildEnv set (child.go).
func TestMain(m *testing.M) {
	RunChildIfAsked()
	os.Exit(m.Run())
}

//go:build race

package flush

// raceEnabled: the race detector allocates on synchronization, so
// allocation counts across goroutines mean nothing under -race.
const raceEnabled = true

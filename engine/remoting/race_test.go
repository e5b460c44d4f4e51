//go:build race

package remoting

// raceEnabled: under -race sync.Pool drops items at random and
// synchronization allocates, so pool reuse and allocation counts are not
// asserted.
const raceEnabled = true

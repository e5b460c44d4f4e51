//go:build !race

package flush

const raceEnabled = false

//go:build !race

package experiments

const v5ClientRaces = false

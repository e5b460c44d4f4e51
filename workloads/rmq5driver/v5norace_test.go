//go:build !race

package rmq5driver_test

const v5ClientRaces = false

//go:build race

package experiments

// v5ClientRaces: the RocketMQ 5 Go client (v5.1.4) writes its settings from
// the telemetry stream (producerSettings.applySettingsCommand, client.go:725)
// while its client manager marshals them for the next settings sync
// (client_manager.go:169): a data race inside the client that the race
// detector reports in any test that starts one.
const v5ClientRaces = true

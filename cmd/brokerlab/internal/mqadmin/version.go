package mqadmin

import (
	"strconv"
	"sync"
)

// versionNames are MQVersion.Version's constants in ordinal order: the
// version numbers clients send are these ordinals (MQVersion.getVersionDesc
// maps them back). The 3.0.0 pre-releases come first, then every release
// as a _SNAPSHOT/release pair: 3.0.1–3.0.15, 3.1.0–3.2.9, 3.3.1–3.8.9 (no
// x.y.0), then 3.9.1–3.9.9 and every 4.y.z and 5.y.z, then HIGHER_VERSION.
var versionNames = sync.OnceValue(func() []string {
	names := []string{"V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1", "V3_0_0_BETA1", "V3_0_0_BETA2", "V3_0_0_BETA3",
		"V3_0_0_BETA4", "V3_0_0_BETA5", "V3_0_0_BETA6_SNAPSHOT", "V3_0_0_BETA6", "V3_0_0_BETA7_SNAPSHOT",
		"V3_0_0_BETA7", "V3_0_0_BETA8_SNAPSHOT", "V3_0_0_BETA8", "V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9",
		"V3_0_0_FINAL"}
	add := func(x, y, z int) {
		v := "V" + strconv.Itoa(x) + "_" + strconv.Itoa(y) + "_" + strconv.Itoa(z)
		names = append(names, v+"_SNAPSHOT", v)
	}
	for z := 1; z <= 15; z++ {
		add(3, 0, z)
	}
	for y := 1; y <= 2; y++ {
		for z := 0; z <= 9; z++ {
			add(3, y, z)
		}
	}
	for y := 3; y <= 9; y++ {
		for z := 1; z <= 9; z++ {
			add(3, y, z)
		}
	}
	for x := 4; x <= 5; x++ {
		for y := 0; y <= 9; y++ {
			for z := 0; z <= 9; z++ {
				add(x, y, z)
			}
		}
	}
	return append(names, "HIGHER_VERSION")
})

// VersionDesc is MQVersion.getVersionDesc: the name of a version ordinal
// (401 is "V4_9_4"); ordinals past the last name give the last name, as in
// Java, and negative ones their number.
func VersionDesc(v int32) string {
	names := versionNames()
	switch {
	case v < 0:
		return strconv.Itoa(int(v))
	case int(v) >= len(names):
		return names[len(names)-1]
	}
	return names[v]
}

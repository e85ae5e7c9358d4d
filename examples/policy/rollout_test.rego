# Unit tests of the rules (opa test examples/policy): small hand-made
# inputs; the Go test runs the rules against real plans.
package main

import rego.v1

good := {
	"format_version": "1.0",
	"clusters": {
		"canary": {"phases": [{"id": "cluster.canary.control_plane", "kind": "control_plane", "parallelism": 1}]},
		"prod": {"phases": [{"id": "cluster.prod.control_plane", "kind": "control_plane", "parallelism": 1}]},
	},
	"gates": {"stage.canary.gate.ok": {"before": ["prod"]}},
	"images": [{"uri": "https://images/bios.bin", "component": "bios", "version": "2.80", "sha256": "ab", "servers": ["prod/r1/a"]}],
	"servers": {"prod/r1/a": {"cluster": "prod", "observed": true, "outcome": "observed", "reason": "", "labels": {}}},
}

test_good_plan_passes if {
	count(deny) == 0 with input as good
}

test_ungated_production_is_denied if {
	deny["production cluster prod has no approval gate before it; add an approval to its stage or after the canary stage"] with input as object.union(object.remove(good, ["gates"]), {"gates": {}})
}

test_unpinned_image_is_denied if {
	some msg in deny with input as object.union(object.remove(good, ["images"]), {"images": [{"uri": "https://images/bios.bin", "component": "bios", "version": "2.80", "sha256": "", "servers": ["prod/r1/a"]}]})
	startswith(msg, "image https://images/bios.bin (bios 2.80) has no sha256")
}

test_excluded_server_is_not_a_blind_spot if {
	count(deny) == 0 with input as object.union(good, {"servers": {"prod/r1/b": {"cluster": "prod", "observed": false, "outcome": "", "reason": "excluded", "labels": {}}}})
}

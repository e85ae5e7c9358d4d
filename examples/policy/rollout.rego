# Rules a platform team checks every rackform plan against before anyone
# may apply it. The input is `rackform show -json PLAN` (docs/json.md):
# servers, clusters and gates keyed by address or name, parallelism
# resolved per phase, every property present.
#
#   rackform show -json plan.tfplan > plan.json
#   conftest test plan.json -p examples/policy            # package main
#   opa eval -d examples/policy -i plan.json 'data.main.deny'
#
# Each rule adds a message to deny; an empty deny passes.
package main

import rego.v1

# The show -json format this policy was written for.
deny contains msg if {
	not startswith(input.format_version, "1.")
	msg := sprintf("this policy reads show -json format 1.x, the plan is in format %v", [input.format_version])
}

# Control-plane servers hold quorum: never more than one down at a time.
deny contains msg if {
	some name, cluster in input.clusters
	some phase in cluster.phases
	phase.kind == "control_plane"
	phase.parallelism > 1
	msg := sprintf("cluster %s takes %d control-plane servers down at once (%s); take them one at a time", [name, phase.parallelism, phase.id])
}

# A production cluster starts only after a person has approved: some gate
# (before its stage, or after an earlier stage) must hold it back.
deny contains msg if {
	some name, _ in input.clusters
	production(name)
	not gated(name)
	msg := sprintf("production cluster %s has no approval gate before it; add an approval to its stage or after the canary stage", [name])
}

# Every image is pinned by its digest, so what was reviewed is what is
# flashed.
deny contains msg if {
	some image in input.images
	image.sha256 == ""
	msg := sprintf("image %s (%s %s) has no sha256; pin it with the component's sha256 (%d servers)", [image.uri, image.component, image.version, count(image.servers)])
}

# A plan made without seeing every server says nothing about them: plan
# again once they answer, or exclude them on purpose.
deny contains msg if {
	some address, server in input.servers
	not server.observed
	not left_out(server)
	msg := sprintf("server %s was not observed when planned (%s); plan again once it answers, or exclude it", [address, server.outcome])
}

# A cluster is production when its name starts with "prod" or one of its
# servers carries the label env = "prod".
production(name) if startswith(name, "prod")

production(name) if {
	some server in input.servers
	server.cluster == name
	server.labels.env == "prod"
}

gated(name) if {
	some gate in input.gates
	name in gate.before
}

left_out(server) if server.reason in {"excluded", "out_of_scope"}

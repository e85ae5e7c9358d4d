# rackform rehearse -seed 7 -scenario examples/scenarios/nexus-lab-flaky.hcl PLANFILE
# (a plan of examples/nexus-lab)
#
# Random trouble at the rates a large fleet sees: each draw is made per
# server and per step from -seed, so the same seed gives the same
# rehearsal, and another seed another one.

description = "Random update failures and slow reimages across nexus-lab."

random {
  # The probability that a step of this kind fails.
  fail = { update = 0.02, wait_ready = 0.01 }
  # The probability that a step of this kind takes factor times its
  # estimate.
  slow   = { reimage = 0.1, update = 0.05 }
  factor = 3
}

# One BMC of rack r02 drops off the network for good an hour in.
fault "bmc_down" {
  servers = ["lab/r02/r02-s07"]
  at      = "1h"
}

# rackform rehearse -scenario examples/scenarios/fleet-bad-night.hcl PLANFILE
# (a plan of examples/fleet)
#
# A night with trouble that does not stop the rollout: the run goes on,
# slower, and the schedule says how much later it ends. The timed faults
# count from -start: started the afternoon before (16:00 UTC), they land
# in the night the prod stage runs.

description = "Slow flashes in west, a busy BMC, a control-plane member of east down for a while, a read-only filesystem after a reboot."

# The BIOS images flash three times slower on west's first rack.
fault "slow" {
  racks     = ["west/w01"]
  factor    = 3
  steps     = ["update"]
  component = "bios"
}

# The BMC of west's spare answers 503 for a minute and a half, 30 hours
# after the start: the provider's retries wait it out.
fault "bmc_busy" {
  servers = ["west/w02/w02-spare"]
  at      = "30h"
  for     = "90s"
}

# A control-plane member of east goes down for two hours, 29h50m after
# the start: the quorum guard holds the next member until it is back.
fault "host_down" {
  servers = ["east/e03/e03-s1"]
  at      = "29h50m"
  for     = "2h"
}

# After its reboot, one compute server reports a read-only root
# filesystem (health Critical while on) for 15 minutes: the remediation
# trigger fires after 10, it is reimaged, and comes back.
fault "read_only_filesystem" {
  servers = ["east/e01/e01-s3"]
  for     = "15m"
}

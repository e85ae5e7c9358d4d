# rackform rehearse -scenario examples/scenarios/fleet-broken-rack.hcl PLANFILE
# (a plan of examples/fleet)
#
# One compute rack of cluster east never comes back after its reboot:
# both compute servers of rack e02 stay off with health Critical. Their
# wait_ready times out, remediation reimages them, they still do not come
# back, they are powered off and fail; rack e02 breaches its threshold
# (2 of 2 must succeed) and the run stops there.

description = "Rack east/e02's compute servers never come back after their reboot."

fault "never_ready" {
  racks = ["east/e02"]
  roles = ["compute"]
}

# fleet: three clusters upgraded by one rollout — a canary stage, an
# approval gate and a one-hour soak, then production in two parallel groups.
# All BMCs are simulated on loopback (127.2.CLUSTER.SERVER).

variable "bmc_password" {
  type      = string
  sensitive = true
  default   = "" # supplied at plan/apply time with RACKFORM_VAR_bmc_password
}

# The waits are variables so that a run against the simulator can shorten
# them (-var canary_soak=1m -var wait_after_rack=10s); the defaults are the
# production values.
variable "canary_soak" {
  type        = string
  default     = "1h"
  description = "How long to watch the canary after its stage, before the approval gate (a Go duration)."
}

variable "wait_after_rack" {
  type        = string
  default     = "15m"
  description = "The wait after each compute rack before the next starts (a Go duration)."
}

strategy "fleet" {
  compute {
    wait_after_rack = var.wait_after_rack
  }
}

provider "redfish" {
  username = "admin"
  password = var.bmc_password
  insecure = true
}

release "r4_6_1" {
  version      = "4.6.1"
  upgrade_from = ["4.5.3"]

  # Versions as the BMCs report them (the DMTF capture's BIOS "P79 v1.45",
  # BMC "1.45.455b66-rev4"): the vendor scheme compares family and number
  # and keeps the text. The simulator takes an image's version from its
  # file name, or from ?version= when it cannot be one.
  component "bios" {
    match {
      software_id = "BIOS"
    }
    version = "P79 v1.46"
    scheme  = "vendor"
    image   = "https://127.0.0.1:8080/images/bios.bin?version=P79%20v1.46"
  }

  # The BMC's own firmware. On the multi-node chassis of cluster west one
  # BMC serves two servers: it is shared, planned once and flashed once.
  component "bmc" {
    match {
      software_id = "BMC"
    }
    version    = "1.46.455b66-rev1"
    scheme     = "vendor"
    image      = "https://127.0.0.1:8080/images/bmc-1.46.455b66-rev1.bin"
    apply_time = "Immediate"
    reboot     = false
  }

  component "runtime" {
    kind = "runtime"
    match {
      software_id = "runtime-os"
    }
    version = "4.6.1"
    image   = "https://127.0.0.1:8080/images/runtime-4.6.1.iso"
  }
}

maintenance_window "weeknights" {
  start      = "2026-07-06T22:00:00+02:00"
  duration   = "6h"
  recurrence = "daily"
  timezone   = "Europe/Berlin"
}

maintenance_window "early" {
  start      = "2026-07-05T01:00:00Z"
  duration   = "8h"
  recurrence = "daily"
  timezone   = "UTC"
}

rollout "q3" {
  scope = "full"

  stage "canary" {
    after_stage_wait = var.canary_soak

    approval "canary-ok" {
      when        = "after"
      description = "Check the canary cluster's workloads before production."
    }

    group "lab" {
      clusters = [cluster.canary]
    }
  }

  stage "prod" {
    group "east" {
      clusters = [cluster.east]
    }
    group "west" {
      clusters = [cluster.west]
    }
  }
}

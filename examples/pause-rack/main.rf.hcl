# pause-rack: the Nexus "PauseRack" strategy — after every compute rack the
# run pauses until `rackform continue`, with no extra wait between racks.

variable "wait_after_rack" {
  type        = string
  default     = "0s"
  description = "The wait after each compute rack, on top of the pause (a Go duration)."
}

provider "redfish" {
  username = "admin"
  password = env("RACKFORM_BMC_PASSWORD")
  insecure = true
}

release "r4_5_2" {
  version      = "4.5.2"
  upgrade_from = ["4.4.1"]

  component "runtime" {
    kind = "runtime"
    match {
      software_id = "runtime-os"
    }
    version = "4.5.2"
    image   = "https://127.0.0.1:8080/images/runtime-4.5.2.iso"
  }
}

strategy "pause_rack" {
  compute {
    pause_after_rack = true
    wait_after_rack  = var.wait_after_rack
    threshold {
      type  = "count"
      value = 3
    }
  }
}

cluster "edge" {
  strategy = strategy.pause_rack
  release  = release.r4_5_2

  rack "edge" {
    # rack name => third octet of its BMC addresses
    for_each = { r01 = 1, r02 = 2, r03 = 3 }

    server "cp" {
      name = "${each.key}-cp"
      bmc  = "https://127.3.${each.value}.1:8443"
      role = "control_plane"
    }
    server "spare" {
      count = each.key == "r01" ? 1 : 0
      name  = "${each.key}-spare"
      bmc   = "https://127.3.${each.value}.2:8443"
      role  = "control_plane_spare"
    }
    server "compute" {
      count = 4
      name  = "${each.key}-c${count.index + 1}"
      bmc   = "https://127.3.${each.value}.${count.index + 10}:8443"
      role  = "compute"
    }
  }
}

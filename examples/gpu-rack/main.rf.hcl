# gpu-rack: two GPU racks, each with compute trays (servers), NVLink
# switch trays and a power shelf. The switch trays and the power shelf are
# devices: BMCs with a Manager, a Chassis and an UpdateService but no
# ComputerSystem. They are upgraded in a phase of their own, rack by rack,
# before the compute trays (devices = "before_servers"), with the compute
# phase's threshold, wait and pause, and no host step: nothing is drained,
# powered off or rebooted.

provider "redfish" {
  username = "admin"
  password = env("RACKFORM_BMC_PASSWORD")
  insecure = true
}

release "gb200_2508" {
  version = "25.8.0"

  # The compute trays' firmware: a server component (no devices).
  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "https://127.0.0.1:8080/images/bios-2.80.bin"
    match {
      id = "BIOS"
    }
  }

  # The switch trays' controller firmware: for devices of kind
  # switch_tray only. One running member (count = 1): the Recovery image
  # beside it is never compared or flashed.
  component "switch_tray_bmc" {
    devices = ["switch_tray"]
    version = "1.7.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1:8080/images/bmc-1.7.3.bin"
    match {
      id    = "BMC"
      count = 1
    }
  }

  # The power shelves' controller firmware.
  component "power_shelf_controller" {
    devices = ["power_shelf"]
    version = "1.7.3"
    scheme  = "dotted"
    image   = "https://127.0.0.1:8080/images/bmc-1.7.3.bin"
    match {
      id = "BMC"
    }
  }
}

strategy "gpu_racks" {
  devices = "before_servers"
  compute {
    wait_after_rack  = "5m"
    pause_after_rack = true
  }
}

cluster "gpu" {
  release  = release.gb200_2508
  strategy = strategy.gpu_racks

  rack "gpu" {
    # rack name => third octet of its BMC addresses
    for_each = { g01 = 1, g02 = 2 }

    server "tray" {
      count = 4
      name  = "${each.key}-tray${count.index + 1}"
      bmc   = "https://127.8.${each.value}.${count.index + 1}:8443"
      role  = "compute"
    }
    device "nvswitch" {
      count = 2
      name  = "${each.key}-nvsw${count.index + 1}"
      kind  = "switch_tray"
      bmc   = "https://127.8.${each.value}.${count.index + 101}:8443"
    }
    device "shelf" {
      name = "${each.key}-psu"
      kind = "power_shelf"
      bmc  = "https://127.8.${each.value}.200:8443"
    }
  }
}

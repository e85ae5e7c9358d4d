catalog {
  releases = ["4.4.0", "4.5.0", "4.5.2", "4.6.0", "4.6.1"]
}

release "r4_6_1" {
  version      = "4.6.1"
  scheme       = "semver"
  upgrade_from = ["4.5.2", "4.6.0"]

  component "bios" {
    match {
      software_id = "BIOS"
    }
    version    = "2.19.1"
    scheme     = "dotted"
    image      = "https://127.0.0.1:8080/images/bios-2.19.1.bin"
    apply_time = "OnReset"
    reboot     = true
  }

  component "bmc" {
    match {
      software_id = "BMC"
    }
    version    = "7.10.30"
    scheme     = "dotted"
    image      = "https://127.0.0.1:8080/images/bmc-7.10.30.bin"
    apply_time = "Immediate"
    reboot     = false
  }

  component "nic" {
    match {
      software_id = "NIC"
    }
    version = "22.31.6"
    scheme  = "dotted"
    image   = "https://127.0.0.1:8080/images/nic-22.31.6.bin"
  }

  component "runtime" {
    kind = "runtime"
    match {
      software_id = "Runtime"
    }
    version = "4.6.1"
    image   = "https://127.0.0.1:8080/images/runtime-4.6.1.iso"
  }
}

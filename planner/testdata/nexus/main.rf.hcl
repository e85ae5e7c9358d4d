provider "redfish" {
  username = "admin"
  password = env("BMC_PASSWORD")
  ipmi_key = var.ipmi_secret
}

variable "site" {
  type    = string
  default = "lab"
}

variable "ipmi_secret" {
  type      = string
  sensitive = true
  default   = ""
}

release "r461" {
  version = "4.6.1"

  component "bios" {
    version = "2.80"
    scheme  = "dotted"
    image   = "http://127.0.0.1:9/bios-2.80.bin"
    match {
      software_id = "BIOS"
    }
  }
  component "bmc" {
    version    = "1.12"
    scheme     = "dotted"
    image      = "http://127.0.0.1:9/bmc-1.12.bin"
    apply_time = "Immediate"
    reboot     = false
    match {
      id = "BMC"
    }
  }
  component "runtime" {
    kind    = "runtime"
    version = "4.6.1"
    image   = "http://127.0.0.1:9/runtime-4.6.1.iso"
    match {
      name = "Nexus Runtime*"
    }
  }
}

strategy "nexus" {
  drain {
    command = ["kubectl", "drain"]
  }
  uncordon {
    command = ["kubectl", "uncordon"]
  }
  compute {
    pause_after_rack = true
    threshold {
      type  = "percent"
      value = 75
    }
  }
}

cluster "lab" {
  strategy = strategy.nexus
  release  = release.r461
  provider = provider.redfish
  labels   = { site = var.site }

  rack "rack1" {
    server "cp1" {
      bmc  = "https://127.1.1.1:8443"
      role = "control_plane"
    }
    server "cps" {
      bmc  = "https://127.1.1.5:8443"
      role = "control_plane_spare"
    }
    server "mg1" {
      bmc  = "https://127.1.1.2:8443"
      role = "management"
    }
    server "c1a" {
      bmc  = "https://127.1.1.3:8443"
      role = "compute"
    }
    server "c1b" {
      bmc  = "https://127.1.1.4:8443"
      role = "compute"
    }
  }
  rack "rack2" {
    server "cp2" {
      bmc  = "https://127.1.2.1:8443"
      role = "control_plane"
    }
    server "mg2" {
      bmc  = "https://127.1.2.2:8443"
      role = "management"
    }
    server "c2a" {
      bmc  = "https://127.1.2.3:8443"
      role = "compute"
    }
  }
  rack "rack10" {
    server "cp10" {
      bmc  = "https://127.1.10.1:8443"
      role = "control_plane"
    }
    server "mg10" {
      bmc  = "https://127.1.10.2:8443"
      role = "management"
    }
    server "c10a" {
      bmc  = "https://127.1.10.3:8443"
      role = "compute"
      credentials {
        username = "root"
        password = env("BMC_PASSWORD")
      }
    }
  }
}

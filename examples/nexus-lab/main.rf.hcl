# nexus-lab: one cluster of four racks (40 servers from inventory.csv) upgraded
# the Operator Nexus way; every BMC is simulated on loopback (127.1.RACK.SERVER).

variable "bmc_username" {
  type        = string
  default     = "admin"
  description = "BMC login shared by every server of the lab."
}

provider "redfish" {
  username      = var.bmc_username
  password      = env("RACKFORM_BMC_PASSWORD")
  insecure      = true # the simulator's certificate is self-signed
  concurrency   = 16
  per_bmc_limit = 2
  timeout       = "30s"
  poll_interval = var.bmc_poll_interval
}

locals {
  inventory = csvdecode(file("inventory.csv"))
  racks     = distinct([for s in local.inventory : s.rack])
}

cluster "lab" {
  strategy = strategy.nexus
  release  = release.r4_6_1
  provider = provider.redfish
  labels   = { site = "lab", env = "test" }

  rack "inventory" {
    for_each = toset(local.racks)
    labels   = { row = "a" }

    server "inventory" {
      # A list of CSV rows keyed by their name column, in file order.
      for_each  = [for s in local.inventory : s if s.rack == each.key]
      bmc       = each.value.bmc
      role      = each.value.role
      node_name = each.value.node_name
    }
  }
}

locals {
  # east: three racks, generated with dynamic blocks.
  east_racks = {
    e01 = { octet = 1, roles = ["control_plane", "control_plane_spare", "compute", "compute"] }
    e02 = { octet = 2, roles = ["control_plane", "management", "compute", "compute"] }
    e03 = { octet = 3, roles = ["control_plane", "management", "compute", "compute"] }
  }
}

# canary: a single rack, so three control-plane servers in it.
cluster "canary" {
  release            = release.r4_6_1
  strategy           = strategy.fleet
  maintenance_window = maintenance_window.early

  rack "c01" {
    server "cp" {
      count = 3
      name  = "canary-cp-${count.index + 1}"
      bmc   = "https://127.2.1.${count.index + 1}:8443"
      role  = "control_plane"
    }
    server "worker" {
      count = 2
      name  = "canary-w-${count.index + 1}"
      bmc   = "https://127.2.1.${count.index + 11}:8443"
      role  = "compute"
    }
  }
}

cluster "east" {
  release            = release.r4_6_1
  strategy           = strategy.fleet
  maintenance_window = maintenance_window.weeknights
  labels             = { region = "east" }

  dynamic "rack" {
    for_each = local.east_racks
    labels   = [rack.key]
    content {
      dynamic "server" {
        for_each = rack.value.roles
        labels   = ["${rack.key}-s${server.key + 1}"]
        content {
          bmc  = "https://127.2.2.${rack.value.octet * 10 + server.key}:8443"
          role = server.value
        }
      }
    }
  }
}

# west: two racks, so one control-plane server and the spare in the other rack.
cluster "west" {
  release            = release.r4_6_1
  strategy           = strategy.fleet
  maintenance_window = maintenance_window.weeknights
  labels             = { region = "west" }

  rack "w01" {
    server "w01-cp" {
      bmc  = "https://127.2.3.1:8443"
      role = "control_plane"
    }
    server "w01-c1" {
      bmc  = "https://127.2.3.2:8443"
      role = "compute"
    }
    # A multi-node chassis: one BMC serves two nodes (an HPE Cray EX-style
    # node card). Each server names its node by the ComputerSystem Id (or
    # UUID); the BMC's own firmware is shared by both, flashed once.
    server "w01-n0" {
      bmc    = "https://127.2.3.5:8443"
      system = "Node0"
      role   = "compute"
    }
    server "w01-n1" {
      bmc    = "https://127.2.3.5:8443"
      system = "Node1"
      role   = "compute"
    }
  }
  rack "w02" {
    server "w02-spare" {
      bmc  = "https://127.2.3.11:8443"
      role = "control_plane_spare"
    }
    server "w02-c1" {
      bmc  = "https://127.2.3.12:8443"
      role = "compute"
    }
  }
}

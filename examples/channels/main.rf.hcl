# channels: the releases come from a catalog, and the rollout follows a
# channel instead of naming a release (the Fleet auto-upgrade profile).
# Three clusters at three sites; the newest minor (4.6) has not reached
# site north yet, so north-1 is planned pending. BMCs are simulated on
# loopback (127.6.CLUSTER.SERVER).

provider "redfish" {
  username = "admin"
  password = env("RACKFORM_BMC_PASSWORD")
  insecure = true
}

# The releases the organisation publishes: minors 4.4, 4.5 and 4.6, each
# release with its components and where it is available. The file is read
# once by plan and recorded in the plan; apply never reads it again.
catalog {
  source = "catalog.json"
}

# Rapid: the latest patch of the newest minor. Consistent: the newest
# release of that minor available at every site of the run's clusters,
# fixed when the run is planned.
rollout "auto" {
  channel         = "rapid"
  image_selection = "consistent"

  stage "canary" {
    group "west" {
      clusters = [cluster.west-1]
    }
  }
  stage "prod" {
    group "east" {
      clusters = [cluster.east-1]
    }
    group "north" {
      clusters = [cluster.north-1]
    }
  }
}

cluster "west-1" {
  site   = "west"
  labels = { sim_release = "4.5.3" } # what the simulated cluster runs today
  rack "w01" {
    server "w01-cp1" {
      bmc  = "https://127.6.1.1:8443"
      role = "control_plane"
    }
    server "w01-cp2" {
      bmc  = "https://127.6.1.2:8443"
      role = "control_plane"
    }
    server "w01-cp3" {
      bmc  = "https://127.6.1.3:8443"
      role = "control_plane"
    }
  }
}

cluster "east-1" {
  site   = "east"
  labels = { sim_release = "4.5.3" }
  rack "e01" {
    server "e01-cp1" {
      bmc  = "https://127.6.2.1:8443"
      role = "control_plane"
    }
    server "e01-cp2" {
      bmc  = "https://127.6.2.2:8443"
      role = "control_plane"
    }
    server "e01-cp3" {
      bmc  = "https://127.6.2.3:8443"
      role = "control_plane"
    }
  }
}

cluster "north-1" {
  site   = "north"
  labels = { sim_release = "4.5.3" }
  rack "n01" {
    server "n01-cp1" {
      bmc  = "https://127.6.3.1:8443"
      role = "control_plane"
    }
    server "n01-cp2" {
      bmc  = "https://127.6.3.2:8443"
      role = "control_plane"
    }
    server "n01-cp3" {
      bmc  = "https://127.6.3.3:8443"
      role = "control_plane"
    }
  }
}

# The Operator Nexus order, spelled out: every value here is the default,
# written down so reviewers see it.
strategy "nexus" {
  drain_timeout    = "20m"
  shutdown_timeout = "10m"
  verify_timeout   = "1h"

  control_plane {
    on_breach = "pause"
    remediation {
      reboots  = 1
      reimages = 0
    }
  }

  management {
    groups  = 2
    batches = 2
    threshold {
      type  = "percent"
      value = 50
    }
  }

  compute {
    order           = "alphanumeric"
    max_unavailable = "100%"
    wait_after_rack = "15m"
    threshold {
      type  = "percent"
      value = 100
    }
    on_breach = "pause"
  }

  drain {
    command = ["kubectl", "drain", "--ignore-daemonsets", "--delete-emptydir-data"]
    timeout = "20m"
  }

  uncordon {
    command = ["kubectl", "uncordon"]
    timeout = "5m"
  }
}

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
    wait_after_rack = var.wait_after_rack
    # -var pause_after_rack=true: stop after every rack but the last until
    # `rackform continue` (the Nexus "PauseRack" behaviour).
    pause_after_rack = var.pause_after_rack
    threshold {
      type  = "percent"
      value = 100
    }
    on_breach = "pause"
  }

  # Hooks run as argv (no shell unless you ask for one) with RACKFORM_SERVER,
  # RACKFORM_NODE, RACKFORM_RACK, RACKFORM_CLUSTER and RACKFORM_ADDRESS set.
  # The lab has no Kubernetes behind it, so they only say what they would do;
  # a real site drains the node:
  #   command = ["sh", "-c", "kubectl drain --ignore-daemonsets --delete-emptydir-data \"$RACKFORM_NODE\""]
  drain {
    command = ["sh", "-c", "echo cordon+drain \"$RACKFORM_NODE\""]
    timeout = "20m"
  }

  # A real site: ["sh", "-c", "kubectl uncordon \"$RACKFORM_NODE\""]
  uncordon {
    command = ["sh", "-c", "echo uncordon \"$RACKFORM_NODE\""]
    timeout = "5m"
  }
}

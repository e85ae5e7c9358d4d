# Knobs a run may turn without editing the example (-var NAME=VALUE).

variable "pause_after_rack" {
  type        = bool
  default     = false
  description = "Pause after every compute rack but the last until `rackform continue`."
}

variable "bmc_poll_interval" {
  type        = string
  default     = "5s"
  description = "How often the provider polls a BMC task or a server coming back (a Go duration); a fast simulator wants less."
}

variable "wait_after_rack" {
  type        = string
  default     = "15m"
  description = "The wait after each compute rack before the next starts (a Go duration); -var wait_after_rack=10s for a quick run against the simulator."
}

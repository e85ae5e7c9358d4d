cluster "east" {
  rack "r01" {
    server "r01-c01" {
      role = = "compute"
    }
  }
}

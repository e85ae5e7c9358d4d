# Broken on purpose: validate_test.go renders these errors.
cluster "east" {
  rack "r01" {
    server "r01-c01" {
      bmc  = "https://127.0.0.1:8443"
      role = "computer"
    }
  }
}

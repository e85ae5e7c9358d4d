//go:build !unix

package redfish

func fileLimit() int { return 0 }

func availableMemory() int64 { return 0 }

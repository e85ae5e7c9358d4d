// Package rackform holds repository-wide tests (the import rules of
// docs/architecture.md). The program is cmd/rackform.
package rackform

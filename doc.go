// Package rackform holds repository-wide tests (the import rules of
// DESIGN.md §6). The program is cmd/rackform.
package rackform

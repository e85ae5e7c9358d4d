//go:build race

package sim

// raceEnabled: the race detector allows at most 8128 live goroutines, fewer
// than a 10,000-BMC fleet needs.
const raceEnabled = true

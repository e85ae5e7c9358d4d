package main

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSimFault injects or clears a fault on one simulated BMC through the
// simulator's admin API, as a fault that appears (or is repaired) in the
// middle of a run: simfault ADMIN NAME KIND[:ARG] | simfault ADMIN NAME clear
func cmdSimFault(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: simfault ADMIN NAME KIND[:ARG]|clear")
	}
	req := map[string]any{"name": args[1]}
	if args[2] == "clear" {
		req["clear"] = true
	} else {
		req["fault"] = args[2]
	}
	body, _ := json.Marshal(req)
	resp, err := http.Post("http://"+args[0]+"/faults", "application/json", bytes.NewReader(body))
	ts.Check(err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		ts.Fatalf("simfault: %s", resp.Status)
	}
}

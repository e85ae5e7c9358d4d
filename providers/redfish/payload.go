package redfish

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/rackform/rackform/providers"
)

// This file holds the Redfish payload handling the provider does itself
// rather than through gofish: task bodies (monitors answer in several
// shapes) and the fingerprint. Fuzzed in fuzz_test.go.

// fingerprint hashes what matters for drift: the sorted (id, version) pairs,
// power and health. Names and order of the BMC's listing do not count.
func fingerprint(power, health string, comps []providers.Component) string {
	// The text hashed is "power\x00<power>\nhealth\x00<health>\n" and
	// then each "<id>\x00<version>\n", the pairs sorted as strings. It is
	// built in two buffers, not a string per pair: this runs for every
	// server of a plan.
	size := 0
	for _, c := range comps {
		size += len(c.ID) + len(c.Version) + 2
	}
	pairs := make([]byte, 0, size)
	spans := make([][2]int, len(comps))
	for i, c := range comps {
		start := len(pairs)
		pairs = append(append(append(pairs, c.ID...), 0), c.Version...)
		spans[i] = [2]int{start, len(pairs)}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return bytes.Compare(pairs[a[0]:a[1]], pairs[b[0]:b[1]]) })
	text := make([]byte, 0, len(power)+len(health)+16+size)
	text = append(append(append(append(append(text, "power\x00"...), power...), "\nhealth\x00"...), health...), '\n')
	for _, sp := range spans {
		text = append(append(text, pairs[sp[0]:sp[1]]...), '\n')
	}
	sum := sha256.Sum256(text)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// rawTask is a Redfish Task as far as the provider reads it.
type rawTask struct {
	ODataID         string   `json:"@odata.id"`
	ODataType       string   `json:"@odata.type"`
	TaskState       string   `json:"TaskState"`
	TaskStatus      string   `json:"TaskStatus"`
	TaskMonitor     string   `json:"TaskMonitor"`
	PercentComplete *float64 `json:"PercentComplete"`
	Messages        []struct {
		Message   string `json:"Message"`
		MessageID string `json:"MessageId"`
	} `json:"Messages"`
}

// parseTaskBody normalises one answer of a task monitor (or a task
// resource). status is the HTTP status; body may be empty or not a task:
//   - 404/410: the BMC deleted the finished task → TaskGone;
//   - 202 or a 200 Task body: the task's own TaskState;
//   - 200/201/204 without a Task body: the monitor's operation finished,
//     which DSP0266 signals by answering with the operation's result.
//
// ok is false when the answer cannot be read as any of these (a malformed
// body on a 202, an unexpected status).
func parseTaskBody(uri string, status int, body []byte) (providers.TaskStatus, bool) {
	st := providers.TaskStatus{URI: uri, Percent: -1}
	switch status {
	case http.StatusNotFound, http.StatusGone:
		st.State = providers.TaskGone
		return st, true
	case http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
	default:
		return st, false
	}
	var t rawTask
	isTask := false
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &t); err != nil {
			// Garbage is never taken for "finished".
			return st, false
		}
		isTask = t.TaskState != "" || strings.Contains(t.ODataType, "#Task.")
	}
	if !isTask {
		if status == http.StatusAccepted {
			// Still running, and the BMC says no more than that.
			st.State = providers.TaskRunning
			return st, true
		}
		st.State, st.Percent = providers.TaskCompleted, 100
		return st, true
	}
	st.State = normalizeTaskState(t.TaskState, t.TaskStatus)
	if st.State == "" {
		if status == http.StatusAccepted {
			st.State = providers.TaskRunning
		} else {
			return st, false
		}
	}
	if t.PercentComplete != nil && *t.PercentComplete >= 0 && *t.PercentComplete <= 100 {
		st.Percent = int(*t.PercentComplete)
	}
	for _, m := range t.Messages {
		if msg := strings.TrimSpace(m.Message); msg != "" {
			st.Messages = append(st.Messages, truncate(msg, 300))
		} else if m.MessageID != "" {
			st.Messages = append(st.Messages, truncate(m.MessageID, 300))
		}
	}
	if st.State == providers.TaskCompleted {
		st.Percent = 100
	}
	return st, true
}

// normalizeTaskState maps Redfish TaskState onto the provider's states.
// States on the way (Pending, Suspended, Interrupted, Stopping, Service,
// Cancelling) count as Running: the task is not over. A Completed task whose
// TaskStatus is Critical failed (several BMCs report failures that way).
func normalizeTaskState(state, status string) string {
	switch state {
	case "New":
		return providers.TaskNew
	case "Starting":
		return providers.TaskStarting
	case "Running", "Pending", "Suspended", "Interrupted", "Stopping", "Service", "Cancelling":
		return providers.TaskRunning
	case "Completed":
		if status == "Critical" {
			return providers.TaskException
		}
		return providers.TaskCompleted
	case "Exception":
		return providers.TaskException
	case "Killed", "Cancelled":
		return providers.TaskKilled
	}
	return ""
}

// taskURIFromBody finds the task monitor in a body that is a Task.
func taskURIFromBody(body []byte) string {
	var t rawTask
	if json.Unmarshal(body, &t) != nil {
		return ""
	}
	if t.TaskMonitor != "" {
		return relPath(t.TaskMonitor)
	}
	if strings.Contains(t.ODataType, "#Task.") && t.ODataID != "" {
		return relPath(t.ODataID)
	}
	return ""
}

// taskResourceFromBody is the @odata.id of a Task body, or "".
func taskResourceFromBody(body []byte) string {
	var t rawTask
	if len(body) == 0 || json.Unmarshal(body, &t) != nil {
		return ""
	}
	if t.TaskState == "" && !strings.Contains(t.ODataType, "#Task.") {
		return ""
	}
	return relPath(t.ODataID)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

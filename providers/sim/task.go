package sim

import (
	"net/http"
	"strings"
	"time"
)

// The tasks of a BMC's TaskService: each update creates one (update.go),
// which runs until its flash ends. A BMC remembers the last maxTasks, and
// (per profile) forgets finished ones or loses them all when it restarts.

// maxTasks bounds the tasks a BMC remembers (real BMCs purge old ones too).
const maxTasks = 32

// taskList is the tasks one BMC remembers. Its BMC's mu is held for
// every method.
type taskList struct {
	fleet *Fleet
	prof  *profile
	inv   *inventory // the components a task's document names
	list  []*task
	next  int // the last task's Id
}

type task struct {
	id         string
	comp       int   // -1 when the image named no component
	more       []int // further components flashed by the same task (several Targets)
	version    string
	image      string
	start, end time.Time
	state      string // final state, or "" while it runs
	message    string
	hang       bool
	payload    taskPayload
}

// taskPayload is the request that created a task, as Task.Payload shows it.
type taskPayload struct {
	targetURI string
	jsonBody  string
}

// add remembers t, forgetting the oldest beyond maxTasks.
func (tl *taskList) add(t *task) {
	tl.list = append(tl.list, t)
	if len(tl.list) > maxTasks {
		tl.list = tl.list[len(tl.list)-maxTasks:]
	}
}

func (tl *taskList) get(id string) *task {
	for _, t := range tl.list {
		if t.id == id {
			return t
		}
	}
	return nil
}

// forget drops t, as a restarted BMC has lost it..
func (tl *taskList) forget(t *task) {
	for i, x := range tl.list {
		if x == t {
			tl.list = append(tl.list[:i:i], tl.list[i+1:]...)
			return
		}
	}
}

// gone reports whether a finished task is forgotten by now (basic:
// FlashTime after it ended).
func (tl *taskList) gone(t *task, now time.Time) bool {
	return tl.prof.forgetTasks && t.state != "" && now.Sub(t.end) >= tl.fleet.scale(tl.fleet.timings.Flash)
}

// status is the task's state and percent at now.
func (t *task) status(now time.Time) (state string, percent int) {
	if t.state != "" {
		return t.state, 100
	}
	total := t.end.Sub(t.start)
	f := 0.0
	if total > 0 {
		f = float64(now.Sub(t.start)) / float64(total)
	}
	switch {
	case f < 0.03:
		return "New", 0
	case f < 0.08:
		return "Starting", 0
	case t.hang:
		return "Running", min(int(f*100), 42)
	default:
		return "Running", min(int(f*100), 99)
	}
}

func (tl *taskList) doc(t *task, now time.Time) map[string]any {
	state, percent := t.status(now)
	status := "OK"
	msgID, msg := "Update.1.0.UpdateInProgress", "An update is in progress."
	switch state {
	case "Completed":
		msgID, msg = "Base.1.8.Success", "Successfully Completed Request"
		if t.comp >= 0 {
			msg = "The update of " + tl.inv.comps[t.comp].key + " to " + t.version + " completed."
		}
	case "Exception":
		status = "Critical"
		msgID, msg = "Update.1.0.ApplyFailed", t.message
	case "New", "Starting":
		msgID, msg = "Task.1.0.New", "The task with Id '"+t.id+"' has started."
	}
	doc := resource("/redfish/v1/TaskService/Tasks/"+t.id, "#Task.v1_4_3.Task", t.id, "Update "+t.image[strings.LastIndex(t.image, "/")+1:], map[string]any{
		"TaskState":       state,
		"TaskStatus":      status,
		"PercentComplete": percent,
		"StartTime":       t.start.UTC().Format(time.RFC3339),
		"TaskMonitor":     tl.prof.taskMonitor(t.id),
		"Messages": []any{map[string]any{
			"MessageId": msgID, "Message": msg, "Severity": status, "MessageArgs": []any{},
		}},
	})
	if t.state != "" {
		doc["EndTime"] = t.end.UTC().Format(time.RFC3339)
	}
	// Payload (Task v1_3_0 and later) names the request that made the task,
	// so a client that lost the 202 can find its task again. The AMI
	// mockup's tasks show none (only a descriptive Name and Description):
	// there only Name, which carries the image's file name on every
	// profile, identifies an update.
	if tl.prof.name != ProfileAMI && t.payload.targetURI != "" {
		doc["Payload"] = map[string]any{
			"TargetUri":     t.payload.targetURI,
			"HttpOperation": "POST",
			"HttpHeaders":   []any{},
			"JsonBody":      t.payload.jsonBody,
		}
	}
	return doc
}

// monitor answers a GET of a task monitor URI: 202 with the task while
// it runs, then (per profile) 200 with the task or 404 because finished
// monitors vanish. ok is false when p is no task monitor..
func (tl *taskList) monitor(p string, now time.Time) (status int, doc map[string]any, hdr map[string]string, ok bool) {
	var id string
	switch {
	case strings.HasPrefix(p, "/redfish/v1/TaskService/TaskMonitors/"):
		id = strings.TrimPrefix(p, "/redfish/v1/TaskService/TaskMonitors/")
	case strings.HasPrefix(p, "/redfish/v1/TaskService/Tasks/") && strings.HasSuffix(p, "/Monitor"):
		id = strings.TrimSuffix(strings.TrimPrefix(p, "/redfish/v1/TaskService/Tasks/"), "/Monitor")
	default:
		return 0, nil, nil, false
	}
	t := tl.get(id)
	if t == nil || tl.prof.taskMonitor(id) != p || tl.gone(t, now) {
		return http.StatusNotFound, nil, nil, true
	}
	if t.state == "" {
		return http.StatusAccepted, tl.doc(t, now), map[string]string{
			"Location":    p,
			"Retry-After": retryAfter(t.end.Sub(now)),
		}, true
	}
	if tl.prof.monitorVanishes {
		return http.StatusNotFound, nil, nil, true
	}
	return http.StatusOK, tl.doc(t, now), nil, true
}

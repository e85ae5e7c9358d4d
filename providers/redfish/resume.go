package redfish

import (
	"context"
	"encoding/json"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rackform/rackform/providers"
)

// resumeClockSkew is how far a BMC's clock may lag the host's when a task's
// StartTime is compared with Step.ResumeSince: BMC clocks drift, and a
// task missed here would be flashed twice.
const resumeClockSkew = 10 * time.Minute

// resumeUpdate looks, when the step is resumed after a crash
// (Step.ResumeSince set), for the update task the earlier attempt may have
// started: a task for the same image, started at or after ResumeSince less
// the clock skew, that did not fail. It returns nil when there is none, or
// when the BMC cannot list its tasks (with a warning: the update then runs
// again).
func (s *stepRun) resumeUpdate(ctx context.Context) *taskInfo {
	if s.step.ResumeSince.IsZero() {
		return nil
	}
	tasks, err := s.b.Tasks(ctx)
	if err != nil {
		s.warnings = append(s.warnings, providers.Diagnostic{Severity: providers.Warning, Server: s.t.Name,
			Summary: "Cannot list the BMC's tasks",
			Detail:  "Resuming after a restart, the provider could not read TaskService/Tasks to find an update the earlier attempt started (" + s.p.scrub(describe(err)) + "); the update is started again."})
		return nil
	}
	return matchResumeTask(tasks, s.step.ImageURI, s.step.ResumeSince)
}

// matchResumeTask picks the newest task for image started at or after
// since less the clock skew and not failed or killed.
func matchResumeTask(tasks []taskInfo, image string, since time.Time) *taskInfo {
	from := since.Add(-resumeClockSkew)
	var best *taskInfo
	for i := range tasks {
		t := &tasks[i]
		switch t.State {
		case providers.TaskException, providers.TaskKilled, "":
			continue
		}
		if t.Start.IsZero() || t.Start.Before(from) || !taskIsFor(t, image) {
			continue
		}
		if best == nil || !t.Start.Before(best.Start) {
			best = t
		}
	}
	return best
}

// taskIsFor reports whether t was created for image: the Payload's
// ImageURI when it has one (SimpleUpdate), else the image's file name in
// the task's Name or Payload (a push names the file it received).
func taskIsFor(t *taskInfo, image string) bool {
	base := imageFileName(image)
	if t.JSONBody != "" {
		var body struct{ ImageURI string }
		if json.Unmarshal([]byte(t.JSONBody), &body) == nil && body.ImageURI != "" {
			// The same URL, or one the BMC showed redacted (user info
			// dropped) or rewritten: the same file name.
			return body.ImageURI == image || (base != "" && imageFileName(body.ImageURI) == base)
		}
	}
	if base == "" || base == "." || base == "/" {
		return false
	}
	return containsWord(t.Name, base) || containsWord(t.JSONBody, base)
}

// imageFileName is the last path element of an image URL or local path.
func imageFileName(image string) string {
	if u, err := url.Parse(image); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return path.Base(u.Path)
	}
	return filepath.Base(image)
}

// containsWord reports whether s contains name not glued to other file-name
// characters ("bios-2.80.bin" is not in "bios-2.80.bin.sig").
func containsWord(s, name string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !fileNameByte(s[start-1])) && (end == len(s) || !fileNameByte(s[end])) {
			return true
		}
		i = start + 1
	}
}

func fileNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// attach follows a task found by resumeUpdate as if this call had started it.
func (s *stepRun) attach(ctx context.Context, t *taskInfo, deadline time.Time) (*providers.ApplyResult, error) {
	if err := s.report("attaching to task "+t.URI+" (started "+t.Start.UTC().Format(time.RFC3339)+", before the restart)", -1); err != nil {
		return nil, err
	}
	res, err := s.finishTask(ctx, &accepted{TaskURI: t.URI}, deadline)
	if res != nil && err == nil {
		res.Message = "resumed the update started before the restart: " + res.Message
	}
	return res, err
}

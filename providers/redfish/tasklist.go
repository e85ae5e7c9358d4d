package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stmcginnis/gofish"
)

// maxListedTasks bounds how many tasks Tasks reads (the newest ones).
const maxListedTasks = 64

// listedTask is the part of a Task that Tasks reads, raw: JsonBody is a
// string by the schema, but some BMCs send the object itself.
type listedTask struct {
	ID         string `json:"@odata.id"`
	Name       string
	TaskState  string
	TaskStatus string
	StartTime  string
	Payload    struct {
		JSONBody json.RawMessage `json:"JsonBody"`
	}
}

func (b *gofishBMC) Tasks(ctx context.Context) ([]taskInfo, error) {
	var out []taskInfo
	err := b.do(ctx, func(c *gofish.APIClient) error {
		out = out[:0]
		ts, err := c.Service.Tasks()
		if err != nil {
			if statusOf(err) == http.StatusNotFound {
				return nil
			}
			return fmt.Errorf("reading TaskService: %w", err)
		}
		if ts == nil {
			return nil
		}
		var raw struct{ Tasks odataLink }
		_ = json.Unmarshal(ts.RawData, &raw)
		if raw.Tasks.ID == "" {
			return nil
		}
		var coll struct {
			Members []json.RawMessage
		}
		if err := getJSON(ctx, c, raw.Tasks.ID, &coll); err != nil {
			return fmt.Errorf("reading %s: %w", raw.Tasks.ID, err)
		}
		members := coll.Members
		if len(members) > maxListedTasks {
			members = members[len(members)-maxListedTasks:]
		}
		for _, m := range members {
			var t listedTask
			if err := json.Unmarshal(m, &t); err != nil || t.ID == "" {
				continue
			}
			if t.TaskState == "" {
				// A link only: read the task (202 while it runs on some BMCs).
				uri := t.ID
				t = listedTask{}
				if err := getJSON(ctx, c, uri, &t); err != nil {
					if statusOf(err) == http.StatusNotFound {
						continue // deleted meanwhile
					}
					return fmt.Errorf("reading %s: %w", uri, err)
				}
				if t.ID == "" {
					t.ID = uri
				}
			}
			info := taskInfo{URI: relPath(t.ID), Name: t.Name, State: normalizeTaskState(t.TaskState, t.TaskStatus), JSONBody: jsonText(t.Payload.JSONBody)}
			if st, err := time.Parse(time.RFC3339, t.StartTime); err == nil {
				info.Start = st
			}
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// jsonText is a Payload.JsonBody as text: the string's content when it is
// a JSON string (the schema), the raw JSON otherwise.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

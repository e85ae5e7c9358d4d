package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTaskServiceListsUpdates pins what a client that lost an update's 202
// (a crash between the BMC accepting it and the client recording the task)
// needs to find the task again: every update task is a member of
// TaskService/Tasks with its StartTime, a Name carrying the image's file
// name, and (except on AMI, whose mockup tasks show none) a Payload
// naming the request: TargetUri, HttpOperation and, for SimpleUpdate, the
// ImageURI in JsonBody.
func TestTaskServiceListsUpdates(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(p, func(t *testing.T) {
			clk := newClock()
			_, u := one(t, Options{Now: clk.Now}, p)
			prof, _ := loadProfiles()
			pr := prof[p]
			started := clk.Now()
			type want struct{ target, image, body string }
			var wants []want
			if pr.simpleUpdatePath != "" {
				img := "http://127.0.0.1:9/images/bios-2.80.bin"
				if r := call(t, "POST", u+pr.simpleUpdatePath, map[string]any{"ImageURI": img, "TransferProtocol": "HTTP", "@Redfish.OperationApplyTime": "OnReset"}, true); r.status != 202 {
					t.Fatalf("SimpleUpdate: %d %s", r.status, r.body)
				}
				wants = append(wants, want{pr.simpleUpdatePath, "bios-2.80.bin", img})
			}
			clk.Advance(time.Minute)
			if pr.multipartPath != "" {
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				part, _ := mw.CreateFormField("UpdateParameters")
				fmt.Fprint(part, `{"@Redfish.OperationApplyTime":"OnReset"}`)
				file, _ := mw.CreateFormFile("UpdateFile", "nic-3.0.bin")
				file.Write([]byte("image"))
				mw.Close()
				req, _ := http.NewRequest("POST", u+pr.multipartPath, &buf)
				req.Header.Set("Content-Type", mw.FormDataContentType())
				req.SetBasicAuth(testUser, testPass)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 202 {
					t.Fatalf("multipart push: %d", resp.StatusCode)
				}
				wants = append(wants, want{pr.multipartPath, "nic-3.0.bin", ""})
			}
			coll := get(t, u+"/redfish/v1/TaskService/Tasks")
			members, _ := coll["Members"].([]any)
			if len(members) != len(wants) {
				t.Fatalf("TaskService/Tasks lists %d members, want %d: %v", len(members), len(wants), coll)
			}
			for i, m := range members {
				w := wants[i]
				// The DMTF profile's task answers 202 while it runs (its own monitor).
				r := call(t, "GET", u+str(at(m.(map[string]any), "@odata.id")), nil, true)
				if r.status != 200 && r.status != 202 {
					t.Fatalf("task %d: %d %s", i, r.status, r.body)
				}
				doc := r.json(t)
				st, err := time.Parse(time.RFC3339, str(doc["StartTime"]))
				if err != nil || st.Before(started.Truncate(time.Second)) || st.After(clk.Now()) {
					t.Errorf("task %d StartTime %q, want between %s and %s", i, doc["StartTime"], started, clk.Now())
				}
				if !strings.Contains(str(doc["Name"]), w.image) {
					t.Errorf("task %d Name %q does not name the image %s", i, doc["Name"], w.image)
				}
				payload, ok := doc["Payload"].(map[string]any)
				if p == ProfileAMI {
					if ok {
						t.Errorf("AMI task has a Payload: %v", payload)
					}
					continue
				}
				if !ok {
					t.Fatalf("task %d has no Payload: %v", i, doc)
				}
				if str(payload["TargetUri"]) != w.target || str(payload["HttpOperation"]) != "POST" {
					t.Errorf("task %d Payload %v, want TargetUri %s, POST", i, payload, w.target)
				}
				body, isString := payload["JsonBody"].(string)
				if !isString {
					t.Errorf("task %d JsonBody %v is not a string", i, payload["JsonBody"])
				}
				if w.body != "" {
					var req map[string]any
					if err := json.Unmarshal([]byte(body), &req); err != nil || req["ImageURI"] != w.body {
						t.Errorf("task %d JsonBody %q, want ImageURI %s", i, body, w.body)
					}
				}
			}
		})
	}
}

// TestRequireTargets: a BMC with RequireTargets refuses an update without
// Targets and says so in its SimpleUpdate ActionInfo; with Targets it
// accepts it. DMTF lists Targets (optional) either way.
func TestRequireTargets(t *testing.T) {
	for _, require := range []bool{false, true} {
		f := start(t, Options{}, BMCSpec{Name: "s1", Profile: ProfileDMTF, PowerOn: true, RequireTargets: require})
		u := f.BMCs()[0].URL
		info := get(t, u+"/redfish/v1/UpdateService/SimpleUpdateActionInfo")
		listed := false
		for _, p := range info["Parameters"].([]any) {
			if p := p.(map[string]any); p["Name"] == "Targets" {
				listed = p["Required"] == require
			}
		}
		if !listed {
			t.Errorf("require=%v: ActionInfo does not list Targets with Required %v: %v", require, require, info["Parameters"])
		}
		img := "http://127.0.0.1:9/images/bios-2.80.bin"
		r := call(t, "POST", u+"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate", map[string]any{"ImageURI": img}, true)
		if want := map[bool]int{false: 202, true: 400}[require]; r.status != want {
			t.Errorf("require=%v: SimpleUpdate without Targets: %d, want %d", require, r.status, want)
		}
		r = call(t, "POST", u+"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate",
			map[string]any{"ImageURI": img, "Targets": []string{"/redfish/v1/UpdateService/FirmwareInventory/BIOS"}}, true)
		if r.status != 202 {
			t.Errorf("require=%v: SimpleUpdate with Targets: %d %s", require, r.status, r.body)
		}
	}
}

package sim

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
	"time"
)

// with returns a copy of doc with v set at the path of keys, copying only
// the maps along the path: the shared profile documents are never mutated.
func with(doc map[string]any, v any, keys ...string) map[string]any {
	out := make(map[string]any, len(doc)+1)
	for k, x := range doc {
		out[k] = x
	}
	if len(keys) == 1 {
		out[keys[0]] = v
		return out
	}
	inner, _ := doc[keys[0]].(map[string]any)
	out[keys[0]] = with(inner, v, keys[1:]...)
	return out
}

func ref(p string) map[string]any { return map[string]any{"@odata.id": p} }

func collection(p, odataType, name string, members []string) map[string]any {
	refs := make([]any, len(members))
	for i, m := range members {
		refs[i] = ref(m)
	}
	return map[string]any{
		"@odata.id":           p,
		"@odata.type":         odataType,
		"Name":                name,
		"Members":             refs,
		"Members@odata.count": len(members),
	}
}

// render returns the document at p as the BMC shows it at now. b.mu is held.
func (b *bmc) render(p string, now time.Time) (map[string]any, bool) {
	pr := b.prof
	switch p {
	case "/redfish/v1":
		doc := pr.docs[p]
		doc = with(doc, ref("/redfish/v1/SessionService/Sessions"), "Links", "Sessions")
		doc = with(doc, b.spec.Name, "Oem", "Sim", "ServerName")
		return doc, true
	case pr.systemPath:
		return b.renderSystem(pr.docs[p]), true
	case pr.systemPath + "/ResetActionInfo":
		if doc, ok := pr.docs[p]; ok {
			return doc, true
		}
		return actionInfo(p, "ResetActionInfo", resetTypes), true
	case pr.managerPath:
		doc := pr.docs[p]
		doc = with(doc, b.version(ComponentBMC), "FirmwareVersion")
		doc = with(doc, map[string]any{"State": "Enabled", "Health": "OK"}, "Status")
		doc = with(doc, pr.managerPath+"/Actions/Manager.Reset", "Actions", "#Manager.Reset", "target")
		doc = with(doc, pr.managerPath+"/ResetActionInfo", "Actions", "#Manager.Reset", "@Redfish.ActionInfo")
		if strings.HasPrefix(pr.vmediaColl, pr.managerPath) {
			doc = with(doc, ref(pr.vmediaColl), "VirtualMedia")
		}
		return doc, true
	case pr.managerPath + "/ResetActionInfo":
		if doc, ok := pr.docs[p]; ok {
			return doc, true
		}
		return actionInfo(p, "ResetActionInfo", []string{"ForceRestart", "GracefulRestart"}), true
	case pr.vmediaColl:
		if doc, ok := pr.docs[p]; ok {
			return with(doc, []any{ref(pr.vmediaPath)}, "Members"), true
		}
		return collection(p, "#VirtualMediaCollection.VirtualMediaCollection", "Virtual Media Services", []string{pr.vmediaPath}), true
	case pr.vmediaPath:
		return b.renderMedia(pr.docs[p]), true
	case "/redfish/v1/UpdateService":
		return b.renderUpdateService(pr.docs[p]), true
	case "/redfish/v1/UpdateService/SimpleUpdateActionInfo":
		if pr.simpleUpdatePath == "" {
			return nil, false
		}
		if doc, ok := pr.docs[p]; ok && (b.spec.RequireTargets || pr.name == ProfileDMTF) {
			// DMTF's SimpleUpdate takes Targets (UpdateService v1_2); the
			// trimmed mockup does not list it. AMI lists it only when this
			// BMC requires it.
			return b.withTargetsParam(doc), true
		}
	case "/redfish/v1/UpdateService/FirmwareInventory", "/redfish/v1/UpdateService/SoftwareInventory":
		software := strings.HasSuffix(p, "SoftwareInventory")
		var members []string
		for _, c := range pr.components {
			if c.software == software {
				members = append(members, pr.inventoryPath(c))
			}
		}
		return collection(p, "#SoftwareInventoryCollection.SoftwareInventoryCollection", "Software Inventory Collection", members), true
	case "/redfish/v1/TaskService":
		return with(pr.docs[p], ref("/redfish/v1/TaskService/Tasks"), "Tasks"), true
	case "/redfish/v1/TaskService/Tasks":
		members := make([]string, len(b.tasks))
		for i, t := range b.tasks {
			members[i] = "/redfish/v1/TaskService/Tasks/" + t.id
		}
		return collection(p, "#TaskCollection.TaskCollection", "Task Collection", members), true
	case "/redfish/v1/SessionService":
		return with(pr.docs[p], ref("/redfish/v1/SessionService/Sessions"), "Sessions"), true
	case "/redfish/v1/SessionService/Sessions":
		members := make([]string, len(b.sessions))
		for i, s := range b.sessions {
			members[i] = "/redfish/v1/SessionService/Sessions/" + s.id
		}
		return collection(p, "#SessionCollection.SessionCollection", "Session Collection", members), true
	}
	if id, ok := strings.CutPrefix(p, "/redfish/v1/TaskService/Tasks/"); ok {
		if t := b.task(id); t != nil {
			return b.taskDoc(t, now), true
		}
		return nil, false
	}
	if id, ok := strings.CutPrefix(p, "/redfish/v1/SessionService/Sessions/"); ok {
		for _, s := range b.sessions {
			if s.id == id {
				return b.sessionDoc(s), true
			}
		}
		return nil, false
	}
	for i, c := range pr.components {
		if pr.inventoryPath(c) == p {
			return b.renderInventory(i), true
		}
	}
	doc, ok := pr.docs[p]
	return doc, ok
}

func (b *bmc) version(key string) string {
	i, _ := b.prof.component(key)
	return b.versions[i]
}

func actionInfo(p, id string, values []string) map[string]any {
	return map[string]any{
		"@odata.id":   p,
		"@odata.type": "#ActionInfo.v1_1_2.ActionInfo",
		"Id":          id,
		"Name":        "Reset Action Info",
		"Parameters": []any{map[string]any{
			"Name": "ResetType", "Required": true, "DataType": "String", "AllowableValues": values,
		}},
	}
}

func (b *bmc) renderSystem(doc map[string]any) map[string]any {
	doc = with(doc, b.power, "PowerState")
	state := "Enabled"
	if b.power == powerOff {
		state = "StandbyOffline"
	}
	doc = with(doc, map[string]any{"State": state, "Health": b.health, "HealthRollup": b.health}, "Status")
	doc = with(doc, b.boot.target, "Boot", "BootSourceOverrideTarget")
	doc = with(doc, b.boot.enabled, "Boot", "BootSourceOverrideEnabled")
	doc = with(doc, bootTargets, "Boot", "BootSourceOverrideTarget@Redfish.AllowableValues")
	doc = with(doc, bootEnabled, "Boot", "BootSourceOverrideEnabled@Redfish.AllowableValues")
	doc = with(doc, b.spec.Name, "HostName")
	if _, ok := doc["BiosVersion"]; ok {
		doc = with(doc, b.version(ComponentBIOS), "BiosVersion")
	}
	target := b.prof.systemPath + "/Actions/ComputerSystem.Reset"
	doc = with(doc, target, "Actions", "#ComputerSystem.Reset", "target")
	doc = with(doc, resetTypes, "Actions", "#ComputerSystem.Reset", "ResetType@Redfish.AllowableValues")
	doc = with(doc, b.prof.systemPath+"/ResetActionInfo", "Actions", "#ComputerSystem.Reset", "@Redfish.ActionInfo")
	return doc
}

func (b *bmc) renderMedia(doc map[string]any) map[string]any {
	pr := b.prof
	if doc == nil {
		doc = map[string]any{
			"@odata.id":   pr.vmediaPath,
			"@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
			"Id":          pr.vmediaPath[strings.LastIndex(pr.vmediaPath, "/")+1:],
			"Name":        "Virtual Removable Media",
			"MediaTypes":  []any{"CD", "USBStick"},
		}
	}
	inserted := b.media.image != ""
	connected := "NotConnected"
	name := ""
	if inserted {
		connected = "URI"
		name = b.media.image[strings.LastIndex(b.media.image, "/")+1:]
	}
	var image any
	if inserted {
		image = b.media.image
	}
	doc = with(doc, image, "Image")
	doc = with(doc, name, "ImageName")
	doc = with(doc, inserted, "Inserted")
	doc = with(doc, connected, "ConnectedVia")
	doc = with(doc, true, "WriteProtected")
	doc = with(doc, map[string]any{
		"#VirtualMedia.InsertMedia": map[string]any{"target": pr.vmediaPath + "/Actions/VirtualMedia.InsertMedia"},
		"#VirtualMedia.EjectMedia":  map[string]any{"target": pr.vmediaPath + "/Actions/VirtualMedia.EjectMedia"},
	}, "Actions")
	return doc
}

// withTargetsParam adds the Targets parameter to an ActionInfo document.
func (b *bmc) withTargetsParam(doc map[string]any) map[string]any {
	params, _ := doc["Parameters"].([]any)
	out := make([]any, 0, len(params)+1)
	out = append(out, params...)
	out = append(out, map[string]any{"Name": "Targets", "DataType": "StringArray", "Required": b.spec.RequireTargets})
	return with(doc, out, "Parameters")
}

func (b *bmc) renderUpdateService(doc map[string]any) map[string]any {
	pr := b.prof
	doc = with(doc, ref("/redfish/v1/UpdateService/FirmwareInventory"), "FirmwareInventory")
	doc = with(doc, ref("/redfish/v1/UpdateService/SoftwareInventory"), "SoftwareInventory")
	if pr.pushPath != "" {
		doc = with(doc, pr.pushPath, "HttpPushUri")
	}
	if pr.multipartPath != "" {
		doc = with(doc, pr.multipartPath, "MultipartHttpPushUri")
	}
	if pr.simpleUpdatePath != "" {
		doc = with(doc, pr.simpleUpdatePath, "Actions", "#UpdateService.SimpleUpdate", "target")
		doc = with(doc, []string{"HTTP", "HTTPS"}, "Actions", "#UpdateService.SimpleUpdate", "TransferProtocol@Redfish.AllowableValues")
		doc = with(doc, map[string]any{"SupportedValues": []string{"Immediate", "OnReset"}}, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.OperationApplyTimeSupport")
	}
	return doc
}

func (b *bmc) renderInventory(i int) map[string]any {
	c := b.prof.components[i]
	doc := b.prof.inventoryTemplate
	p := b.prof.inventoryPath(c)
	doc = with(doc, p, "@odata.id")
	doc = with(doc, c.id, "Id")
	doc = with(doc, c.name, "Name")
	doc = with(doc, b.versions[i], "Version")
	doc = with(doc, c.key, "SoftwareId")
	doc = with(doc, !c.software, "Updateable")
	doc = with(doc, c.key+" firmware", "Description")
	doc = with(doc, map[string]any{"State": "Enabled", "Health": "OK"}, "Status")
	if _, ok := doc["@odata.context"]; ok {
		doc = with(doc, "/redfish/v1/$metadata#SoftwareInventory.SoftwareInventory", "@odata.context")
	}
	if _, ok := doc["@odata.etag"]; ok {
		h := fnv.New32a()
		h.Write([]byte(b.versions[i]))
		doc = with(doc, fmt.Sprintf(`W/"%08X"`, h.Sum32()), "@odata.etag")
	}
	return doc
}

func (b *bmc) sessionDoc(s *session) map[string]any {
	return map[string]any{
		"@odata.id":   "/redfish/v1/SessionService/Sessions/" + s.id,
		"@odata.type": "#Session.v1_3_0.Session",
		"Id":          s.id,
		"Name":        "User Session",
		"UserName":    b.fleet.opts.Username,
	}
}

func (b *bmc) taskDoc(t *task, now time.Time) map[string]any {
	state, percent := t.status(now)
	status := "OK"
	msgID, msg := "Update.1.0.UpdateInProgress", "An update is in progress."
	switch state {
	case "Completed":
		msgID, msg = "Base.1.8.Success", "Successfully Completed Request"
		if t.comp >= 0 {
			msg = "The update of " + b.prof.components[t.comp].key + " to " + t.version + " completed."
		}
	case "Exception":
		status = "Critical"
		msgID, msg = "Update.1.0.ApplyFailed", t.message
	case "New", "Starting":
		msgID, msg = "Task.1.0.New", "The task with Id '"+t.id+"' has started."
	}
	doc := map[string]any{
		"@odata.id":       "/redfish/v1/TaskService/Tasks/" + t.id,
		"@odata.type":     "#Task.v1_4_3.Task",
		"Id":              t.id,
		"Name":            "Update " + t.image[strings.LastIndex(t.image, "/")+1:],
		"TaskState":       state,
		"TaskStatus":      status,
		"PercentComplete": percent,
		"StartTime":       t.start.UTC().Format(time.RFC3339),
		"TaskMonitor":     b.prof.taskMonitor(t.id),
		"Messages": []any{map[string]any{
			"MessageId": msgID, "Message": msg, "Severity": status, "MessageArgs": []any{},
		}},
	}
	if t.state != "" {
		doc["EndTime"] = t.end.UTC().Format(time.RFC3339)
	}
	// Payload (Task v1_3_0 and later) names the request that made the task,
	// so a client that lost the 202 can find its task again. The AMI
	// mockup's tasks show none (only a descriptive Name and Description):
	// there only Name, which carries the image's file name on every
	// profile, identifies an update.
	if b.prof.name != ProfileAMI && t.payload.targetURI != "" {
		doc["Payload"] = map[string]any{
			"TargetUri":     t.payload.targetURI,
			"HttpOperation": "POST",
			"HttpHeaders":   []any{},
			"JsonBody":      t.payload.jsonBody,
		}
	}
	return doc
}

// taskMonitor answers a GET of a task monitor URI: 202 with the task while
// it runs, then (per profile) 200 with the task or 404 because finished
// monitors vanish. ok is false when p is no task monitor. b.mu is held.
func (b *bmc) taskMonitor(p string, now time.Time) (status int, doc map[string]any, hdr map[string]string, ok bool) {
	var id string
	switch {
	case strings.HasPrefix(p, "/redfish/v1/TaskService/TaskMonitors/"):
		id = strings.TrimPrefix(p, "/redfish/v1/TaskService/TaskMonitors/")
	case strings.HasPrefix(p, "/redfish/v1/TaskService/Tasks/") && strings.HasSuffix(p, "/Monitor"):
		id = strings.TrimSuffix(strings.TrimPrefix(p, "/redfish/v1/TaskService/Tasks/"), "/Monitor")
	default:
		return 0, nil, nil, false
	}
	t := b.task(id)
	if t == nil || b.prof.taskMonitor(id) != p {
		return http.StatusNotFound, nil, nil, true
	}
	if t.state == "" {
		return http.StatusAccepted, b.taskDoc(t, now), map[string]string{
			"Location":    p,
			"Retry-After": retryAfter(t.end.Sub(now)),
		}, true
	}
	if b.prof.monitorVanishes {
		return http.StatusNotFound, nil, nil, true
	}
	return http.StatusOK, b.taskDoc(t, now), nil, true
}

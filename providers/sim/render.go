package sim

import (
	"maps"
	"strings"
	"time"
)

// with returns a copy of doc with v set at the path of keys, copying only
// the maps along the path: the shared profile documents are never mutated.
func with(doc map[string]any, v any, keys ...string) map[string]any {
	out := make(map[string]any, len(doc)+1)
	maps.Copy(out, doc)
	if len(keys) == 1 {
		out[keys[0]] = v
		return out
	}
	inner, _ := doc[keys[0]].(map[string]any)
	out[keys[0]] = with(inner, v, keys[1:]...)
	return out
}

func ref(p string) map[string]any { return map[string]any{"@odata.id": p} }

// resource is a Redfish resource's document: what names it, then props
// (which may name it otherwise).
func resource(p, odataType, id, name string, props map[string]any) map[string]any {
	doc := map[string]any{"@odata.id": p, "@odata.type": odataType, "Id": id, "Name": name}
	maps.Copy(doc, props)
	return doc
}

func collection(p, odataType, name string, members []string) map[string]any {
	return map[string]any{
		"@odata.id":           p,
		"@odata.type":         odataType,
		"Name":                name,
		"Members":             refs(members),
		"Members@odata.count": len(members),
	}
}

// render returns the document at p as the BMC shows it at now. b.mu is held.
func (b *bmc) render(p string, now time.Time) (map[string]any, bool) {
	pr := b.prof
	for _, h := range b.hosts {
		switch p {
		case h.path:
			return b.renderSystem(h), true
		case h.path + "/Bios":
			if !pr.biosResource {
				continue
			}
			return b.renderBios(h), true
		case h.path + "/ResetActionInfo":
			if doc, ok := pr.docs[p]; ok && len(b.hosts) == 1 {
				return doc, true
			}
			return actionInfo(p, "ResetActionInfo", resetTypes), true
		case h.vmediaColl:
			if h.vmediaColl == "" {
				continue
			}
			if doc, ok := pr.docs[p]; ok {
				return with(with(doc, []any{ref(h.vmediaPath)}, "Members"), 1, "Members@odata.count"), true
			}
			return collection(p, "#VirtualMediaCollection.VirtualMediaCollection", "Virtual Media Services", []string{h.vmediaPath}), true
		case h.vmediaPath:
			if h.vmediaPath == "" {
				continue
			}
			return b.renderMedia(h), true
		}
	}
	switch p {
	case "/redfish/v1":
		doc := pr.docs[p]
		doc = with(doc, ref("/redfish/v1/SessionService/Sessions"), "Links", "Sessions")
		doc = with(doc, ref(accountServicePath), "AccountService")
		if _, ok := doc["UUID"]; ok {
			doc = with(doc, b.uuid, "UUID")
		}
		if b.fleet.opts.NoExpand {
			doc = with(doc, map[string]any{}, "ProtocolFeaturesSupported", "ExpandQuery")
		}
		return doc, true
	case "/redfish/v1/odata":
		return b.odataService(), true
	case "/redfish/v1/Systems":
		if pr.noSystems {
			return nil, false // a device serves no Systems collection
		}
		members := b.hostPaths()
		doc := with(pr.docs[p], refs(members), "Members")
		return with(doc, len(members), "Members@odata.count"), true
	case pr.managerPath:
		doc := pr.docs[p]
		if pr.managerVersion != nil {
			doc = with(doc, pr.managerVersion(b.inv.version(ComponentBMC)), "FirmwareVersion")
		}
		doc = with(doc, b.uuid, "UUID")
		doc = with(doc, map[string]any{"State": "Enabled", "Health": "OK"}, "Status")
		doc = with(doc, pr.managerPath+"/Actions/Manager.Reset", "Actions", "#Manager.Reset", "target")
		doc = with(doc, pr.managerPath+"/ResetActionInfo", "Actions", "#Manager.Reset", "@Redfish.ActionInfo")
		if allowed, ok := at(doc, "Actions", "#Manager.Reset", "ResetType@Redfish.AllowableValues").([]any); ok && len(allowed) > 0 {
			doc = with(doc, managerResetTypes, "Actions", "#Manager.Reset", "ResetType@Redfish.AllowableValues")
		}
		if !pr.vmediaUnderSystem {
			doc = with(doc, ref(pr.vmediaColl), "VirtualMedia")
		}
		if pr.activeImages {
			if i, ok := b.inv.component(ComponentBMC); ok {
				images := b.inv.softwareImages(ComponentBMC)
				doc = with(doc, ref(b.inv.memberPath(i)), "Links", "ActiveSoftwareImage")
				doc = withLinks(doc, "SoftwareImages", images)
			}
		}
		if pr.noSystems {
			return doc, true
		}
		return withLinks(doc, "ManagerForServers", b.hostPaths()), true
	case pr.managerPath + "/ResetActionInfo":
		if doc, ok := pr.docs[p]; ok {
			return doc, true
		}
		return actionInfo(p, "ResetActionInfo", managerResetTypes), true
	case pr.chassisPath:
		doc := pr.docs[p]
		serial := b.serial
		if len(b.hosts) == 1 {
			serial = b.hosts[0].serial
		}
		doc = with(doc, serial, "SerialNumber")
		if pr.noSystems {
			return with(doc, b.devHealth, "Status", "Health"), true
		}
		if _, ok := at(doc, "Links", "ComputerSystems").([]any); ok || len(b.hosts) > 1 {
			doc = withLinks(doc, "ComputerSystems", b.hostPaths())
		}
		return doc, true
	case "/redfish/v1/UpdateService":
		return b.renderUpdateService(pr.docs[p]), true
	case "/redfish/v1/UpdateService/SimpleUpdateActionInfo":
		if pr.simpleUpdatePath == "" || !pr.actionInfo {
			return nil, false
		}
		return b.renderSimpleUpdateInfo(pr.docs[p]), true
	case "/redfish/v1/UpdateService/FirmwareInventory", "/redfish/v1/UpdateService/SoftwareInventory":
		if pr.noInventory {
			return nil, false
		}
		software := strings.HasSuffix(p, "SoftwareInventory")
		var members []string
		for _, m := range b.inv.members() {
			if b.inv.comps[m.comp].software == software {
				members = append(members, m.path(&b.inv))
			}
		}
		return collection(p, "#SoftwareInventoryCollection.SoftwareInventoryCollection", "Software Inventory Collection", members), true
	case "/redfish/v1/TaskService":
		return with(pr.docs[p], ref("/redfish/v1/TaskService/Tasks"), "Tasks"), true
	case "/redfish/v1/TaskService/Tasks":
		var members []string
		for _, t := range b.tasks.list {
			if !b.tasks.gone(t, now) {
				members = append(members, "/redfish/v1/TaskService/Tasks/"+t.id)
			}
		}
		return collection(p, "#TaskCollection.TaskCollection", "Task Collection", members), true
	case "/redfish/v1/SessionService":
		return with(pr.docs[p], ref("/redfish/v1/SessionService/Sessions"), "Sessions"), true
	case "/redfish/v1/SessionService/Sessions":
		members := make([]string, len(b.sessions.list))
		for i, s := range b.sessions.list {
			members[i] = "/redfish/v1/SessionService/Sessions/" + s.id
		}
		return collection(p, "#SessionCollection.SessionCollection", "Session Collection", members), true
	}
	if id, ok := strings.CutPrefix(p, "/redfish/v1/TaskService/Tasks/"); ok {
		if t := b.tasks.get(id); t != nil && !b.tasks.gone(t, now) {
			return b.tasks.doc(t, now), true
		}
		return nil, false
	}
	if id, ok := strings.CutPrefix(p, "/redfish/v1/SessionService/Sessions/"); ok {
		for _, s := range b.sessions.list {
			if s.id == id {
				return b.sessions.doc(s), true
			}
		}
		return nil, false
	}
	if doc, ok := renderAccounts(p, b.fleet.opts.Username); ok {
		return doc, true
	}
	if !pr.noInventory && strings.HasPrefix(p, "/redfish/v1/UpdateService/") {
		if m, ok := b.inv.memberAt(p); ok {
			return b.inv.renderMember(m), true
		}
	}
	if strings.HasPrefix(p, "/redfish/v1/Systems/") || strings.HasPrefix(p, pr.vmediaColl) {
		return nil, false // rendered per host above, or not served
	}
	doc, ok := pr.docs[p]
	return doc, ok
}

// managerResetTypes are the Manager.Reset types every profile accepts.
var managerResetTypes = []string{"ForceRestart", "GracefulRestart"}

// withLinks sets doc's Links/name to references to paths, and
// Links/name@odata.count to their number where doc counts them.
func withLinks(doc map[string]any, name string, paths []string) map[string]any {
	doc = with(doc, refs(paths), "Links", name)
	if at(doc, "Links", name+"@odata.count") != nil {
		doc = with(doc, len(paths), "Links", name+"@odata.count")
	}
	return doc
}

// hostPaths are the paths of the BMC's systems.
func (b *bmc) hostPaths() []string {
	out := make([]string, len(b.hosts))
	for i, h := range b.hosts {
		out[i] = h.path
	}
	return out
}

func refs(paths []string) []any {
	out := make([]any, len(paths))
	for i, p := range paths {
		out[i] = ref(p)
	}
	return out
}

// at walks nested maps.
func at(doc map[string]any, keys ...string) any {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func actionInfo(p, id string, values []string) map[string]any {
	return resource(p, "#ActionInfo.v1_1_2.ActionInfo", id, "Reset Action Info", map[string]any{"Parameters": []any{map[string]any{
		"Name": "ResetType", "Required": true, "DataType": "String", "AllowableValues": values,
	}}})
}

func (b *bmc) renderSystem(h *host) map[string]any {
	pr := b.prof
	doc := pr.docs[pr.systemPath]
	if len(b.hosts) > 1 {
		doc = with(doc, h.path, "@odata.id")
		doc = with(doc, h.id, "Id")
		doc = with(doc, h.id, "Name")
		doc = with(doc, []any{ref(pr.managerPath)}, "Links", "ManagedBy")
		doc = with(doc, []any{ref(pr.chassisPath)}, "Links", "Chassis")
	}
	doc = with(doc, h.power, "PowerState")
	state := "Enabled"
	if h.power == powerOff {
		state = "StandbyOffline"
	}
	doc = with(doc, map[string]any{"State": state, "Health": h.health, "HealthRollup": h.health}, "Status")
	doc = with(doc, h.boot.target, "Boot", "BootSourceOverrideTarget")
	doc = with(doc, h.boot.enabled, "Boot", "BootSourceOverrideEnabled")
	doc = with(doc, bootTargets, "Boot", "BootSourceOverrideTarget@Redfish.AllowableValues")
	doc = with(doc, bootEnabled, "Boot", "BootSourceOverrideEnabled@Redfish.AllowableValues")
	doc = with(doc, h.name, "HostName")
	doc = with(doc, h.uuid, "UUID")
	doc = with(doc, h.serial, "SerialNumber")
	doc = with(doc, pr.manufacturer, "Manufacturer")
	doc = with(doc, pr.model, "Model")
	if _, has := doc["BiosVersion"]; has {
		// Only where the real BMC reports it (openbmc's capture has none).
		if i, ok := b.inv.hostComponent(h, ComponentBIOS); ok {
			v := b.inv.versions[i]
			if pr.biosVersion != nil {
				v = pr.biosVersion(v)
			}
			doc = with(doc, v, "BiosVersion")
		}
	}
	if pr.vmediaUnderSystem {
		doc = with(doc, ref(h.vmediaColl), "VirtualMedia")
	}
	if pr.biosResource {
		doc = with(doc, ref(h.path+"/Bios"), "Bios")
	}
	target := h.path + "/Actions/ComputerSystem.Reset"
	doc = with(doc, target, "Actions", "#ComputerSystem.Reset", "target")
	doc = with(doc, resetTypes, "Actions", "#ComputerSystem.Reset", "ResetType@Redfish.AllowableValues")
	doc = with(doc, h.path+"/ResetActionInfo", "Actions", "#ComputerSystem.Reset", "@Redfish.ActionInfo")
	if len(b.hosts) > 1 {
		// The template's other actions name Node0's paths: keep only Reset.
		doc = with(doc, map[string]any{"#ComputerSystem.Reset": at(doc, "Actions", "#ComputerSystem.Reset")}, "Actions")
	}
	return doc
}

func (b *bmc) renderMedia(h *host) map[string]any {
	doc := b.prof.docs[b.prof.vmediaPath]
	if doc == nil || len(b.hosts) > 1 {
		id := h.vmediaPath[strings.LastIndex(h.vmediaPath, "/")+1:]
		doc = resource(h.vmediaPath, "#VirtualMedia.v1_3_0.VirtualMedia", id, "Virtual Removable Media", map[string]any{"MediaTypes": []any{"CD", "USBStick"}})
	}
	inserted := h.media.image != ""
	var image any
	connected, name := "NotConnected", ""
	if inserted {
		image = h.media.image
		connected = "URI"
		name = h.media.image[strings.LastIndex(h.media.image, "/")+1:]
	}
	doc = with(doc, image, "Image")
	doc = with(doc, name, "ImageName")
	doc = with(doc, inserted, "Inserted")
	doc = with(doc, connected, "ConnectedVia")
	doc = with(doc, true, "WriteProtected")
	doc = with(doc, map[string]any{
		"#VirtualMedia.InsertMedia": map[string]any{"target": h.vmediaPath + "/Actions/VirtualMedia.InsertMedia"},
		"#VirtualMedia.EjectMedia":  map[string]any{"target": h.vmediaPath + "/Actions/VirtualMedia.EjectMedia"},
	}, "Actions")
	return doc
}

// simpleUpdateParams are the SimpleUpdate parameters this BMC checks: the
// ActionInfo shows exactly these, and the action enforces them.
func (b *bmc) simpleUpdateParams() (transfer actionParam, targets actionParam, hasTargets bool) {
	pr := b.prof
	transfer = pr.transferProtocol
	if b.spec.StrictTransferProtocol && pr.strictTransfer != nil {
		transfer = *pr.strictTransfer
	}
	switch {
	case pr.targetsAllowable:
		return transfer, actionParam{required: pr.targetsRequired || b.spec.RequireTargets, allowable: b.inv.targetsAllowed()}, true
	case b.spec.RequireTargets && pr.actionInfo:
		return transfer, actionParam{required: true}, true
	}
	return transfer, actionParam{}, false
}

// renderSimpleUpdateInfo is the SimpleUpdateActionInfo: the capture's
// parameters, with TransferProtocol and Targets as this BMC enforces them.
func (b *bmc) renderSimpleUpdateInfo(doc map[string]any) map[string]any {
	transfer, targets, hasTargets := b.simpleUpdateParams()
	params, _ := doc["Parameters"].([]any)
	out := make([]any, 0, len(params)+1)
	for _, x := range params {
		m, _ := x.(map[string]any)
		switch asString(m["Name"]) {
		case "Targets":
			continue // rendered below
		case "TransferProtocol":
			m = with(m, transfer.required, "Required")
			m = with(m, transfer.allowable, "AllowableValues")
		}
		out = append(out, m)
	}
	if hasTargets {
		t := map[string]any{"Name": "Targets", "DataType": "StringArray", "Required": targets.required}
		if targets.allowable != nil {
			t["AllowableValues"] = targets.allowable
		}
		out = append(out, t)
	}
	return with(doc, out, "Parameters")
}

func (b *bmc) renderUpdateService(doc map[string]any) map[string]any {
	pr := b.prof
	if st := b.faults.updateOffline(); st != "" {
		doc = with(doc, st, "Status", "State")
		if st == "Disabled" {
			doc = with(doc, false, "ServiceEnabled")
		}
	}
	if !pr.noInventory || pr.inventoryLinks {
		doc = with(doc, ref("/redfish/v1/UpdateService/FirmwareInventory"), "FirmwareInventory")
		doc = with(doc, ref("/redfish/v1/UpdateService/SoftwareInventory"), "SoftwareInventory")
	}
	if pr.pushPath != "" || pr.deadPushURI != "" {
		doc = with(doc, pr.pushPath+pr.deadPushURI, "HttpPushUri")
	}
	if pr.multipartPath != "" {
		doc = with(doc, pr.multipartPath, "MultipartHttpPushUri")
	}
	if pr.simpleUpdatePath != "" {
		doc = with(doc, pr.simpleUpdatePath, "Actions", "#UpdateService.SimpleUpdate", "target")
		if pr.actionInfo {
			doc = with(doc, "/redfish/v1/UpdateService/SimpleUpdateActionInfo", "Actions", "#UpdateService.SimpleUpdate", "@Redfish.ActionInfo")
		}
		transfer, _, _ := b.simpleUpdateParams()
		doc = with(doc, transfer.allowable, "Actions", "#UpdateService.SimpleUpdate", "TransferProtocol@Redfish.AllowableValues")
		if !pr.noApplyTime {
			doc = with(doc, map[string]any{"SupportedValues": []string{"Immediate", "OnReset"}}, "Actions", "#UpdateService.SimpleUpdate", "@Redfish.OperationApplyTimeSupport")
		}
	}
	return doc
}

// without returns a copy of doc without key.
func without(doc map[string]any, key string) map[string]any {
	if _, ok := doc[key]; !ok {
		return doc
	}
	out := make(map[string]any, len(doc))
	for k, x := range doc {
		if k != key {
			out[k] = x
		}
	}
	return out
}

// odataService is the OData service document: the service root and each
// resource it links at its top level, as singletons.
func (b *bmc) odataService() map[string]any {
	root, _ := b.render("/redfish/v1", time.Time{})
	value := []any{map[string]any{"name": "Service", "kind": "Singleton", "url": "/redfish/v1/"}}
	for _, k := range sortedKeys(root) {
		if u, ok := at(root, k, "@odata.id").(string); ok && k != "Links" {
			value = append(value, map[string]any{"name": k, "kind": "Singleton", "url": u})
		}
	}
	return map[string]any{"@odata.context": "/redfish/v1/$metadata", "value": value}
}

// renderBios is a System's Bios resource: what links the System to the
// BIOS member it runs (Links.ActiveSoftwareImage, Bios v1_1_0).
func (b *bmc) renderBios(h *host) map[string]any {
	doc := resource(h.path+"/Bios", "#Bios.v1_1_0.Bios", "Bios", "BIOS Configuration Current Settings", map[string]any{
		"AttributeRegistry": "BiosAttributeRegistry.v1_0_0",
		"Attributes":        map[string]any{},
	})
	if i, ok := b.inv.hostComponent(h, ComponentBIOS); ok {
		doc["Links"] = map[string]any{"ActiveSoftwareImage": ref(b.inv.memberPath(i)), "SoftwareImages": refs(b.inv.softwareImages(b.inv.comps[i].key))}
	}
	return doc
}

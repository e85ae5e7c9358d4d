package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A profile's documents are written here from the facts of one real BMC
// (profiles_*.go), never copied from a capture: the Ids of its resources,
// the schema version each declares, and the properties a client reads.
// What every Redfish service says (@odata.id, @odata.type, Id, Name, the
// links between the resources) comes from write; what changes with state
// (power, versions, tasks, sessions) is rendered on top at each request.
// TestProfilesHoldToTheirCaptures holds each profile against its capture.

// shape is the facts one profile's documents are written from.
type shape struct {
	system, manager, chassis string // the first system's, the manager's and the chassis' Ids
	schemas                  schemas
	// manufacturer and model are the system's.
	manufacturer, model string
	// Each resource's own properties, merged over what write puts there.
	root, systemDoc, managerDoc, chassisDoc, update, inventory, tasks, sessions map[string]any
	// actionInfo are SimpleUpdateActionInfo parameters besides ImageURI,
	// TransferProtocol and Targets (which the BMC's state decides).
	actionInfo []any
}

// schemas are what the documents declare: the RedfishVersion, and the
// schema version of each type ("v1_5_1" for ServiceRoot, root): the
// capture's, or (listed in the profile's additions) the first that defines
// every property served.
type schemas struct {
	redfish                                                                        string
	root, system, manager, chassis, update, inventory, tasks, sessions, actionInfo string
}

// write builds the profile's documents from s.
func (p *profile) write(s shape) error {
	v := s.schemas
	types := map[string]string{}
	for _, tv := range [][2]string{{"ServiceRoot", v.root}, {"ComputerSystem", v.system}, {"Manager", v.manager}, {"Chassis", v.chassis}, {"UpdateService", v.update},
		{"SoftwareInventory", v.inventory}, {"TaskService", v.tasks}, {"SessionService", v.sessions}, {"ActionInfo", v.actionInfo}} {
		t := tv[0]
		switch {
		case t == "ComputerSystem" && p.noSystems:
			continue
		case tv[1] == "":
			return fmt.Errorf("no schema version for %s", t)
		}
		types[t] = "#" + t + "." + tv[1] + "." + t
	}
	p.systemPath = "/redfish/v1/Systems/" + s.system
	p.managerPath = "/redfish/v1/Managers/" + s.manager
	p.chassisPath = "/redfish/v1/Chassis/" + s.chassis
	p.docs["/redfish/v1"] = resource("/redfish/v1", types["ServiceRoot"], "RootService", "Root Service", merge(map[string]any{
		"RedfishVersion": v.redfish,
		"Systems":        ref("/redfish/v1/Systems"),
		"Chassis":        ref("/redfish/v1/Chassis"),
		"Managers":       ref("/redfish/v1/Managers"),
		"UpdateService":  ref("/redfish/v1/UpdateService"),
		"Tasks":          ref("/redfish/v1/TaskService"),
		"SessionService": ref("/redfish/v1/SessionService"),
	}, s.root))
	if p.noSystems {
		// A device: no Systems link, collection, system or servers.
		p.systemPath = ""
		delete(p.docs["/redfish/v1"], "Systems")
	} else {
		p.docs["/redfish/v1/Systems"] = collection("/redfish/v1/Systems", "#ComputerSystemCollection.ComputerSystemCollection", "Computer System Collection", []string{p.systemPath})
	}
	p.docs["/redfish/v1/Managers"] = collection("/redfish/v1/Managers", "#ManagerCollection.ManagerCollection", "Manager Collection", []string{p.managerPath})
	p.docs["/redfish/v1/Chassis"] = collection("/redfish/v1/Chassis", "#ChassisCollection.ChassisCollection", "Chassis Collection", []string{p.chassisPath})
	managerLinks := map[string]any{}
	if !p.noSystems {
		p.docs[p.systemPath] = resource(p.systemPath, types["ComputerSystem"], s.system, "System", merge(map[string]any{
			"SystemType": "Physical",
			"Links":      map[string]any{"Chassis": []any{ref(p.chassisPath)}, "ManagedBy": []any{ref(p.managerPath)}},
			"Actions":    map[string]any{"#ComputerSystem.Reset": map[string]any{"target": p.systemPath + "/Actions/ComputerSystem.Reset"}},
		}, s.systemDoc))
		managerLinks["ManagerForServers"] = []any{ref(p.systemPath)}
	}
	p.docs[p.managerPath] = resource(p.managerPath, types["Manager"], s.manager, "Manager", merge(map[string]any{
		"ManagerType": "BMC",
		"Links":       managerLinks,
		"Actions":     map[string]any{"#Manager.Reset": map[string]any{"target": p.managerPath + "/Actions/Manager.Reset"}},
	}, s.managerDoc))
	chassis := map[string]any{"ChassisType": "RackMount"}
	if !p.noSystems {
		// ComputerSystems is rendered from the BMC's hosts.
		chassis["Links"] = map[string]any{"ComputerSystems": []any{}, "ManagedBy": []any{ref(p.managerPath)}}
	}
	p.docs[p.chassisPath] = resource(p.chassisPath, types["Chassis"], s.chassis, "Chassis", merge(chassis, s.chassisDoc))
	p.docs["/redfish/v1/UpdateService"] = resource("/redfish/v1/UpdateService", types["UpdateService"], "UpdateService", "Update Service", merge(map[string]any{"ServiceEnabled": true}, s.update))
	p.docs["/redfish/v1/TaskService"] = resource("/redfish/v1/TaskService", types["TaskService"], "TaskService", "Task Service", merge(map[string]any{"ServiceEnabled": true}, s.tasks))
	p.docs["/redfish/v1/SessionService"] = resource("/redfish/v1/SessionService", types["SessionService"], "SessionService", "Session Service", merge(map[string]any{"ServiceEnabled": true}, s.sessions))
	if p.simpleUpdatePath != "" && p.actionInfo {
		params := append([]any{
			map[string]any{"Name": "ImageURI", "Required": true, "DataType": "String"},
			map[string]any{"Name": "TransferProtocol", "DataType": "String"},
		}, s.actionInfo...)
		const ai = "/redfish/v1/UpdateService/SimpleUpdateActionInfo"
		p.docs[ai] = resource(ai, types["ActionInfo"], "SimpleUpdateActionInfo", "SimpleUpdate Action Info", map[string]any{"Parameters": params})
	}
	p.inventoryTemplate = merge(map[string]any{"@odata.type": types["SoftwareInventory"], "Updateable": true}, s.inventory)
	return nil
}

// merge returns base with own's properties set over it; objects present in
// both are merged the same way. Neither argument is changed.
func merge(base, own map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(own))
	maps.Copy(out, base)
	for k, v := range own {
		if b, ok := out[k].(map[string]any); ok {
			if o, ok := v.(map[string]any); ok {
				out[k] = merge(b, o)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// renderedTypes are the schema types the simulator renders itself, beside
// a profile's documents: their namespaces are in every $metadata.
var renderedTypes = []string{
	"#Task.v1_4_3.Task", "#TaskCollection.TaskCollection", "#Session.v1_3_0.Session", "#SessionCollection.SessionCollection",
	"#SoftwareInventoryCollection.SoftwareInventoryCollection", "#VirtualMedia.v1_3_0.VirtualMedia", "#VirtualMediaCollection.VirtualMediaCollection",
	"#ActionInfo.v1_1_2.ActionInfo", "#AccountService.v1_5_0.AccountService", "#ManagerAccount.v1_3_0.ManagerAccount",
	"#ManagerAccountCollection.ManagerAccountCollection", "#Role.v1_2_0.Role", "#RoleCollection.RoleCollection", "#Message.v1_1_1.Message",
	"#Bios.v1_1_0.Bios",
}

// metadataDocument is the profile's $metadata: a reference to the DMTF
// schema file of every namespace its documents use (so a validator finds
// each definition), and the service's entity container.
func metadataDocument(p *profile) []byte {
	ns := map[string]map[string]bool{} // schema file base name → namespaces
	add := func(t string) {
		t = strings.TrimPrefix(t, "#")
		parts := strings.Split(t, ".")
		if len(parts) < 2 {
			return
		}
		if ns[parts[0]] == nil {
			ns[parts[0]] = map[string]bool{}
		}
		ns[parts[0]][parts[0]] = true
		if len(parts) == 3 {
			ns[parts[0]][parts[0]+"."+parts[1]] = true
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if t, ok := v["@odata.type"].(string); ok {
				add(t)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, d := range p.docs {
		walk(d)
	}
	walk(p.inventoryTemplate)
	for _, t := range renderedTypes {
		add(t)
	}
	for _, base := range []string{"Resource", "Settings", "RedfishExtensions"} {
		if ns[base] == nil {
			ns[base] = map[string]bool{base: true}
		}
	}
	ns["RedfishExtensions"]["RedfishExtensions.v1_0_0"] = true
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">` + "\n")
	for _, f := range slices.Sorted(maps.Keys(ns)) {
		fmt.Fprintf(&b, "  <edmx:Reference Uri=\"http://redfish.dmtf.org/schemas/v1/%s_v1.xml\">\n", f)
		for _, n := range slices.Sorted(maps.Keys(ns[f])) {
			if n == "RedfishExtensions.v1_0_0" {
				fmt.Fprintf(&b, "    <edmx:Include Namespace=%q Alias=\"Redfish\"/>\n", n)
				continue
			}
			fmt.Fprintf(&b, "    <edmx:Include Namespace=%q/>\n", n)
		}
		b.WriteString("  </edmx:Reference>\n")
	}
	root, _ := p.docs["/redfish/v1"]["@odata.type"].(string)
	container := strings.TrimPrefix(root, "#")
	container = container[:strings.LastIndex(container, ".")] + ".ServiceContainer"
	b.WriteString("  <edmx:DataServices>\n")
	b.WriteString("    <Schema xmlns=\"http://docs.oasis-open.org/odata/ns/edm\" Namespace=\"Service\">\n")
	fmt.Fprintf(&b, "      <EntityContainer Name=\"Service\" Extends=%q/>\n", container)
	b.WriteString("    </Schema>\n  </edmx:DataServices>\n</edmx:Edmx>\n")
	return []byte(b.String())
}

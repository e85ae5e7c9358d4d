#!/usr/bin/python3
"""Copy and trim the Redfish mockup resources the simulator's profiles use.

Run once by hand (not at test time): copy.py MOCKUPS_DIR OUT_DIR. It copies the
listed resources of each source mockup and drops every link property whose
target the simulator does not serve, so clients never follow a link into a 404.
The simulator renders the dynamic parts (power, versions, tasks, sessions) on
top of these files at run time.
"""
import json, os, sys

PROFILES = {
    "dmtf": ("dmtf/public-rackmount1", [
        "", "odata", "Systems", "Systems/437XR1138R2", "Systems/437XR1138R2/VirtualMedia",
        "Systems/437XR1138R2/VirtualMedia/CD1", "Managers", "Managers/BMC", "Chassis", "Chassis/1U",
        "UpdateService", "UpdateService/SimpleUpdateActionInfo", "UpdateService/FirmwareInventory/BMC",
        "TaskService", "SessionService",
    ]),
    "ilo5": ("csm/DL325", [
        "", "odata", "Systems", "Systems/1", "Managers", "Managers/1", "Managers/1/VirtualMedia",
        "Managers/1/VirtualMedia/2", "Chassis", "Chassis/1", "UpdateService",
        "UpdateService/FirmwareInventory/1", "TaskService", "SessionService",
    ]),
    "ami": ("csm/Gigabyte", [
        "", "odata", "Systems", "Systems/Self", "Systems/Self/ResetActionInfo", "Managers", "Managers/Self",
        "Managers/Self/ResetActionInfo", "Managers/Self/VirtualMedia", "Managers/Self/VirtualMedia/CD1",
        "Chassis", "Chassis/Self", "UpdateService", "UpdateService/SimpleUpdateActionInfo",
        "UpdateService/FirmwareInventory/BIOS", "TaskService", "SessionService",
    ]),
    "openbmc": ("csm/OpenBMC-stock", [
        "", "odata", "Systems", "Systems/system", "Systems/system/ResetActionInfo", "Managers",
        "Managers/bmc", "Managers/bmc/ResetActionInfo", "Chassis", "Chassis/chassis", "UpdateService",
        "UpdateService/FirmwareInventory/5d0869c4", "TaskService", "SessionService",
    ]),
}

# Served by the simulator itself (rendered from state), so links to them stay.
DYNAMIC = ["UpdateService/FirmwareInventory", "UpdateService/SoftwareInventory", "TaskService/Tasks",
           "SessionService/Sessions", "$metadata", "Systems/437XR1138R2/ResetActionInfo",
           "Systems/1/ResetActionInfo", "Managers/BMC/ResetActionInfo", "Managers/1/ResetActionInfo",
           "Managers/bmc/VirtualMedia", "Managers/bmc/VirtualMedia/1"]


def uri(rel):
    return "/redfish/v1/" + rel if rel else "/redfish/v1/"


def trim(v, served):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(x, dict) and set(x) == {"@odata.id"} and x["@odata.id"].rstrip("/") not in served:
                continue
            if k == "Members" and isinstance(x, list):
                x = [m for m in x if m.get("@odata.id", "").rstrip("/") in served]
            out[k] = trim(x, served)
        return out
    if isinstance(v, list):
        return [trim(x, served) for x in v]
    return v


def main(src_root, out_root):
    for name, (src, rels) in PROFILES.items():
        served = {uri(r).rstrip("/") for r in rels + DYNAMIC} | {"/redfish/v1"}
        for rel in rels:
            with open(os.path.join(src_root, src, rel, "index.json")) as f:
                doc = json.load(f)
            if rel in ("Systems", "Managers", "Chassis"):
                served_members = doc.get("Members", [])
                doc["Members"] = served_members[:1]  # one of each: the simulated server
                doc["Members@odata.count"] = 1
            doc = trim(doc, served)
            out = os.path.join(out_root, name, rel, "index.json")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
                f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

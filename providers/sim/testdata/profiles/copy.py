#!/usr/bin/python3
"""Copy and trim the Redfish mockup resources the simulator's profiles use.

Run once by hand (not at test time): copy.py MOCKUPS_DIR OUT_DIR [PROFILE...]. It copies the
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
    "crayex": ("csm/EX235a", [
        "", "Systems", "Systems/Node0", "Managers", "Managers/BMC", "Chassis", "Chassis/Enclosure",
        "UpdateService", "UpdateService/SimpleUpdateActionInfo", "UpdateService/FirmwareInventory/Node0.BIOS",
        "TaskService", "SessionService",
    ]),
}

# The member each collection keeps when it is not the first (the simulated
# server's BMC and enclosure, not a microcontroller or a mezzanine).
KEEP = {("crayex", "Managers"): "/redfish/v1/Managers/BMC", ("crayex", "Chassis"): "/redfish/v1/Chassis/Enclosure"}

# Served by the simulator itself (rendered from state), so links to them stay.
DYNAMIC = ["UpdateService/FirmwareInventory", "UpdateService/SoftwareInventory", "TaskService/Tasks",
           "SessionService/Sessions", "$metadata", "Systems/437XR1138R2/ResetActionInfo",
           "Systems/1/ResetActionInfo", "Managers/BMC/ResetActionInfo", "Managers/1/ResetActionInfo",
           "Managers/bmc/VirtualMedia", "Managers/bmc/VirtualMedia/1",
           "Systems/Node0/ResetActionInfo", "Systems/Node0/VirtualMedia", "Managers/BMC/ResetActionInfo",
           "UpdateService/SimpleUpdateActionInfo", "Managers/Self/ResetActionInfo", "Systems/Self/ResetActionInfo",
           "Managers/bmc/ResetActionInfo", "Systems/system/ResetActionInfo"]


def uri(rel):
    return "/redfish/v1/" + rel if rel else "/redfish/v1/"


def trim(v, served):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(x, dict) and set(x) == {"@odata.id"} and x["@odata.id"].rstrip("/") not in served:
                continue
            if k == "@Redfish.ActionInfo" and isinstance(x, str) and x.rstrip("/") not in served:
                continue  # an ActionInfo the simulator does not serve
            if k.endswith("@odata.count") and k[:-len("@odata.count")] in v:
                continue  # recounted with its list
            if isinstance(x, list) and x and all(isinstance(m, dict) and set(m) == {"@odata.id"} for m in x):
                x = [m for m in x if m["@odata.id"].rstrip("/") in served]
                if not x and k != "Members":
                    continue  # a list of links to nothing served: drop it
                if k + "@odata.count" in v:
                    out[k + "@odata.count"] = len(x)
            out[k] = trim(x, served)
        return out
    if isinstance(v, list):
        return [trim(x, served) for x in v]
    return v


def main(src_root, out_root, only=()):
    for name, (src, rels) in PROFILES.items():
        if only and name not in only:
            continue
        served = {uri(r).rstrip("/") for r in rels + DYNAMIC} | {"/redfish/v1"}
        for rel in rels:
            with open(os.path.join(src_root, src, rel, "index.json")) as f:
                doc = json.load(f)
            if rel in ("Systems", "Managers", "Chassis"):
                served_members = doc.get("Members", [])
                keep = KEEP.get((name, rel))
                if keep:
                    served_members = [m for m in served_members if m.get("@odata.id") == keep]
                doc["Members"] = served_members[:1]  # one of each: the simulated server
                doc["Members@odata.count"] = 1
            doc = trim(doc, served)
            out = os.path.join(out_root, name, rel, "index.json")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
                f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

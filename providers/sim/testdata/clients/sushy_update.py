#!/usr/bin/python3
"""Drive a simulated BMC with Debian's python3-sushy, as an independent client.

Usage: sushy_update.py URL USERNAME CAFILE IMAGE_URI COMPONENT_ID [TARGET [basic]]
(the password comes from the SIM_PASSWORD environment variable, never argv)

TARGET, when given, is sent as SimpleUpdate's Targets. "basic" logs in with
Basic auth (the BMC has no SessionService) and reads the version from
ComputerSystem.BiosVersion (it has no FirmwareInventory); COMPONENT_ID is
then ignored.

Reads the system, runs UpdateService.simple_update (sushy insists on a task
monitor), polls the monitor until the task is done, resets the system and
waits until the firmware inventory item reports a new version. Prints one
JSON object with what it saw, for the Go test to check.
"""
import json
import os
import sys
import time

import sushy


def main():
    url, user, cafile, image, item_id = sys.argv[1:6]
    targets = [sys.argv[6]] if len(sys.argv) > 6 and sys.argv[6] else None
    basic = len(sys.argv) > 7 and sys.argv[7] == "basic"
    auth_class = sushy.auth.BasicAuth if basic else sushy.auth.SessionAuth
    root = sushy.Sushy(url + "/redfish/v1", verify=cafile,
                       auth=auth_class(username=user, password=os.environ["SIM_PASSWORD"]))
    out = {}
    system = root.get_system(root.get_system_collection().members_identities[0])
    out["power_before"] = str(system.power_state.value)
    out["system_id"] = system.identity

    updates = root.get_update_service()
    if basic:
        item = system
        version = lambda: system.bios_version
    else:
        inventory = updates.firmware_inventory
        item = inventory.get_member(inventory.path + "/" + item_id)
        version = lambda: item.version
    out["version_before"] = version()

    monitor = updates.simple_update(image, targets=targets, transfer_protocol="HTTP")
    out["monitor"] = monitor.task_monitor_uri
    states, polls, vanished = [], 0, False
    deadline = time.time() + 60

    def seen(task):
        if task is not None and (not states or states[-1] != str(task.task_state.value)):
            states.append(str(task.task_state.value))

    seen(monitor.task)
    while True:
        try:
            if not monitor.check_is_processing:
                break
        except sushy.exceptions.ResourceNotFoundError:
            # iLO: a finished task monitor vanishes.
            vanished = True
            break
        polls += 1
        seen(monitor.task)
        if time.time() > deadline:
            raise SystemExit("task still processing after 60 s")
        time.sleep(0.02)
    out["polls"] = polls
    out["monitor_vanished"] = vanished

    # Where the task URI answers 200 while running (the standard), sushy's
    # monitor reports "done" at once: follow the task itself until it ends.
    tasks = root.get_task_service().tasks
    if tasks.members_identities:
        task = tasks.get_member(sorted(tasks.members_identities, key=lambda p: int(p.rsplit("/", 1)[1]))[-1])
        while str(task.task_state.value) in ("New", "Starting", "Running", "Pending"):
            seen(task)
            if time.time() > deadline:
                raise SystemExit("task still running after 60 s")
            time.sleep(0.02)
            task.refresh()
        seen(task)
        out["final_state"] = str(task.task_state.value)
        out["final_percent"] = task.percent_complete
    else:
        # An older BMC forgets a finished task: the version read back
        # below is the proof.
        out["final_state"] = states[-1] if states else "forgotten"
    out["states"] = states

    system.reset_system(sushy.ResetType.FORCE_RESTART)
    deadline = time.time() + 60
    while True:
        system.refresh()
        item.refresh()
        if system.power_state == sushy.PowerState.ON and version() != out["version_before"]:
            break
        if time.time() > deadline:
            raise SystemExit("version did not change within 60 s after the reset")
        time.sleep(0.02)
    out["version_after"] = version()
    out["power_after"] = str(system.power_state.value)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

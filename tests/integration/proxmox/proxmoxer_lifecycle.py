"""A full VM lifecycle through proxmoxer (Debian's python3-proxmoxer 1.2), the library Ansible's
community.general proxmox modules are built on. Run by proxmoxer.test.ts against Corral over HTTPS:

    proxmoxer_lifecycle.py HOST:PORT (token USER TOKENNAME SECRET | password USER PASSWORD) VMID NAME

Prints one JSON line per step ({"step": ..., ...}) and exits non-zero with the failing step on stderr."""
import json
import sys
import time

from proxmoxer import ProxmoxAPI
from proxmoxer.core import ResourceException


def step(name, **data):
    print(json.dumps({"step": name, **data}), flush=True)


def wait(px, upid, timeout=60):
    node = upid.split(":")[1]
    deadline = time.time() + timeout
    while True:
        status = px.nodes(node).tasks(upid).status.get()
        if status["status"] == "stopped":
            if status.get("exitstatus") != "OK":
                raise SystemExit(f"task {upid} failed: {status.get('exitstatus')}")
            return status
        if time.time() > deadline:
            raise SystemExit(f"task {upid} still running after {timeout}s")
        time.sleep(0.1)


def main():
    host, mode = sys.argv[1], sys.argv[2]
    if mode == "token":
        user, token_name, secret, vmid, name = sys.argv[3:8]
        px = ProxmoxAPI(host, user=user, token_name=token_name, token_value=secret, verify_ssl=False)
    else:
        user, password, vmid, name = sys.argv[3:7]
        px = ProxmoxAPI(host, user=user, password=password, verify_ssl=False)
    vmid = int(vmid)

    step("version", version=px.version.get()["version"])
    node = px.nodes.get()[0]["node"]
    step("nextid", nextid=px.cluster.nextid.get())

    upid = px.nodes(node).qemu.post(
        vmid=vmid, name=name, cores=1, sockets=1, memory=512, ostype="l26", scsihw="virtio-scsi-pci",
        scsi0="local-lvm:1", ide2="local:iso/debian-12.iso,media=cdrom", net0="virtio,bridge=vmbr0",
        description="made by proxmoxer",
    )
    step("create", upid=upid, task=wait(px, upid))

    row = [r for r in px.cluster.resources.get(type="vm") if r["vmid"] == vmid][0]
    node = row["node"]
    vm = px.nodes(node).qemu(vmid)
    config = vm.config.get()
    step("config", config=config)

    step("start", task=wait(px, vm.status.start.post()))
    step("status", status=vm.status.current.get())

    if vm.config.put(cores=2, memory=1024, description="resized by proxmoxer") is not None:
        raise SystemExit("PUT config must answer data: null")
    step("resize", task=wait(px, vm.resize.put(disk="scsi0", size="+1G")))
    step("updated", config=vm.config.get())

    step("snapshot", task=wait(px, vm.snapshot.post(snapname="hsnap1", description="before")))
    step("snapshots", snapshots=vm.snapshot.get())
    step("rollback", task=wait(px, vm.snapshot("hsnap1").rollback.post()))
    step("delsnapshot", task=wait(px, vm.snapshot("hsnap1").delete()))

    step("start-again", task=wait(px, vm.status.start.post()))
    step("stop", task=wait(px, vm.status.stop.post()))
    step("stopped", status=vm.status.current.get())
    # A task is listed on the node that ran it (the VM moved between nodes while stopped and started).
    step("tasks", tasks=[t for n in px.nodes.get() for t in px.nodes(n["node"]).tasks.get(limit=500)])

    step("delete", task=wait(px, px.nodes(node).qemu(vmid).delete()))
    try:
        vm.status.current.get()
    except ResourceException as err:
        step("gone", status_code=err.status_code, message=str(err))
    else:
        raise SystemExit("status/current still answers after delete")


if __name__ == "__main__":
    main()

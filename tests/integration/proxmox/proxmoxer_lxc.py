"""A container's lifecycle through proxmoxer (Debian's python3-proxmoxer 1.2), the calls Ansible's
community.general.proxmox module (lxc) makes. Run by lxc.test.ts against Corral over HTTPS:

    proxmoxer_lxc.py HOST:PORT USER TOKENNAME SECRET VMID NODE

Prints one JSON line per step ({"step": ..., ...}); rows are reported with each value's Python type name, so the
test sees exactly what a script would get (int vs str). Exits non-zero with the failing step on stderr."""
import json
import sys
import time

from proxmoxer import ProxmoxAPI
from proxmoxer.core import ResourceException


def step(name, **data):
    print(json.dumps({"step": name, **data}), flush=True)


def typed(row):
    return {k: [type(v).__name__, v] for k, v in row.items()}


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
    host, user, token_name, secret, vmid, node = sys.argv[1:7]
    vmid = int(vmid)
    px = ProxmoxAPI(host, user=user, token_name=token_name, token_value=secret, verify_ssl=False)

    # Ansible's proxmox module checks the template is on the storage before it creates.
    templates = px.nodes(node).storage("local").content.get(content="vztmpl")
    step("templates", volids=[t["volid"] for t in templates])

    upid = px.nodes(node).lxc.create(
        vmid=vmid, hostname="pyct", ostemplate="local:vztmpl/alpine-3.20-default_20240908_amd64.tar.xz",
        cores=1, cpulimit=1, memory=512, swap=0, storage="local-lvm", rootfs="local-lvm:1", unprivileged=1,
        net0="name=eth0,bridge=vmbr0,ip=dhcp", onboot=0, force=0,
    )
    step("create", task=wait(px, upid))

    step("list", row=typed([r for r in px.nodes(node).lxc.get() if r["vmid"] == vmid][0]))
    row = [r for r in px.cluster.resources.get(type="vm") if r["vmid"] == vmid][0]
    step("resources", row=typed(row))
    ct = px.nodes(row["node"]).lxc(vmid)
    step("config", config=typed(ct.config.get()))

    step("start", task=wait(px, ct.status.start.post()))
    row = [r for r in px.cluster.resources.get(type="vm") if r["vmid"] == vmid][0]
    ct = px.nodes(row["node"]).lxc(vmid)
    step("current", status=typed(ct.status.current.get()))

    step("update", result=ct.config.put(cores=2, memory=768, description="from proxmoxer"))
    step("updated", config=typed(ct.config.get()))

    step("shutdown", task=wait(px, ct.status.shutdown.post(forceStop=1)))
    step("stopped", status=typed(ct.status.current.get()))

    step("delete", task=wait(px, px.nodes(node).lxc(vmid).delete()))
    try:
        px.nodes(node).lxc(vmid).status.current.get()
        step("gone", still_there=True)
    except ResourceException as err:
        step("gone", status_code=err.status_code, message=str(err))


if __name__ == "__main__":
    main()

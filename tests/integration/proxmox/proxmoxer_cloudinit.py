"""Cloud-init the way proxmoxer scripts set it (Debian's python3-proxmoxer 1.2), run by cloudinit.test.ts:

    proxmoxer_cloudinit.py HOST:PORT SECRET VMID KEY

Creates a VM with a cloud-init drive, ciuser, the URL-encoded key and ipconfig0 (token root@pam!ci), changes
the address with PUT config, regenerates with PUT cloudinit, and prints one JSON line per step."""
import json
import sys
import time
from urllib.parse import quote

from proxmoxer import ProxmoxAPI


def step(name, **data):
    print(json.dumps({"step": name, **data}), flush=True)


def wait(px, upid, timeout=60):
    node = upid.split(":")[1]
    deadline = time.time() + timeout
    while True:
        status = px.nodes(node).tasks(upid).status.get()
        if status["status"] == "stopped":
            return status
        if time.time() > deadline:
            raise SystemExit(f"task {upid} still running after {timeout}s")
        time.sleep(0.1)


def main():
    host, secret, vmid, key = sys.argv[1:5]
    px = ProxmoxAPI(host, user="root@pam", token_name="ci", token_value=secret, verify_ssl=False)
    vm = px.nodes("corral-1").qemu
    upid = vm.post(
        vmid=vmid,
        name="pxer-ci",
        memory=512,
        scsi0="local-lvm:1",
        ide2="local-lvm:cloudinit",
        net0="virtio,bridge=vmbr0",
        ciuser="pyuser",
        cipassword="Py-Secret-9",
        sshkeys=quote(key, safe=""),
        ipconfig0="ip=10.50.0.9/24,gw=10.50.0.1",
    )
    step("create", exitstatus=wait(px, upid)["exitstatus"])
    step("config", config=vm(vmid).config.get())
    vm(vmid).config.put(ipconfig0="ip=10.50.0.10/24,gw=10.50.0.1")
    vm(vmid).cloudinit.put()
    step("cloudinit", items=vm(vmid).cloudinit.get())
    step("dump", user=vm(vmid).cloudinit.dump.get(type="user"), network=vm(vmid).cloudinit.dump.get(type="network"))


if __name__ == "__main__":
    main()

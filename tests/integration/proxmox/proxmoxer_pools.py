"""Pools through proxmoxer (Debian's python3-proxmoxer 1.2), both API generations: PVE 8.1's
/pools?poolid= with nested ids (what bpg sends) and the older /pools/{poolid}. Run by pools.test.ts:

    proxmoxer_pools.py HOST:PORT USER TOKENNAME SECRET VMID1 VMID2

Prints one JSON line per step ({"step": ..., ...}); a refused call prints its ResourceException text."""
import json
import sys

from proxmoxer import ProxmoxAPI
from proxmoxer.core import ResourceException


def step(name, **data):
    print(json.dumps({"step": name, **data}), flush=True)


def refused(name, call):
    try:
        call()
    except ResourceException as e:
        step(name, error=str(e))
    else:
        step(name, error=None)


def main():
    host, user, token_name, secret, vm1, vm2 = sys.argv[1:7]
    px = ProxmoxAPI(host, user=user, token_name=token_name, token_value=secret, verify_ssl=False)

    px.pools.post(poolid="web", comment="front end")
    px.pools.post(poolid="web/db")
    refused("create-again", lambda: px.pools.post(poolid="web"))
    refused("bad-id", lambda: px.pools.post(poolid="we b"))
    step("list", pools=px.pools.get())

    px.pools("web").put(vms=vm1)
    ct = next(r["vmid"] for r in px.cluster.resources.get(type="vm") if r["type"] == "lxc")
    px.pools.put(poolid="web", vms=str(ct))
    px.pools.put(poolid="web/db", vms=vm2)
    step("members-new", pool=px.pools.get(poolid="web"))
    step("members-old", pool=px.pools("web").get())
    step("resources-vm", rows=px.cluster.resources.get(type="vm"))
    step("resources-pool", rows=px.cluster.resources.get(type="pool"))

    refused("in-other-pool", lambda: px.pools.put(poolid="web/db", vms=vm1))
    px.pools.put(poolid="web/db", vms=vm1, **{"allow-move": 1})
    step("moved", ct=ct, web=px.pools.get(poolid="web")[0]["members"], db=px.pools.get(poolid="web/db")[0]["members"])

    refused("delete-non-empty", lambda: px.pools.delete(poolid="web/db"))
    px.pools.put(poolid="web/db", vms=f"{vm1},{vm2}", delete=1)
    refused("remove-absent", lambda: px.pools.put(poolid="web/db", vms=vm1, delete=1))
    px.pools.put(poolid="web", vms=str(ct), delete=1, comment="renamed front")
    px.pools.delete(poolid="web/db")
    step("after-delete", pools=px.pools.get())
    px.pools("web").delete()
    step("empty", pools=px.pools.get())
    refused("missing", lambda: px.pools.get(poolid="web"))


main()

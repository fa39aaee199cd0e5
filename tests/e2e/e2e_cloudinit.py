#!/usr/bin/env python3
"""e2e_cloudinit.py: the guestinfo vmop writes into vCenter, read back and decoded by cloud-init.

devenv up; a VirtualMachine with raw cloud-config from a Secret (given gzip+base64, one of the
accepted forms), SSH keys, a host and domain name and a static address; once it is PoweredOn the
guestinfo.* ExtraConfig keys are read back from the simulator (vimc vm guestinfo --reveal) and
handed to Debian's cloud-init VMware datasource through its VMX_GUESTINFO_* transport, which must
give back exactly the user data, instance-id, host name, SSH keys and netplan network config
that were asked for. The simulator's guest player reports the static address, so
status.network.primaryIP4 must be it. Usage: e2e_cloudinit.py BUILD_DIR. Prints no user data.
"""
import base64
import gzip
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_vm as e  # noqa: E402  (shared devenv/kubectl/vimc helpers)

from cloudinit import helpers  # noqa: E402  (Debian's cloud-init package)
from cloudinit.sources import DataSourceVMware as ds  # noqa: E402

USERDATA = e.canary.user_data("#cloud-config\nusers:\n- name: ops\nruncmd:\n"
                              "- echo '{{ jinja is not templated }}' > /tmp/marker\n")  # + canary
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e e2e@vmop"


def cloudinit_read(keys):
    saved = dict(os.environ)
    try:
        for k in list(os.environ):
            if k.startswith("VMX_"):
                del os.environ[k]
        os.environ["VMX_GUESTINFO"] = "1"
        for k, v in keys.items():
            os.environ[("vmx." + k).upper().replace(".", "_")] = v
        src = ds.DataSourceVMware({}, None, helpers.Paths({"run_dir": tempfile.mkdtemp()}))
        e.check(src._get_data(), "cloud-init found no guestinfo data")
        return src
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_guestinfo(env):
    secret = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "ci-0-user-data", "namespace": e.NS},
              "data": {"user-data": base64.b64encode(
                  base64.b64encode(gzip.compress(USERDATA.encode()))).decode()}}
    vm = e.vm_obj("ci-0", secret="ci-0-user-data", extra={
        "network": {"hostName": "ci-0", "domainName": "example.org",
                    "interfaces": [{"name": "eth0", "addresses": ["192.168.50.10/24"],
                                    "gateway4": "192.168.50.1",
                                    "nameservers": ["192.168.50.2"]}]}})
    vm["spec"]["bootstrap"]["cloudInit"]["sshAuthorizedKeys"] = [KEY]
    env.apply([secret, vm])
    obj = e.wait_running(env, "ci-0")
    st = obj["status"]
    e.check(st["network"]["primaryIP4"] == "192.168.50.10",
            "primaryIP4 %r is not the static address" % st["network"].get("primaryIP4"))
    keys = env.vimc("vm", "guestinfo", "--reveal", st["uniqueID"])
    for k in ("guestinfo.metadata", "guestinfo.userdata"):
        e.check(keys.get(k + ".encoding") == "gzip+base64", "%s.encoding is not gzip+base64" % k)
    src = cloudinit_read(keys)
    ud = src.userdata_raw.decode() if isinstance(src.userdata_raw, bytes) else src.userdata_raw
    e.check(ud == USERDATA, "cloud-init user data differs from the Secret's (lengths %d vs %d)"
            % (len(ud or ""), len(USERDATA)))
    want_id = obj["spec"]["bootstrap"]["cloudInit"].get("instanceID") or obj["spec"]["biosUUID"]
    e.check(src.get_instance_id() == want_id, "instance-id %r, want %r"
            % (src.get_instance_id(), want_id))
    e.check(src.metadata.get("local-hostname") == "ci-0.example.org",
            "local-hostname %r" % src.metadata.get("local-hostname"))
    e.check(KEY in src.get_public_ssh_keys(), "SSH key missing from cloud-init's view")
    net = src.network_config
    e.check(net.get("version") == 2, "network config is not netplan v2")
    eth0 = net["ethernets"]["eth0"]
    e.check(eth0.get("addresses") == ["192.168.50.10/24"], "addresses %r" % eth0.get("addresses"))
    e.check(eth0.get("gateway4") == "192.168.50.1", "gateway4 %r" % eth0.get("gateway4"))
    e.check(eth0.get("dhcp4") is False, "dhcp4 should be false for a static address")
    e.check((eth0.get("nameservers") or {}).get("addresses") == ["192.168.50.2"],
            "nameservers %r" % eth0.get("nameservers"))
    mac = (eth0.get("match") or {}).get("macaddress")
    vc = env.vimc("vm", "info", st["uniqueID"])
    vc_macs = [n.get("mac", "").lower() for n in vc.get("nics", [])]
    e.check(mac and mac in vc_macs, "netplan matches MAC %r, vCenter NICs have %r" % (mac, vc_macs))
    env.kubectl("delete", "vm", "ci-0", "-n", e.NS, "--timeout=60s")


def main():
    return e.run_main([("guestinfo decoded by cloud-init", test_guestinfo)])


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""cloudinit_decode.py: the guestinfo vmop writes, read back by Debian's cloud-init.

Runs gi_dump (vmop's guestinfo encoder) for a few cases, hands the resulting guestinfo keys to
cloud-init's VMware datasource through its environment-variable transport (VMX_GUESTINFO_*, the
same decode path as the guestinfo RPC transport), and checks that cloud-init gets back exactly the
instance-id, host name, network config and user data that were asked for."""
import base64, gzip, os, subprocess, sys, tempfile

from cloudinit import helpers
from cloudinit.sources import DataSourceVMware as ds

GI_DUMP = sys.argv[1]
failures = []


def check(name, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (name, got, want))


def cloudinit_read(keys):
    env = {k: v for k, v in os.environ.items() if not k.startswith("VMX_")}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    os.environ["VMX_GUESTINFO"] = "1"
    for k, v in keys.items():
        os.environ[("vmx." + k).upper().replace(".", "_")] = v
    try:
        src = ds.DataSourceVMware({}, None, helpers.Paths({"run_dir": tempfile.mkdtemp()}))
        if not src._get_data():
            raise RuntimeError("cloud-init found no data")
        return src
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run(args):
    out = subprocess.run([GI_DUMP] + args, check=True, capture_output=True, text=True).stdout
    return dict(line.split("\t", 1) for line in out.splitlines())


userdata = "#cloud-config\nusers:\n  - name: ops\n    ssh_authorized_keys: ['ssh-ed25519 AAAA x']\nruncmd:\n  - echo '{{ not templated }}' > /tmp/x\n"
with tempfile.TemporaryDirectory() as d:
    forms = {
        "plain": userdata.encode(),
        "base64": base64.b64encode(userdata.encode()),
        "gzip+base64": base64.b64encode(gzip.compress(userdata.encode())),
    }
    for form, data in forms.items():
        path = os.path.join(d, form)
        with open(path, "wb") as f:
            f.write(data)
        keys = run(["8f1e3c1a-0b9c-4a61-a2f0-3f7c4b0e9d11", "web-0.example.org",
                    "00:50:56:AB:CD:EF", "static:192.168.10.5/24:192.168.10.1", path])
        check(form + " encoding", keys["guestinfo.userdata.encoding"], "gzip+base64")
        src = cloudinit_read(keys)
        ud = src.userdata_raw.decode() if isinstance(src.userdata_raw, bytes) else src.userdata_raw
        check(form + " userdata", ud, userdata)
        check(form + " instance-id", src.get_instance_id(), "8f1e3c1a-0b9c-4a61-a2f0-3f7c4b0e9d11")
        check(form + " hostname", src.metadata.get("local-hostname"), "web-0.example.org")
        eth0 = src.network_config["ethernets"]["eth0"]
        check(form + " mac", eth0["match"]["macaddress"], "00:50:56:ab:cd:ef")
        check(form + " addresses", eth0["addresses"], ["192.168.10.5/24"])
        check(form + " gateway4", eth0["gateway4"], "192.168.10.1")
        check(form + " dhcp4", eth0["dhcp4"], False)
        check(form + " version", src.network_config["version"], 2)

keys = run(["i-2", "db-1", "00:50:56:00:00:01", "dhcp", "-"])
check("dhcp: no userdata key", "guestinfo.userdata" in keys, False)
src = cloudinit_read(keys)
check("dhcp: dhcp4", src.network_config["ethernets"]["eth0"]["dhcp4"], True)
check("dhcp: instance-id", src.get_instance_id(), "i-2")

for f in failures:
    print("FAIL:", f)
print("%d checks failed" % len(failures) if failures else "cloud-init decoded every case")
sys.exit(1 if failures else 0)

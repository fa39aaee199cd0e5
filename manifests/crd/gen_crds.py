#!/usr/bin/env python3
# gen_crds.py: writes every CustomResourceDefinition in manifests/crd/ (owner: apimodel).
# The YAML files next to this script are GENERATED: edit this script, run `python3 gen_crds.py`,
# and commit both. `python3 gen_crds.py --check` exits 1 when a file is out of date (a unit test runs it).
#
# Sources: ../../../shared/reference/vm-operator.md sections 1-7 (VM Operator v1alpha5 field sets,
# printer columns, webhook rules) and kube-api.md 2.9 (structural schemas). CEL rules stay inside the
# subset the project's test API server implements (see docs/api-compat.md), plus quantity().compareTo().
import copy
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

VMOP_GROUP = "vmoperator.vmware.com"
VMOP_VERSIONS = ["v1alpha1", "v1alpha2", "v1alpha3", "v1alpha4", "v1alpha5", "v1alpha6"]
# The storage version and conversion hub (api/api_convert.h says why v1alpha6).
VMOP_STORAGE = "v1alpha6"
# Every served version is converted by vmop's conversion webhook (operator/admission/adm_convert.c)
# at this Service (manifests/webhook/service.yaml); cert-manager's CA injector writes its caBundle.
WEBHOOK_SERVICE = {"namespace": "vmop-system", "name": "vmop-webhook", "path": "/convert", "port": 443}
WEBHOOK_CA_FROM = "vmop-system/vmop-webhook-cert"
INFRA_GROUP = "infra.vmop.io"
INFRA_VERSION = "v1alpha1"

QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


# ---- schema helpers -------------------------------------------------------------------------
def _d(node, desc, kw):
    if desc:
        node["description"] = desc
    node.update(kw)
    return node


def S(desc="", **kw):
    return _d({"type": "string"}, desc, kw)


def I(desc="", fmt="int32", **kw):
    return _d({"type": "integer", "format": fmt}, desc, kw)


def B(desc="", **kw):
    return _d({"type": "boolean"}, desc, kw)


def E(desc, values, **kw):
    return S(desc, enum=list(values), **kw)


def Q(desc="", **kw):
    """A resource.Quantity: integer or string, as Kubernetes' own schemas write it."""
    node = {"x-kubernetes-int-or-string": True, "pattern": QUANTITY_PATTERN}
    return _d(node, desc, kw)


def IOS(desc="", **kw):
    return _d({"x-kubernetes-int-or-string": True}, desc, kw)


def A(desc, items, **kw):
    return _d({"type": "array", "items": items}, desc, kw)


def SL(desc="", **kw):
    return A(desc, S(), **kw)


def M(desc="", values=None, **kw):
    return _d({"type": "object", "additionalProperties": values or S()}, desc, kw)


def O(desc="", props=None, required=None, rules=None, **kw):
    node = {"type": "object"}
    if desc:
        node["description"] = desc
    if props is not None:
        node["properties"] = props
    if required:
        node["required"] = list(required)
    if rules:
        node["x-kubernetes-validations"] = rules
    node.update(kw)
    return node


def FREE(desc=""):
    return _d({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, desc, {})


def R(rule, message, field_path=None, reason=None):
    r = {"rule": rule, "message": message}
    if field_path:
        r["fieldPath"] = field_path
    if reason:
        r["reason"] = reason
    return r


def immutable_once_set(field, what=None):
    """Transition rule on the parent: once the old object has `field`, it may not change or go."""
    return R(f"!has(oldSelf.{field}) || (has(self.{field}) && self.{field} == oldSelf.{field})",
             "field is immutable", field_path="." + field)


def secret_key_selector(desc, key_default=None):
    key = S("The key of the Secret to select from. Must be a valid secret key.")
    if key_default:
        key["default"] = key_default
    return O(desc, {"name": S("The name of the Secret in the VM's namespace."), "key": key},
             required=["name"] if not key_default else ["name"])


def obj_ref(desc):
    return O(desc, {"apiVersion": S("API version of the referent."), "kind": S("Kind of the referent."),
                    "name": S("Name of the referent.")}, required=["name"])


def conditions(desc="Conditions describe the observed state; Ready first, then by type."):
    cond = O("A metav1.Condition.", {
        "type": S("Type of condition in CamelCase.", maxLength=316,
                  pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"),
        "status": E("Status of the condition.", ["True", "False", "Unknown"]),
        "observedGeneration": I("The .metadata.generation the condition was set from.", fmt="int64", minimum=0),
        "lastTransitionTime": S("Last time the status, reason or message changed (RFC 3339, seconds).",
                                format="date-time"),
        "reason": S("A CamelCase reason; \"True\" on True conditions set by the operator.", maxLength=1024,
                    minLength=1, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"),
        "message": S("A human readable message.", maxLength=32768),
    }, required=["type", "status", "lastTransitionTime", "reason", "message"])
    return A(desc, cond, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]})


def root_schema(kind_desc, spec, status):
    props = {
        "apiVersion": S("APIVersion defines the versioned schema of this representation of an object."),
        "kind": S("Kind is a string value representing the REST resource this object represents."),
        "metadata": {"type": "object"},
    }
    if spec is not None:
        props["spec"] = spec
    if status is not None:
        props["status"] = status
    return O(kind_desc, props)


def ANY(desc=""):
    """Any JSON value, kept as written (a field vmop converts but does not model)."""
    return _d({"x-kubernetes-preserve-unknown-fields": True}, desc, {})


def _at(schema, path):
    """The schema node at a dotted path of property names ("spec.network"); "[]" enters items."""
    node = schema
    for part in path.split("."):
        if part == "[]":
            node = node["items"]
        else:
            node = node["properties"][part]
    return node


# What v1alpha6 adds to the v1alpha5 schema, per kind, as api/api_convert_vm.c and
# api_convert_misc.c drop them going down (path of the parent object, field, schema).
V6_ADDITIONS = {
    "VirtualMachine": [
        ("spec", "volumeAttributesClassName", lambda: S("A VolumeAttributesClass for the VM's disks.")),
        ("spec.bootstrap", "disabled", lambda: B("No bootstrap at all.")),
        ("spec.network", "vlans", lambda: A("VLAN interfaces.", FREE())),
        ("spec.network.interfaces.[]", "type", lambda: S("Adapter type.")),
        ("spec.network.interfaces.[]", "vnumaNodeID", lambda: I("vNUMA node of the adapter.")),
        ("spec.network.interfaces.[]", "vmxnet3", lambda: FREE("vmxnet3 adapter options.")),
        ("spec.network.interfaces.[]", "advancedProperties", lambda: ANY("Adapter advanced properties.")),
        ("spec.network.interfaces.[]", "ipamModes", lambda: SL("IPAM modes.")),
        ("spec.advanced", "preferHtEnabled", lambda: B()),
        ("spec.advanced", "hugePages1GEnabled", lambda: B()),
        ("spec.advanced", "timeTrackerLowLatencyEnabled", lambda: B()),
        ("spec.advanced", "cpuAffinityExclusiveNoStatsEnabled", lambda: B()),
        ("spec.advanced", "vmxSwapEnabled", lambda: B()),
        ("spec.advanced", "pnumaNodeAffinity", lambda: ANY()),
        ("spec.advanced", "extraConfig", lambda: ANY("Extra configuration keys.")),
        ("spec", "resources", lambda: FREE("Per-VM resource overrides.")),
        ("spec", "cpuAdvanced", lambda: FREE("Advanced CPU settings.")),
        ("spec", "memoryAdvanced", lambda: FREE("Advanced memory settings.")),
        ("status", "extraConfig", lambda: ANY()),
        ("status", "disks", lambda: A("", FREE())),
    ],
    "VirtualMachineService": [
        ("spec", "ipFamilies", lambda: SL("IP families.")),
        ("spec", "ipFamilyPolicy", lambda: S("IP family policy.")),
    ],
}


def v6_schema(kind, schema):
    out = copy.deepcopy(schema)
    for parent, field, make in V6_ADDITIONS.get(kind, []):
        props = _at(out, parent).setdefault("properties", {})
        props.setdefault(field, make())
    return out


def older_schema(kind_desc):
    """v1alpha1 .. v1alpha4: their shapes differ from the hub's (renamed and moved fields), so the
    schema keeps spec and status as written; the conversion webhook turns them into v1alpha6, where
    the validating webhook checks them (docs/api-compat.md)."""
    return root_schema(kind_desc, FREE("As the version defines it; converted to v1alpha6."),
                       FREE("As the version defines it; converted from v1alpha6."))


# Printer columns where an older version differs (vm-operator.md section 1): v1alpha1's own,
# and v1alpha2's VM Image column (v1alpha2 has no spec.image, only imageName).
_A1_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_VM_OLD = [{"name": "Power-State", "type": "string", "jsonPath": ".status.powerState"},
           {"name": "Class", "type": "string", "jsonPath": ".spec.className", "priority": 1},
           {"name": "Image", "type": "string", "jsonPath": ".spec.imageName", "priority": 1}]
OLD_COLUMNS = {
    ("VirtualMachine", "v1alpha1"): _VM_OLD + [
        {"name": "Primary-IP", "type": "string", "jsonPath": ".status.vmIp", "priority": 1},
        _A1_AGE],
    ("VirtualMachine", "v1alpha2"): _VM_OLD + [
        {"name": "Primary-IP4", "type": "string", "jsonPath": ".status.network.primaryIP4", "priority": 1},
        _A1_AGE],
    ("VirtualMachineClass", "v1alpha1"): [
        {"name": "CPU", "type": "integer", "jsonPath": ".spec.hardware.cpus"},
        {"name": "Memory", "type": "string", "jsonPath": ".spec.hardware.memory"},
        _A1_AGE],
}
for _k in ("VirtualMachineImage", "ClusterVirtualMachineImage"):
    OLD_COLUMNS[(_k, "v1alpha1")] = [
        {"name": "Display-Name", "type": "string", "jsonPath": ".status.imageName"},
        {"name": "Version", "type": "string", "jsonPath": ".spec.productInfo.version"},
        {"name": "Os-Type", "type": "string", "jsonPath": ".spec.osInfo.type"},
        {"name": "Format", "type": "string", "jsonPath": ".spec.type"},
        _A1_AGE]


def crd(group, version, kind, plural, scope, short, schema, columns=None, categories=None):
    versions = []
    if group == VMOP_GROUP:
        for v in VMOP_VERSIONS:
            if v == VMOP_STORAGE:
                sch = v6_schema(kind, schema)
            elif v == "v1alpha5":
                sch = schema
            else:
                sch = older_schema(schema.get("description", ""))
            ver = {"name": v, "served": True, "storage": v == VMOP_STORAGE, "schema": {"openAPIV3Schema": sch},
                   "subresources": {"status": {}}}
            if v == "v1alpha1":
                ver["deprecated"] = True
                ver["deprecationWarning"] = (f"{VMOP_GROUP}/v1alpha1 {kind} is deprecated; "
                                             f"use {VMOP_GROUP}/{VMOP_STORAGE}")
            cols = OLD_COLUMNS.get((kind, v), columns)
            if cols:
                ver["additionalPrinterColumns"] = cols
            versions.append(ver)
    else:
        ver = {"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
               "subresources": {"status": {}}}
        if columns:
            ver["additionalPrinterColumns"] = columns
        versions.append(ver)
    names = {"kind": kind, "listKind": kind + "List", "plural": plural, "singular": kind.lower()}
    if short:
        names["shortNames"] = short
    if categories:
        names["categories"] = categories
    meta = {"name": f"{plural}.{group}", "labels": {"app.kubernetes.io/part-of": "vmop"}}
    spec = {"group": group, "names": names, "scope": scope, "versions": versions}
    if group == VMOP_GROUP:
        meta["annotations"] = {"cert-manager.io/inject-ca-from": WEBHOOK_CA_FROM}
        spec["conversion"] = {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": {"service": dict(WEBHOOK_SERVICE)}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": meta, "spec": spec}


def col(name, path, type_="string", priority=0, desc=None):
    c = {"name": name, "type": type_, "jsonPath": path}
    if priority:
        c["priority"] = priority
    if desc:
        c["description"] = desc
    return c


AGE = col("Age", ".metadata.creationTimestamp", "date")
POWER_MODES = ["Hard", "Soft", "TrySoft"]

# ---- VirtualMachine -------------------------------------------------------------------------
def vm_bootstrap():
    secret_ref = lambda d: secret_key_selector(d)  # noqa: E731
    value_or_from = O("A value given inline or from a Secret key.", {
        "value": S("The value, inline."),
        "from": secret_ref("A Secret key holding the value."),
    }, rules=[R("!(has(self.value) && has(self.from))", "value and from are mutually exclusive")])
    cloud_config = O("A typed subset of a Cloud-Init cloud-config document.", {
        "timezone": S("The guest time zone."),
        "defaultUserEnabled": B("Keep the image's default user in addition to `users`."),
        "users": A("Users to create.", O("A cloud-init user.", {
            "name": S("The user name."),
            "gecos": S(), "groups": SL("Supplementary groups."), "homedir": S(), "inactive": B(),
            "lock_passwd": B(), "no_create_home": B(), "no_log_init": B(), "no_user_group": B(),
            "passwd": secret_ref("The user's password hash, from a Secret."),
            "hashed_passwd": secret_ref("The user's password hash, from a Secret."),
            "primary_group": S(), "selinux_user": S(), "shell": S(), "snapuser": S(),
            "ssh_authorized_keys": SL("Public SSH keys."), "ssh_import_id": SL(),
            "ssh_redirect_user": B(), "sudo": S("A sudo rule."), "system": B(), "uid": I(fmt="int64"),
            "expiredate": S(), "create_groups": B(),
        }, required=["name"])),
        "runcmd": {"x-kubernetes-preserve-unknown-fields": True,
                   "description": "Commands run at first boot (schemaless: a list of strings or lists)."},
        "write_files": A("Files to write.", O("A file to write.", {
            "path": S("Absolute path of the file."),
            # schemaless, as VM Operator's (a string or {name,key}): kube-apiserver refuses
            # x-kubernetes-int-or-string together with x-kubernetes-preserve-unknown-fields
            "content": {"x-kubernetes-preserve-unknown-fields": True,
                        "description": "The content: a string, or {name,key} of a Secret."},
            "encoding": E("Content encoding.", ["b64", "base64", "gz", "gzip", "gz+base64", "gzip+base64",
                                                "gz+b64", "gzip+b64", "text/plain"], default="text/plain"),
            "owner": S("owner:group", default="root:root"),
            "permissions": S("Octal mode.", default="0644"),
            "append": B(), "defer": B(),
        }, required=["path"])),
        "ssh_pwauth": B("Allow SSH password authentication."),
    })
    cloud_init = O("Cloud-Init bootstrap (guestinfo datasource).", {
        "instanceID": S("The cloud-init instance ID; defaults to spec.biosUUID when the VM is created."),
        "cloudConfig": cloud_config,
        "rawCloudConfig": secret_key_selector(
            "A Secret key with the raw cloud-config (plain, base64, or gzip+base64). If the key is missing "
            "the keys `user-data` and then `value` are tried."),
        "sshAuthorizedKeys": SL("Public SSH keys for the default user."),
        "useGlobalNameserversAsDefault": B("Use spec.network.nameservers for interfaces without their own "
                                           "(nil means true)."),
        "useGlobalSearchDomainsAsDefault": B("Use spec.network.searchDomains for interfaces without their "
                                             "own (nil means true)."),
        "waitOnNetwork4": B("Make cloud-init wait for an IPv4 address."),
        "waitOnNetwork6": B("Make cloud-init wait for an IPv6 address."),
    }, rules=[R("!(has(self.cloudConfig) && has(self.rawCloudConfig))",
                "cloudConfig and rawCloudConfig are mutually exclusive", reason="FieldValueForbidden")])
    linux_prep = O("vSphere guest OS customization for Linux.", {
        "hardwareClockIsUTC": B("Whether the hardware clock is in UTC."),
        "timeZone": S("The time zone (tz database name)."),
        "expirePasswordAfterNextLogin": B(),
        "password": secret_key_selector("The root password.", key_default="password"),
        "scriptText": value_or_from,
        "customizeAtNextPowerOn": B("Customize again at the next power-on."),
    })
    sysprep_typed = O("A typed sysprep answer file.", {
        "guiRunOnce": O("", {"commands": SL("Commands run at first logon.")}),
        "guiUnattended": O("", {
            "autoLogon": B(), "autoLogonCount": I(), "password": secret_key_selector("Administrator password."),
            "timeZone": I("Windows time zone index."),
        }),
        "identification": O("", {
            "domainAdmin": S(), "domainAdminPassword": secret_key_selector("Domain admin password."),
            "domainOU": S(), "joinDomain": S(), "joinWorkgroup": S(),
        }),
        "licenseFilePrintData": O("", {"autoMode": E("", ["perServer", "perSeat"]), "autoUsers": I()}),
        "userData": O("", {"fullName": S(), "orgName": S(), "productID": secret_key_selector("Product key.")}),
        "expirePasswordAfterNextLogin": B(),
        "scriptText": value_or_from,
    })
    sysprep = O("Windows sysprep customization: exactly one of sysprep and rawSysprep.", {
        "sysprep": sysprep_typed,
        "rawSysprep": secret_key_selector("A Secret key with a raw sysprep XML answer file."),
        "customizeAtNextPowerOn": B(),
    }, rules=[R("has(self.sysprep) != has(self.rawSysprep)",
                "exactly one of sysprep and rawSysprep is required")])
    vapp = O("vApp properties.", {
        "properties": A("Properties set by key.", O("", {
            "key": S("The property key."),
            "value": value_or_from,
        }, required=["key"]), **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key"]}),
        "rawProperties": S("Name of a Secret whose keys are property keys."),
    }, rules=[R("!(has(self.properties) && has(self.rawProperties))",
                "properties and rawProperties are mutually exclusive")])
    return O("How the guest is bootstrapped. Allowed: cloudInit alone; linuxPrep or sysprep (not both), each "
             "optionally with vAppConfig; vAppConfig alone.", {
                 "cloudInit": cloud_init,
                 "linuxPrep": linux_prep,
                 "sysprep": sysprep,
                 "vAppConfig": vapp,
             }, rules=[
                 R("!(has(self.cloudInit) && (has(self.linuxPrep) || has(self.sysprep) || has(self.vAppConfig)))",
                   "cloudInit may not be combined with linuxPrep, sysprep or vAppConfig",
                   reason="FieldValueForbidden"),
                 R("!(has(self.linuxPrep) && has(self.sysprep))",
                   "linuxPrep and sysprep are mutually exclusive", reason="FieldValueForbidden"),
             ])


def vm_network():
    route = O("A static route.", {
        "to": S("Destination: `default` or an IP address/CIDR."),
        "via": S("Gateway IP address."),
        "metric": I("Route metric.", minimum=1),
    }, required=["to", "via"])
    iface = O("A network interface.", {
        "name": S("Interface name; also the default guest device name. Immutable.", pattern=r"^[a-z0-9]{2,}$",
                  maxLength=15),
        "network": O("The network to attach to: a tenant network name from the namespace binding "
                     "(apiVersion/kind are accepted and ignored by vmop).", {
                         "apiVersion": S(maxLength=253), "kind": S(maxLength=63),
                         "name": S("The network name.", maxLength=253)}),
        "guestDeviceName": S("Device name inside the guest.", pattern=r"^[A-Za-z0-9_][A-Za-z0-9_]+$"),
        "macAddr": S("MAC address (NSX/VPC only).", pattern=r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$",
                     maxLength=17),
        "addresses": A("Static IP addresses in CIDR notation.", S(maxLength=64), maxItems=64),
        "dhcp4": B("Use DHCP for IPv4; excludes IPv4 addresses and gateway4."),
        "dhcp6": B("Use DHCP for IPv6; excludes IPv6 addresses and gateway6."),
        "gateway4": S("IPv4 gateway; `None` suppresses the provider gateway."),
        "gateway6": S("IPv6 gateway; `None` suppresses the provider gateway."),
        "mtu": I("MTU.", fmt="int64", minimum=68, maximum=9216),
        "nameservers": SL("DNS servers (IP addresses).", maxItems=16),
        "routes": A("Static routes.", route, maxItems=64),
        "searchDomains": SL("DNS search domains.", maxItems=16),
    }, required=["name"], rules=[
        R("!(has(self.dhcp4) && self.dhcp4 && has(self.addresses) && self.addresses.exists(a, a.contains('.')))",
          "dhcp4 excludes IPv4 addresses", field_path=".addresses"),
        R("!(has(self.dhcp6) && self.dhcp6 && has(self.addresses) && self.addresses.exists(a, a.contains(':')))",
          "dhcp6 excludes IPv6 addresses", field_path=".addresses"),
        R("!(has(self.dhcp4) && self.dhcp4 && has(self.gateway4) && self.gateway4 != '' && self.gateway4 != 'None')",
          "dhcp4 excludes gateway4", field_path=".gateway4"),
        R("!(has(self.dhcp6) && self.dhcp6 && has(self.gateway6) && self.gateway6 != '' && self.gateway6 != 'None')",
          "dhcp6 excludes gateway6", field_path=".gateway6"),
        R("!has(self.gateway4) || self.gateway4 == '' || self.gateway4 == 'None' || "
          "(has(self.addresses) && self.addresses.exists(a, a.contains('.')))",
          "gateway4 requires an IPv4 address in addresses", field_path=".gateway4"),
        R("!has(self.gateway6) || self.gateway6 == '' || self.gateway6 == 'None' || "
          "(has(self.addresses) && self.addresses.exists(a, a.contains(':')))",
          "gateway6 requires an IPv6 address in addresses", field_path=".gateway6"),
    ])
    same_nic = ("self.interfaces.exists(n, n.name == o.name && "
                "((!has(n.network) && !has(o.network)) || (has(n.network) && has(o.network) && n.network == o.network)) && "
                "((!has(n.macAddr) && !has(o.macAddr)) || (has(n.macAddr) && has(o.macAddr) && n.macAddr == o.macAddr)))")
    return O("Guest networking.", {
        "disabled": B("No network interfaces and no default one."),
        "hostName": S("Guest host name (RFC 1034 label); defaults to the VM name.", maxLength=63,
                      pattern=r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"),
        "domainName": S("Guest domain name.", maxLength=253),
        "nameservers": SL("Global DNS servers.", maxItems=16),
        "searchDomains": SL("Global DNS search domains.", maxItems=16),
        "interfaces": A("Network interfaces (at most 10). Names, networks and MAC addresses are immutable, "
                        "and so is the number of interfaces once set.", iface, maxItems=10,
                        **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
    }, rules=[
        R("!has(oldSelf.interfaces) || (has(self.interfaces) && size(self.interfaces) == size(oldSelf.interfaces) && "
          "oldSelf.interfaces.all(o, " + same_nic + "))",
          "interface names, networks, MAC addresses and the number of interfaces are immutable",
          field_path=".interfaces", reason="FieldValueForbidden"),
        R("!(has(self.disabled) && self.disabled && has(self.interfaces) && size(self.interfaces) > 0)",
          "interfaces are not allowed when networking is disabled", field_path=".interfaces",
          reason="FieldValueForbidden"),
    ])


VOLUME_IMMUTABLE = ["applicationType", "controllerBusNumber", "controllerType", "diskMode", "sharingMode",
                    "unitNumber"]


def vm_volumes():
    pvc = O("A PersistentVolumeClaim to attach.", {
        "claimName": S("Name of the PVC in the VM's namespace."),
        "readOnly": B("Attach read-only."),
        "instanceVolumeClaim": O("Set by the system for instance storage; users may not set it.", {
            "storageClass": S(), "size": Q("Size of the instance volume."),
        }, required=["storageClass", "size"]),
    }, required=["claimName"])
    vol = O("A volume.", {
        "name": S("Volume name, unique in the VM.", pattern=DNS1123_SUBDOMAIN, maxLength=253),
        "persistentVolumeClaim": pvc,
        "removable": B("Whether the volume may be removed from the spec later.", default=True),
        "applicationType": E("Application preset (immutable).", ["OracleRAC", "MicrosoftWSFC"]),
        "controllerBusNumber": I("Controller bus number (immutable).", minimum=0),
        "controllerType": E("Controller type (immutable).", ["IDE", "NVME", "SCSI", "SATA"]),
        "diskMode": E("Disk mode (immutable).", ["IndependentNonPersistent", "IndependentPersistent",
                                                 "NonPersistent", "Persistent"]),
        "sharingMode": E("Sharing mode (immutable).", ["MultiWriter", "None"]),
        "unitNumber": I("Unit number on the controller (immutable).", minimum=0),
    }, required=["name"])
    same = " && ".join(f"((!has(n.{f}) && !has(o.{f})) || (has(n.{f}) && has(o.{f}) && n.{f} == o.{f}))"
                       for f in VOLUME_IMMUTABLE)
    return A("Volumes attached to the VM.", vol, maxItems=64, **{
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-validations": [
            R("oldSelf.all(o, !self.exists(n, n.name == o.name) || self.exists(n, n.name == o.name && " + same + "))",
              "applicationType, controllerBusNumber, controllerType, diskMode, sharingMode and unitNumber of a "
              "volume are immutable", reason="FieldValueForbidden"),
        ]})


def vm_hardware():
    cdrom = O("A CD-ROM backed by an ISO image.", {
        "name": S("CD-ROM name.", pattern=r"^[a-z0-9]{2,}$"),
        "image": O("The ISO image.", {
            "kind": E("", ["VirtualMachineImage", "ClusterVirtualMachineImage"], default="VirtualMachineImage"),
            "name": S("Image name.")}, required=["name"]),
        "controllerBusNumber": I(minimum=0), "controllerType": E("", ["IDE", "SATA"]),
        "unitNumber": I(minimum=0),
        "connected": B("Connected.", default=True),
        "allowGuestControl": B("Guest may connect/disconnect.", default=True),
    }, required=["name", "image"])
    ctrl = lambda extra: O("", dict({"busNumber": I(minimum=0)}, **extra), required=["busNumber"])  # noqa: E731
    return O("Virtual hardware devices.", {
        "cdrom": A("CD-ROM devices.", cdrom, **{"x-kubernetes-list-type": "map",
                                                  "x-kubernetes-list-map-keys": ["name"]}),
        "ideControllers": A("IDE controllers.", ctrl({}), maxItems=2),
        "nvmeControllers": A("NVMe controllers.", ctrl({"sharingMode": E("", ["None", "Physical"])}), maxItems=4),
        "sataControllers": A("SATA controllers.", ctrl({}), maxItems=4),
        "scsiControllers": A("SCSI controllers.", ctrl({
            "sharingMode": E("", ["None", "Physical", "Virtual"]),
            "type": E("", ["ParaVirtual", "BusLogic", "LsiLogic", "LsiLogicSAS"])}), maxItems=4),
    })


def vm_schema():
    term = O("", {"labelSelector": FREE("A label selector."), "topologyKey": S()}, required=["topologyKey"])
    aff = O("", {"requiredDuringSchedulingPreferredDuringExecution": A("", term),
                 "preferredDuringSchedulingPreferredDuringExecution": A("", term)})
    spec = O("The desired state of a VirtualMachine.", {
        "image": O("The image to deploy, resolved from imageName. Immutable once set.", {
            "kind": E("Image kind.", ["VirtualMachineImage", "ClusterVirtualMachineImage"]),
            "name": S("Image object name."),
        }, required=["name"]),
        "imageName": S("A VirtualMachineImage/ClusterVirtualMachineImage name (vmi-...) or a unique display name. "
                       "Immutable."),
        "className": S("Name of a VirtualMachineClass in the namespace. A change resizes the VM while it is "
                       "powered off.", maxLength=253),
        "class": obj_ref("A VirtualMachineClassInstance (not used by vmop)."),
        "affinity": O("VM (anti-)affinity.", {"vmAffinity": aff, "vmAntiAffinity": aff}),
        "crypto": O("Encryption.", {
            "encryptionClassName": S(), "useDefaultKeyProvider": B(default=True),
            "vTPMMode": E("", ["Clone", "New"], default="New")}),
        "storageClass": S("StorageClass whose parameters.storagePolicyID names the vSphere storage policy. "
                          "Immutable.", maxLength=253),
        "bootstrap": vm_bootstrap(),
        "network": vm_network(),
        "powerState": E("Desired power state. Suspended is refused on create; PoweredOff to Suspended is "
                        "refused.", ["PoweredOn", "PoweredOff", "Suspended"], default="PoweredOn"),
        "powerOffMode": E("How to power off: Hard, Soft (guest shutdown), TrySoft (soft, then hard after 5 "
                          "minutes or an error).", POWER_MODES, default="TrySoft"),
        "suspendMode": E("How to suspend.", POWER_MODES, default="TrySoft"),
        "restartMode": E("How to restart.", POWER_MODES, default="TrySoft"),
        "nextRestartTime": S("Write `now` (any case) to restart the VM; it becomes a UTC timestamp.",
                             pattern=r"^([Nn][Oo][Ww]|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z)?$"),
        "volumes": vm_volumes(),
        "readinessProbe": O("How readiness is determined (one action at most).", {
            "tcpSocket": O("Deprecated TCP probe.", {"port": IOS("Port number or name."), "host": S()},
                           required=["port"]),
            "guestHeartbeat": O("VMware Tools heartbeat.", {
                "thresholdStatus": E("", ["green", "yellow"], default="green")}),
            "guestInfo": A("guestinfo keys; value is a regular expression, empty means present.",
                           O("", {"key": S(), "value": S()}, required=["key"])),
            "timeoutSeconds": I("", minimum=1, maximum=60, default=10),
            "periodSeconds": I("", minimum=1, default=10),
        }, rules=[R("!(has(self.tcpSocket) && has(self.guestHeartbeat)) && !(has(self.tcpSocket) && "
                    "has(self.guestInfo)) && !(has(self.guestHeartbeat) && has(self.guestInfo))",
                    "only one readiness probe action may be set")]),
        "advanced": O("Advanced options.", {
            "bootDiskCapacity": Q("Boot disk size; a whole number of MiB."),
            "defaultVolumeProvisioningMode": E("", ["Thin", "Thick", "ThickEagerZero"]),
            "changeBlockTracking": B("Changed block tracking."),
        }),
        "reserved": O("Reserved resources.", {
            "resourcePolicyName": S("A VirtualMachineSetResourcePolicy in the namespace. Immutable."),
        }),
        "minHardwareVersion": I("Lowest virtual hardware version; may not be lowered.", minimum=13),
        "instanceUUID": S("vSphere instance UUID; a random v4 UUID by default. Immutable once set.",
                          pattern=UUID_PATTERN),
        "biosUUID": S("BIOS UUID; a random v4 UUID by default. Immutable once set.", pattern=UUID_PATTERN),
        "guestID": S("vSphere guest OS identifier (e.g. ubuntu64Guest)."),
        "promoteDisksMode": E("Linked-clone disk promotion.", ["Disabled", "Online", "Offline"], default="Online"),
        "bootOptions": O("Boot options.", {
            "firmware": E("", ["bios", "efi"]),
            "bootDelay": S("A duration, e.g. 10s."),
            "bootOrder": A("", O("", {"type": E("", ["Disk", "Network", "CDRom"]), "name": S()},
                                 required=["type"])),
            "bootRetry": E("", ["Enabled", "Disabled"], default="Disabled"),
            "bootRetryDelay": S("A duration."),
            "efiSecureBoot": E("", ["Enabled", "Disabled"], default="Disabled"),
            "networkBootProtocol": E("", ["IP4", "IP6"], default="IP4"),
        }),
        "currentSnapshotName": S("A VirtualMachineSnapshot to revert to."),
        "groupName": S("VirtualMachineGroup membership."),
        "hardware": vm_hardware(),
        "policies": A("Compute policies.", obj_ref("A policy reference.")),
    }, rules=[
        immutable_once_set("imageName"),
        immutable_once_set("image"),
        immutable_once_set("storageClass"),
        immutable_once_set("biosUUID"),
        immutable_once_set("instanceUUID"),
        R("!has(oldSelf.reserved) || !has(oldSelf.reserved.resourcePolicyName) || (has(self.reserved) && "
          "has(self.reserved.resourcePolicyName) && self.reserved.resourcePolicyName == "
          "oldSelf.reserved.resourcePolicyName)", "field is immutable", field_path=".reserved.resourcePolicyName"),
        R("!has(oldSelf.className) || oldSelf.className == '' || (has(self.className) && self.className != '')",
          "className may change but not become empty", field_path=".className", reason="FieldValueRequired"),
        R("!has(oldSelf.powerState) || has(self.powerState)", "powerState may not be removed",
          field_path=".powerState", reason="FieldValueRequired"),
        R("!has(oldSelf.powerState) || !has(self.powerState) || "
          "!(oldSelf.powerState == 'PoweredOff' && self.powerState == 'Suspended')",
          "a powered off VM cannot be suspended", field_path=".powerState", reason="FieldValueForbidden"),
        # on spec, not on the list: the rule must also run when the whole list is removed
        R("!has(oldSelf.volumes) || oldSelf.volumes.all(o, !has(o.removable) || o.removable || "
          "(has(self.volumes) && self.volumes.exists(n, n.name == o.name)))",
          "a volume with removable: false cannot be removed", field_path=".volumes", reason="FieldValueForbidden"),
        R("!has(oldSelf.minHardwareVersion) || (has(self.minHardwareVersion) && "
          "self.minHardwareVersion >= oldSelf.minHardwareVersion)", "minHardwareVersion may not be lowered",
          field_path=".minHardwareVersion"),
        R("!has(self.image) || !has(self.imageName) || !self.imageName.startsWith('vmi-') || "
          "self.image.name == self.imageName", "image.name must agree with imageName", field_path=".image.name"),
    ])
    addr = O("", {"address": S(), "lifetime": S(), "origin": S(), "state": S()})
    ip_cfg = O("", {"dhcp": FREE(), "addresses": SL(""), "gateway4": S(), "gateway6": S()})
    dns = O("", {"hostName": S(), "domainName": S(), "nameservers": SL(""), "searchDomains": SL("")})
    status = O("The observed state of a VirtualMachine, written by the operator.", {
        "class": obj_ref("The class the VM was last sized from."),
        "nodeName": S("The ESXi host the VM runs on."),
        "powerState": E("Observed power state.", ["PoweredOn", "PoweredOff", "Suspended"]),
        "conditions": conditions(),
        "crypto": O("", {"encrypted": SL(""), "providerID": S(), "keyID": S(), "hasVTPM": B()}),
        "network": O("Observed networking.", {
            "config": O("The network configuration vmop applied.", {
                "interfaces": A("", O("", {"name": S(), "ip": ip_cfg, "dns": dns})),
                "dns": dns}),
            "hostName": S(),
            "interfaces": A("", O("", {
                "name": S(), "deviceKey": I(),
                "ip": O("", {"autoConfigurationEnabled": B(), "dhcp": FREE(), "addresses": A("", addr),
                             "macAddr": S()}),
                "dns": dns})),
            "ipStacks": A("", FREE()),
            "primaryIP4": S("The primary IPv4 address."),
            "primaryIP6": S("The primary IPv6 address."),
        }),
        "uniqueID": S("The vSphere managed object ID (vm-123)."),
        "biosUUID": S("Observed BIOS UUID."),
        "instanceUUID": S("Observed instance UUID."),
        "volumes": A("", O("", {
            "name": S(), "type": E("", ["Classic", "Managed"]), "controllerBusNumber": I(), "controllerType": S(),
            "unitNumber": I(), "diskMode": S(), "sharingMode": S(),
            "crypto": O("", {"providerID": S(), "keyID": S()}),
            "limit": Q(), "requested": Q(), "used": Q(), "attached": B(), "diskUUID": S(), "error": S(),
        }, required=["name", "type"]), **{"x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["name", "type"]}),
        "changeBlockTracking": B(),
        "zone": S("The zone the VM was placed in."),
        "lastRestartTime": S("When the VM was last restarted.", format="date-time"),
        "hardwareVersion": I("Observed virtual hardware version."),
        "storage": O("", {"total": Q(), "requested": O("", {"disks": Q()}),
                          "usage": O("", {"disks": Q(), "other": Q(),
                                          "snapshots": O("", {"vm": Q(), "volume": Q()})})}),
        "provider": O("", {"creationTimestamp": S(format="date-time")}),
        "currentSnapshot": O("", {"type": E("", ["Managed", "Unmanaged"]), "name": S()}),
        "rootSnapshots": A("", O("", {"type": S(), "name": S()})),
        "guest": O("", {"guestID": S(), "guestFullName": S()}),
        "hardware": FREE("Observed controllers, CPU, memory and vGPUs."),
        "policies": A("", FREE()),
    })
    return root_schema("VirtualMachine is a virtual machine on vSphere (VM Operator v1alpha5 compatible).",
                       spec, status)


# ---- classes, images, services, resource policies ---------------------------------------------
def cpu_mem(desc):
    return O(desc, {"cpu": Q("CPU (cores, e.g. 2000m)."), "memory": Q("Memory (e.g. 8Gi).")})


def le_rule(a, b, field, what):
    return R(f"!has(self.{a}) || !has(self.{b}) || !has(self.{a}.{field}) || !has(self.{b}.{field}) || "
             f"quantity(string(self.{a}.{field})).compareTo(quantity(string(self.{b}.{field}))) <= 0",
             f"{what} {field} must be less than or equal to the {b} {field}", field_path=f".{a}.{field}")


def class_schema():
    spec = O("A VirtualMachineClass: the hardware and reservation policy a VM gets.", {
        "controllerName": S("The controller that handles this class.", default="vmoperator.vmware.com/vsphere"),
        "hardware": O("Virtual hardware.", {
            "cpus": I("Number of virtual CPUs.", fmt="int64", minimum=1, maximum=768),
            "memory": Q("Memory, e.g. 8Gi."),
            "devices": O("Passthrough devices.", {
                "vgpuDevices": A("", O("", {"profileName": S()}, required=["profileName"]),
                                 **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["profileName"]}),
                "dynamicDirectPathIODevices": A("", O("", {"vendorID": I(fmt="int64"), "deviceID": I(fmt="int64"),
                                                           "customLabel": S()}, required=["vendorID", "deviceID"])),
            }),
            "instanceStorage": O("", {"storageClass": S(), "volumes": A("", O("", {"size": Q()},
                                                                                 required=["size"]))}),
        }),
        "policies": O("Reservations and limits.", {
            "resources": O("", {"requests": cpu_mem("Reservations."), "limits": cpu_mem("Limits.")},
                           rules=[le_rule("requests", "limits", "cpu", "the requested"),
                                  le_rule("requests", "limits", "memory", "the requested")]),
        }),
        "description": S("A description."),
        "configSpec": FREE("A vim VirtualMachineConfigSpec as JSON (with _typeName discriminators)."),
        "reservedProfileID": S(),
        "reservedSlots": I(minimum=0),
    }, rules=[R("!has(oldSelf.controllerName) || oldSelf.controllerName == '' || (has(self.controllerName) && "
                "self.controllerName != '')", "controllerName cannot be cleared", field_path=".controllerName")])
    status = O("Empty in v1alpha2 and later.", {"capabilities": SL(""), "conditions": conditions(),
                                               "ready": B()})
    return root_schema("VirtualMachineClass describes a class of VM hardware.", spec, status)


def image_schema(cluster):
    spec = O("Where the image comes from.", {
        "providerRef": obj_ref("The content library item behind this image."),
    })
    status = O("Image facts read from the library item.", {
        "name": S("Display name (the library item name)."),
        "type": S("Item type: OVF, ISO or VM."),
        "providerItemID": S("Library item UUID or vm-... MoID."),
        "providerContentVersion": S("Library item content version."),
        "firmware": S("bios or efi."),
        "hardwareVersion": I("Virtual hardware version."),
        "osInfo": O("", {"id": S(), "type": S("The guest ID, e.g. ubuntu64Guest."), "version": S()}),
        "productInfo": O("", {"product": S(), "vendor": S(), "version": S(), "fullVersion": S()}),
        "ovfProperties": A("", O("", {"key": S(), "type": S(), "default": S()}, required=["key", "type"])),
        "vmwareSystemProperties": A("", O("", {"key": S(), "value": S()}, required=["key"])),
        "disks": A("", O("", {"name": S(), "limit": Q(), "requested": Q(), "controllerType": S(),
                             "controllerBusNumber": I(), "unitNumber": I()})),
        "capabilities": SL("", **{"x-kubernetes-list-type": "set"}),
        "conditions": conditions(),
    })
    what = "ClusterVirtualMachineImage" if cluster else "VirtualMachineImage"
    return root_schema(f"{what} is a deployable image from a content library.", spec, status)


def image_columns(cluster):
    cols = [col("Display Name", ".status.name"), col("Type", ".status.type"),
            col("Image Version", ".status.productInfo.version"), col("OS Name", ".status.osInfo.type"),
            col("OS Version", ".status.osInfo.version"), col("Hardware Version", ".status.hardwareVersion", "string")]
    if not cluster:
        cols.append(col("Capabilities", ".status.capabilities", "string"))
    return cols


def service_schema():
    port = O("A port.", {
        "name": S("Port name."), "protocol": E("", ["TCP", "UDP", "SCTP"]),
        "port": I("Service port.", minimum=1, maximum=65535),
        "targetPort": I("Port on the VM.", minimum=1, maximum=65535),
    }, required=["name", "protocol", "port", "targetPort"])
    spec = O("A Service for VMs selected by labels.", {
        "type": E("Service type. Immutable.", ["ClusterIP", "LoadBalancer", "ExternalName"]),
        "ports": A("Ports.", port, maxItems=64),
        "selector": M("VM label selector."),
        "loadBalancerIP": S("Requested load balancer IP."),
        "loadBalancerSourceRanges": SL("Client CIDRs allowed (LoadBalancer only)."),
        "clusterIp": S("Cluster IP. Immutable once set."),
        "externalName": S("DNS name for ExternalName services."),
    }, required=["type"], rules=[
        R("self.type == oldSelf.type", "field is immutable", field_path=".type"),
        immutable_once_set("clusterIp"),
        R("!has(self.loadBalancerSourceRanges) || self.type == 'LoadBalancer'",
          "loadBalancerSourceRanges is only valid for LoadBalancer services", field_path=".loadBalancerSourceRanges",
          reason="FieldValueForbidden"),
        R("self.type != 'ExternalName' || (has(self.externalName) && self.externalName != '')",
          "externalName is required for ExternalName services", field_path=".externalName",
          reason="FieldValueRequired"),
        R("self.type == 'ExternalName' || (has(self.ports) && size(self.ports) > 0)", "ports are required",
          field_path=".ports", reason="FieldValueRequired"),
    ])
    status = O("", {"loadBalancer": O("", {"ingress": A("", O("", {"ip": S(), "hostname": S()}))}),
                    "conditions": conditions()})
    return root_schema("VirtualMachineService exposes VMs through a Service.", spec, status)


def respolicy_schema():
    spec = O("Resource pool, folder and cluster modules shared by a set of VMs. Immutable.", {
        "resourcePool": O("A child resource pool.", {
            "name": S("Resource pool name."),
            "reservations": cpu_mem("Reservations."),
            "limits": cpu_mem("Limits."),
        }, rules=[le_rule("reservations", "limits", "cpu", "the reserved"),
                  le_rule("reservations", "limits", "memory", "the reserved")]),
        "folder": S("A child VM folder name."),
        "clusterModuleGroups": SL("Cluster module (anti-affinity) group names."),
    }, rules=[R("self == oldSelf", "field is immutable", reason="FieldValueForbidden")])
    status = O("", {
        "resourcePools": A("", O("", {"clusterMoID": S(), "childResourcePoolMoID": S()})),
        "clustermodules": A("", O("", {"groupName": S(), "moduleUUID": S(), "clusterMoID": S()})),
        "conditions": conditions(),
    })
    return root_schema("VirtualMachineSetResourcePolicy groups VMs under one resource pool and folder.",
                       spec, status)


# ---- the admin API group (infra.vmop.io) --------------------------------------------------------
def endpoint_schema():
    spec = O("How to reach one vCenter.", {
        "server": S("The vCenter URL, e.g. https://vc.example.com (path /sdk is implied).",
                    pattern=r"^https?://[^/\s]+(/.*)?$", maxLength=2048),
        "tls": O("Server certificate verification: a CA bundle, a thumbprint, or (tests only) insecure.", {
            "caBundle": S("PEM CA certificates that sign the vCenter certificate."),
            "thumbprint": S("SHA-256 (or SHA-1) fingerprint of the vCenter certificate, hex with colons.",
                            pattern=r"^([0-9A-Fa-f]{2}:){19}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2}$"),
            "insecureSkipVerify": B("Do not verify the certificate (tests and labs only).", default=False),
        }, rules=[R("!(has(self.caBundle) && has(self.thumbprint))", "caBundle and thumbprint are mutually exclusive"),
                  R("!(has(self.insecureSkipVerify) && self.insecureSkipVerify && (has(self.caBundle) || "
                    "has(self.thumbprint)))", "insecureSkipVerify excludes caBundle and thumbprint")]),
        "credentialsSecretRef": O("A Secret in the operator's namespace with the vCenter user and password.", {
            "name": S("Secret name.", pattern=DNS1123_SUBDOMAIN, maxLength=253),
            "usernameKey": S("Key holding the user name.", default="username"),
            "passwordKey": S("Key holding the password.", default="password"),
        }, required=["name"]),
        "datacenter": S("Default datacenter (inventory path or name) for bindings that do not name one."),
        "clusterContentLibraries": A("Content libraries whose items become ClusterVirtualMachineImages.",
                                     O("", {"name": S("Library name."), "id": S("Library UUID.")},
                                       rules=[R("has(self.name) || has(self.id)", "name or id is required")])),
    }, required=["server", "credentialsSecretRef"])
    status = O("", {
        "conditions": conditions(),
        "instanceUUID": S("The vCenter instance UUID (about.instanceUuid)."),
        "version": S("The vCenter version."),
        "apiVersion": S("The vSphere API version."),
    })
    return root_schema("VCenterEndpoint declares a vCenter vmop may use (cluster-scoped, admin only).", spec, status)


def binding_schema():
    pool = O("Static IPv4 allocation: interfaces on the network without addresses or dhcp4 get an address "
             "from the ranges, kept in the VM annotation infra.vmop.io/ipv4.<interface>.", {
        "ranges": A("Address ranges (inclusive) inside the subnet; at most 65536 addresses in all.",
                    O("", {"start": S(), "end": S()}, required=["start", "end"]), maxItems=16),
        "prefix": I("Prefix length.", minimum=1, maximum=32),
        "gateway": S("Default gateway (never handed out)."),
        "nameservers": SL("DNS servers for the guest.", maxItems=8),
        "searchDomains": SL("DNS search domains for the guest.", maxItems=8),
    })
    net = O("A network tenants may reference by name.", {
        "name": S("The name tenants use in spec.network.interfaces[].network.name.", pattern=DNS1123_SUBDOMAIN,
                  maxLength=253),
        "portGroup": S("The vSphere network: inventory path or name of a (distributed) port group."),
        "ipv4Pool": pool,
    }, required=["name", "portGroup"])
    lib = O("A content library.", {"name": S("Library name."), "id": S("Library UUID.")},
            rules=[R("has(self.name) || has(self.id)", "name or id is required")])
    spec = O("What the namespace's VMs use in vCenter.", {
        "endpointRef": O("The VCenterEndpoint.", {"name": S()}, required=["name"]),
        "datacenter": S("Datacenter inventory path or name; defaults to the endpoint's."),
        "resourcePool": S("Resource pool (or cluster) inventory path for the namespace's VMs."),
        "vmFolder": S("VM folder inventory path for the namespace's VMs."),
        "datastore": S("Fallback datastore when a StorageClass has no storagePolicyID."),
        "contentLibraries": A("Libraries whose items become VirtualMachineImages in this namespace.", lib),
        "networks": A("Networks tenants may use.", net, maxItems=64,
                      **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
        "defaultNetwork": S("The network of the default eth0 interface."),
        "storageClasses": SL("StorageClasses the namespace may use (their parameters.storagePolicyID names the "
                             "vSphere policy).", **{"x-kubernetes-list-type": "set"}),
        "vmClasses": SL("VirtualMachineClasses offered (empty: every class in the namespace).",
                        **{"x-kubernetes-list-type": "set"}),
    }, required=["endpointRef", "resourcePool", "vmFolder"], rules=[
        R("!has(self.defaultNetwork) || (has(self.networks) && self.networks.exists(n, n.name == self.defaultNetwork))",
          "defaultNetwork must name one of networks", field_path=".defaultNetwork"),
    ])
    status = O("", {
        "conditions": conditions(),
        "resolved": O("Managed object IDs the names resolved to.", {
            "datacenter": S(), "resourcePool": S(), "vmFolder": S(),
            "networks": A("", O("", {"name": S(), "moID": S()})),
        }),
    })
    return root_schema("NamespaceBinding binds a namespace to a vCenter: where its VMs go and what they may use. "
                       "One per namespace; tenants may read it, only admins may change it.", spec, status)


def all_crds():
    ready = col("Ready", '.status.conditions[?(@.type=="Ready")].status')
    return {
        "vmoperator.vmware.com_virtualmachines.yaml": crd(
            VMOP_GROUP, None, "VirtualMachine", "virtualmachines", "Namespaced", ["vm"], vm_schema(),
            [col("Power-State", ".status.powerState"), col("Class", ".spec.className", priority=1),
             col("Image", ".spec.image.name", priority=1), col("Primary-IP4", ".status.network.primaryIP4", priority=1),
             AGE], categories=["vmoperator"]),
        "vmoperator.vmware.com_virtualmachineclasses.yaml": crd(
            VMOP_GROUP, None, "VirtualMachineClass", "virtualmachineclasses", "Namespaced", ["vmclass"],
            class_schema(), [col("CPU", ".spec.hardware.cpus", "integer"), col("Memory", ".spec.hardware.memory"),
                             col("Capabilities", ".status.capabilities", priority=1)], categories=["vmoperator"]),
        "vmoperator.vmware.com_virtualmachineimages.yaml": crd(
            VMOP_GROUP, None, "VirtualMachineImage", "virtualmachineimages", "Namespaced",
            ["vmi", "vmimage"], image_schema(False), image_columns(False), categories=["vmoperator"]),
        "vmoperator.vmware.com_clustervirtualmachineimages.yaml": crd(
            VMOP_GROUP, None, "ClusterVirtualMachineImage", "clustervirtualmachineimages", "Cluster",
            ["cvmi", "cvmimage", "clustervmi", "clustervmimage"], image_schema(True), image_columns(True),
            categories=["vmoperator"]),
        "vmoperator.vmware.com_virtualmachineservices.yaml": crd(
            VMOP_GROUP, None, "VirtualMachineService", "virtualmachineservices", "Namespaced",
            ["vmservice"], service_schema(), [col("Type", ".spec.type"), AGE], categories=["vmoperator"]),
        "vmoperator.vmware.com_virtualmachinesetresourcepolicies.yaml": crd(
            VMOP_GROUP, None, "VirtualMachineSetResourcePolicy", "virtualmachinesetresourcepolicies",
            "Namespaced", None, respolicy_schema(), None, categories=["vmoperator"]),
        "infra.vmop.io_vcenterendpoints.yaml": crd(
            INFRA_GROUP, INFRA_VERSION, "VCenterEndpoint", "vcenterendpoints", "Cluster", ["vcep"],
            endpoint_schema(), [col("Server", ".spec.server"), ready, col("Version", ".status.version", priority=1),
                                AGE], categories=["vmop-admin"]),
        "infra.vmop.io_namespacebindings.yaml": crd(
            INFRA_GROUP, INFRA_VERSION, "NamespaceBinding", "namespacebindings", "Namespaced", ["nsb"],
            binding_schema(), [col("Endpoint", ".spec.endpointRef.name"), col("Resource-Pool", ".spec.resourcePool"),
                               col("Default-Network", ".spec.defaultNetwork", priority=1), ready, AGE],
            categories=["vmop-admin"]),
    }


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):  # every version's schema written out in full, no YAML anchors
        return True


def _str_rep(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_rep)


def render(obj):
    head = "# GENERATED by manifests/crd/gen_crds.py: do not edit; edit the script and rerun it.\n"
    return head + yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120,
                            allow_unicode=True)


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for fname, obj in all_crds().items():
        path = os.path.join(HERE, fname)
        text = render(obj)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(fname)
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    if check and stale:
        print("out of date (run manifests/crd/gen_crds.py):", " ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

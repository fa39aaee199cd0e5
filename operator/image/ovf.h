/* ovf.h: pure OVF descriptor parsing (libxml2): the facts vmop's image catalog needs.
 *
 * Owns: reading one OVF envelope (the .ovf file of a Content Library item) into struct ovf_desc.
 * No I/O, no network, no entity expansion: a document with a DTD (<!DOCTYPE ...>) is refused, so
 * entity tricks (billion laughs, external entities) never reach the parser. Elements and
 * attributes are matched by namespace URI, not by prefix: OVF envelope 1.x and 2.x, rasd, vssd and
 * vmw (http://www.vmware.com/schema/ovf).
 *
 * What is read (the first VirtualSystem of the Envelope; a VirtualSystemCollection is refused):
 *   OperatingSystemSection   ovf:id -> os_id ("94"), vmw:osType -> os_type, ovf:version,
 * Description VirtualHardwareSection   vssd:VirtualSystemType "vmx-13" -> hw_version 13; vmw:Config
 *                            key="firmware" -> firmware ("efi"/"bios"); vmw:ExtraConfig
 *                            guestinfo.vmservice.defer-cloud-init=ready -> v1alpha1_compatible;
 *                            CPU (3), memory (4), NICs (10) and disks (17) with their controllers
 *   ProductSection           the first one's Product/Vendor/Version/FullVersion; every section's
 *                            properties: user-configurable ones into props[], "vmware-system*"
 *                            ones into sys_props[] (key + default)
 *   DiskSection              ovf:capacity x ovf:capacityAllocationUnits ("byte * 2^30") -> bytes,
 *                            ovf:populatedSize
 *   NetworkSection           network names (deploy network mappings use them)
 * This follows VM Operator's UpdateVmiWithOvfEnvelope. One deliberate difference: the default of a
 * property marked ovf:password="true" is not kept (images should not carry secrets in status).
 *
 * Errors: VMOP_E_INVALID with a message naming what is wrong (not XML, not an OVF envelope, a DTD,
 * a bad number, an unknown allocation unit); VMOP_E_TOOBIG over the caps below.
 * Thread-safe (libxml2 is initialised once; each call uses its own parser context).
 */
#ifndef VMOP_OVF_H
#define VMOP_OVF_H

#include <stddef.h>

#include "vmop_err.h"

#define OVF_MAX_BYTES      ((size_t)2 << 20) /* one descriptor */
#define OVF_MAX_PROPERTIES 512               /* properties over all ProductSections */
#define OVF_MAX_DISKS      64
#define OVF_MAX_NICS       64
#define OVF_MAX_NETWORKS   64
#define OVF_MAX_ITEMS      1024  /* VirtualHardwareSection items */
#define OVF_MAX_TEXT       16384 /* any one string kept */

struct ovf_property { /* a user-configurable ProductSection property */
    char *key;
    char *type;          /* "string", "boolean", "int", ...; never NULL ("string" when absent) */
    char *default_value; /* ovf:value, NULL when absent or a password */
};

struct ovf_kv { /* a vmware-system property: key and default value */
    char *key;
    char *value; /* NULL when the property has no ovf:value */
};

struct ovf_disk {
    char *disk_id;             /* ovf:diskId ("vmdisk1") */
    long long capacity_bytes;  /* ovf:capacity x units; -1 when absent */
    long long populated_bytes; /* ovf:populatedSize; -1 when absent */
    char *controller_type;     /* "SCSI", "IDE", "SATA", "NVME", or NULL when no Item uses it */
    int controller_bus;        /* the controller's rasd:Address, -1 unknown */
    int unit_number;           /* the disk Item's rasd:AddressOnParent, -1 unknown */
    char *element_name;        /* the disk Item's rasd:ElementName ("Hard Disk 1"), or NULL */
};

struct ovf_nic {
    char *network;      /* rasd:Connection: an OVF network name ("nic0"), or NULL */
    char *adapter_type; /* rasd:ResourceSubType ("VmxNet3", "E1000"), or NULL */
    char *element_name; /* rasd:ElementName, or NULL */
};

/* Every string is owned by the struct (free with ovf_desc_free); NULL means absent. */
struct ovf_desc {
    char *name;           /* VirtualSystem Name, else its ovf:id */
    char *os_id;          /* OperatingSystemSection ovf:id (CIM OS number as text) */
    char *os_type;        /* vmw:osType (guest id, "ubuntu64Guest") */
    char *os_version;     /* OperatingSystemSection ovf:version */
    char *os_description; /* OperatingSystemSection Description */
    int hw_version;       /* 13 for "vmx-13"; 0 unknown */
    char *firmware;       /* vmw:Config firmware value ("efi", "bios"), or NULL */
    int v1alpha1_compatible;
    char *product, *vendor, *version, *full_version; /* the first ProductSection */
    int num_cpus;                                    /* 0 unknown */
    long long memory_mb;                             /* 0 unknown */
    struct ovf_property *props;
    size_t n_props;
    struct ovf_kv *sys_props;
    size_t n_sys_props;
    struct ovf_disk *disks;
    size_t n_disks;
    struct ovf_nic *nics;
    size_t n_nics;
    char **networks; /* NetworkSection names */
    size_t n_networks;
};

/* Parses data[0..len) (need not be NUL-terminated). *ret_desc: new, free with ovf_desc_free(). */
vmop_rc ovf_parse(const char *data, size_t len, struct ovf_desc **ret_desc, struct vmop_err *err);
void ovf_desc_free(struct ovf_desc *d); /* NULL is fine */

/* "byte * 2^30" -> 1073741824; "byte" or NULL -> 1; "byte * 1024", "byte*10^3" also work.
 * VMOP_E_INVALID for anything else. */
vmop_rc ovf_alloc_units(const char *units, long long *ret_multiplier, struct vmop_err *err);

#endif

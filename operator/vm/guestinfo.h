/* guestinfo.h: the cloud-init bootstrap data vmop writes into a VM's guestinfo ExtraConfig keys.
 *
 * Pure code (no I/O): builds the metadata document read by cloud-init's VMware datasource
 * (instance-id, hostnames, public keys, netplan v2 network config), normalizes user data given
 * plain, base64 or gzip+base64, and encodes values as gzip+base64 for the keys
 *   guestinfo.metadata / guestinfo.metadata.encoding
 *   guestinfo.userdata / guestinfo.userdata.encoding
 * The metadata is written as JSON, which cloud-init loads (it tries JSON before YAML); VM Operator
 * writes YAML with the same keys. User data is never templated, logged or copied anywhere else.
 *
 * Ownership: every ret_* string is malloc'd and owned by the caller (free(); for user data use
 * gi_free_secret(), which zeroes it first).
 */
#ifndef VMOP_GUESTINFO_H
#define VMOP_GUESTINFO_H

#include <stddef.h>

#include "vmop_err.h"

/* Caps: user data as given (after decoding) and one encoded guestinfo value. */
#define GI_MAX_USERDATA      ((size_t)512 * 1024)
#define GI_MAX_ENCODED_VALUE ((size_t)1024 * 1024)

#define GI_KEY_METADATA          "guestinfo.metadata"
#define GI_KEY_METADATA_ENCODING "guestinfo.metadata.encoding"
#define GI_KEY_USERDATA          "guestinfo.userdata"
#define GI_KEY_USERDATA_ENCODING "guestinfo.userdata.encoding"
#define GI_ENCODING_GZIP_BASE64  "gzip+base64"

struct gi_route {
    const char *to; /* "default" or a CIDR */
    const char *via;
    int metric; /* 0 = unset */
};

struct gi_iface {
    const char *name;     /* spec interface name ("eth0"): the ethernets key */
    const char *mac;      /* as read from vCenter; written lower-case; NULL = no match */
    const char *set_name; /* guestDeviceName, or NULL to use name */
    int dhcp4;
    int dhcp6;
    const char *const *addresses; /* CIDR strings */
    size_t n_addresses;
    const char *gateway4; /* NULL, or "None" to suppress */
    const char *gateway6;
    long mtu; /* 0 = unset */
    const char *const *nameservers;
    size_t n_nameservers;
    const char *const *search;
    size_t n_search;
    const struct gi_route *routes;
    size_t n_routes;
};

struct gi_meta {
    const char *instance_id; /* required */
    const char *hostname;    /* host[.domain]; required */
    const char *const *public_keys;
    size_t n_public_keys;
    int wait_on_network4; /* -1 = unset, 0, 1 */
    int wait_on_network6;
    const struct gi_iface *ifaces;
    size_t n_ifaces;
};

/* The metadata document (JSON text). VMOP_E_INVALID with a message naming the field when a
 * required value is missing or malformed. */
vmop_rc gi_metadata_json(const struct gi_meta *m, char **ret_json, struct vmop_err *err);

/* gzip (RFC 1952) then base64 (no line breaks). */
vmop_rc gi_encode_gzip_base64(const void *data, size_t len, char **ret_value, struct vmop_err *err);

/* Decodes a guestinfo value given its encoding ("", NULL: plain; "base64"/"b64";
 * "gzip+base64"/"gz+b64"). ret_data is NUL-terminated (ret_len excludes the NUL). */
vmop_rc gi_decode(const char *value, const char *encoding, char **ret_data, size_t *ret_len,
                  struct vmop_err *err);

/* User data from a Secret value, which may be plain text, base64, or gzip+base64 (or raw gzip):
 * returns the plain text. Over GI_MAX_USERDATA: VMOP_E_TOOBIG. Invalid gzip: VMOP_E_INVALID. */
vmop_rc gi_userdata_normalize(const void *data, size_t len, char **ret_plain, size_t *ret_len,
                              struct vmop_err *err);

/* Zeroes and frees a string that held user data. */
void gi_free_secret(char *s, size_t len);

#endif

/* vmop_hash.h: the one non-cryptographic hash (64-bit FNV-1a) the modules use for hash tables,
 * change detection and signatures. Not collision-resistant: never for secrets or authorisation. A
 * collision costs a slower lookup, a missed change, or (change_feed.h vcfeed_vm_matches) a VM whose
 * ownership marks were rewritten in vCenter taken for the VM it was: only someone who can already
 * reconfigure that VM could aim for it.
 */
#ifndef VMOP_HASH_H
#define VMOP_HASH_H

#include <stddef.h>
#include <stdint.h>

#define VMOP_FNV_OFFSET 14695981039346656037ULL /* the start value (offset basis) */
#define VMOP_FNV_PRIME  1099511628211ULL

/* One byte more into h. */
static inline uint64_t vmop_fnv1a_byte(uint64_t h, unsigned char b)
{
    return (h ^ b) * VMOP_FNV_PRIME;
}

/* The bytes of NUL-terminated s (NULL: none) into h. */
static inline uint64_t vmop_fnv1a_str(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = vmop_fnv1a_byte(h, (unsigned char)*s);
    return h;
}

/* The 8 bytes of v, lowest first, into h. */
static inline uint64_t vmop_fnv1a_u64(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = vmop_fnv1a_byte(h, (unsigned char)(v & 0xff));
    return h;
}

#endif

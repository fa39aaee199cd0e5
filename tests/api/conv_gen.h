/* conv_gen.h: a seeded generator of random valid vmoperator.vmware.com objects of a given kind
 * and version (v1alpha1 .. v1alpha6), for the conversion property test. Owns nothing global: the
 * caller owns each returned tree (cJSON_Delete). */
#ifndef VMOP_TEST_CONV_GEN_H
#define VMOP_TEST_CONV_GEN_H

#include <cjson/cJSON.h>
#include <stdint.h>

struct conv_rng {
    uint64_t s;
};

/* kinds conv_gen() knows, in a fixed order */
extern const char *const conv_gen_kinds[6];

/* A random valid object of kind at version v (1..6); NULL only on NOMEM. */
cJSON *conv_gen(struct conv_rng *r, const char *kind, int v);

#endif

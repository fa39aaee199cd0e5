/* image_lookup.c: spec.imageName resolution over the informer caches (see image_lookup.h). */
#include "image_lookup.h"

#include <stdio.h>
#include <stdlib.h>

#include "api_image.h"
#include "kube_meta.h"

static const char *display_name(const cJSON *obj)
{
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "name");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The entries of objs (names borrowed from them); *ret_n of them. NULL when out of memory. */
static struct api_image_entry *entries_of(struct kube_obj **objs, size_t n, size_t *ret_n)
{
    struct api_image_entry *e = calloc(n + 1, sizeof(*e));
    size_t k = 0;
    if (!e)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const cJSON *j = kube_obj_json(objs[i]);
        if (!kube_obj_name(j))
            continue;
        e[k].name = kube_obj_name(j);
        e[k++].display_name = display_name(j);
    }
    *ret_n = k;
    return e;
}

vmop_rc image_lookup(struct kube_informer *images, struct kube_informer *cimages, const char *ns,
                     const char *image_name, char ret_kind[API_NAME_MAX],
                     char ret_name[API_NAME_MAX], struct vmop_err *err)
{
    struct kube_obj **nso = NULL, **clo = NULL;
    size_t n_ns = 0, n_cl = 0, k_ns = 0, k_cl = 0;
    struct api_image_entry *ens = NULL, *ecl = NULL;
    const struct api_image_entry *hit = NULL;
    int cluster = 0;
    vmop_rc rc;

    rc = kube_informer_by_index(images, "ns", ns, &nso, &n_ns, err);
    if (rc == VMOP_OK)
        rc = kube_informer_list(cimages, &clo, &n_cl, err);
    if (rc != VMOP_OK)
        goto out;
    ens = entries_of(nso, n_ns, &k_ns);
    ecl = entries_of(clo, n_cl, &k_cl);
    if (!ens || !ecl) {
        rc = vmop_fail(err, VMOP_E_NOMEM, "out of memory");
        goto out;
    }
    rc = api_image_resolve(ens, k_ns, ecl, k_cl, image_name, &hit, &cluster, err);
    if (rc == VMOP_OK) {
        snprintf(ret_kind, API_NAME_MAX, "%s", cluster ? API_KIND_CVMI : API_KIND_VMI);
        snprintf(ret_name, API_NAME_MAX, "%s", hit->name);
    }
out:
    free(ens);
    free(ecl);
    kube_objs_free(nso, n_ns);
    kube_objs_free(clo, n_cl);
    return rc;
}

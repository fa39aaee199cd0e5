/* kube_meta.h: NULL-safe getters for Kubernetes objects as cJSON (metadata and plain string
 * fields), public to the rest of the operator. No allocation; results are borrowed from obj.
 * Implemented in kube_util.c.
 */
#ifndef KUBE_META_H
#define KUBE_META_H

#include <cjson/cJSON.h>

const char *kube_json_str(const cJSON *obj, const char *field);                 /* string or NULL */
const char *kube_json_path_str(const cJSON *obj, const char *a, const char *b); /* obj.a.b */
/* metadata.namespace, metadata.name, metadata.resourceVersion, metadata.uid: borrowed or NULL */
const char *kube_obj_namespace(const cJSON *obj);
const char *kube_obj_name(const cJSON *obj);
const char *kube_obj_rv(const cJSON *obj);
const char *kube_obj_uid(const cJSON *obj);

#endif

/* vmop_rv.h: the one comparison of Kubernetes resourceVersions. They are opaque strings by
 * contract; on every etcd-backed API server they are decimal etcd revisions, which only grow
 * for one object. Pure, thread-safe. */
#ifndef VMOP_RV_H
#define VMOP_RV_H

/* Compares two resourceVersions: numerically when both are decimal (at most 19 digits), else 0
 * when equal and -2 when not (unordered). NULL equals only NULL. Returns -1, 0, 1 or -2. */
int vmop_rv_cmp(const char *a, const char *b);

#endif

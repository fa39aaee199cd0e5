/* metrics.h: the operator's Prometheus metrics registry and its standard families.
 *
 * Owns: counters, gauges and histograms with a fixed set of label names per family, the text
 * exposition (format 0.0.4), collectors (callbacks run at render time that pull numbers from other
 * modules, so kube_queue, vimclient, vcfeed and the prober need not know about metrics), the
 * standard vmop_* / process_* families and the /proc reader behind process_*.
 * Not here: the HTTP endpoint (health.c serves whatever metrics_render() writes).
 *
 * Families are registered once at start (before other threads update them). Series are created
 * on first use; each family holds at most max_series series: an update that would create one more
 * is dropped and counted in vmop_metrics_series_overflow_total, so label values that come from
 * tenants (namespaces, names) can never grow memory without bound.
 *
 * Output order is deterministic: families sorted by name, series sorted by label values.
 *
 * Threads: every function is thread-safe (one mutex per registry). Collectors run outside that
 * mutex, one render at a time, so a collector may update families of its registry.
 * Secrets never belong in label values or help texts: /metrics is readable by anyone who can reach
 * the port.
 */
#ifndef VMOP_METRICS_H
#define VMOP_METRICS_H

#include <stddef.h>

#include "vbuf.h"
#include "vmop_err.h"

#define METRICS_MAX_NAME        128  /* family and label names */
#define METRICS_MAX_HELP        512  /* help text */
#define METRICS_MAX_LABELS      8    /* label names per family */
#define METRICS_MAX_LABEL_VALUE 256  /* bytes in one label value; longer values are dropped */
#define METRICS_MAX_BUCKETS     32   /* histogram bounds */
#define METRICS_DEFAULT_SERIES  2000 /* series per family when opts.max_series is 0 */
#define METRICS_MAX_FAMILIES    256

/* Name of the counter the registry keeps for dropped series (always rendered). */
#define METRICS_OVERFLOW_NAME "vmop_metrics_series_overflow_total"

enum metrics_type { METRICS_COUNTER = 0, METRICS_GAUGE = 1, METRICS_HISTOGRAM = 2 };

/* Label values in calls: METRICS_L("vm", "success") (a NULL-terminated compound literal). */
#define METRICS_L(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Default histogram bounds in seconds: 0.005 .. 60 (13 bounds, +Inf is implicit). */
extern const double metrics_default_buckets[];
extern const size_t metrics_default_nbuckets;

struct metrics_opts {
    size_t max_series; /* per family; 0: METRICS_DEFAULT_SERIES */
};

struct metrics;
struct metrics_family; /* owned by its registry; valid until metrics_free() */

/* opts may be NULL. *ret_m owned: metrics_free(). */
vmop_rc metrics_new(const struct metrics_opts *opts, struct metrics **ret_m, struct vmop_err *err);
/* Frees the registry, its families and its collectors (calling no collector). NULL-safe. */
void metrics_free(struct metrics *m);

/* Registers a family. name: [a-zA-Z_:][a-zA-Z0-9_:]*; labels: NULL-terminated list (NULL = no
 * labels) of [a-zA-Z_][a-zA-Z0-9_]* names, not "__*" (nor "le" for histograms). Histograms take
 * strictly increasing finite bounds (buckets NULL: metrics_default_buckets); others pass NULL, 0.
 * A family without labels has its one series from the start (renders 0).
 * VMOP_E_EXISTS when the name is taken; VMOP_E_INVALID for a bad name, labels or bounds.
 * *ret_f is owned by m. */
vmop_rc metrics_register(struct metrics *m, enum metrics_type type, const char *name,
                         const char *help, const char *const *labels, const double *buckets,
                         size_t nbuckets, struct metrics_family **ret_f, struct vmop_err *err);

/* Updates. values: NULL-terminated label values, one per label name (NULL when the family has no
 * labels). They return VMOP_OK, VMOP_E_INVALID (wrong type, wrong number of values, a NaN,
 * a negative counter increment), VMOP_E_TOOBIG (a value over METRICS_MAX_LABEL_VALUE or the series
 * cap: counted as overflow) or VMOP_E_NOMEM; callers on hot paths may ignore the result, which is
 * why these take no struct vmop_err. f may be NULL (no-op, VMOP_OK) so optional metrics cost
 * callers no checks. */
/* counter (v >= 0) or gauge */
vmop_rc metrics_add(struct metrics_family *f, const char *const *values, double v);
/* gauge; also counter, for collectors mirroring another module's total */
vmop_rc metrics_set(struct metrics_family *f, const char *const *values, double v);
/* histogram */
vmop_rc metrics_observe(struct metrics_family *f, const char *const *values, double v);
/* Deletes one series (an endpoint or queue that went away). VMOP_E_NOT_FOUND when absent,
 * VMOP_E_INVALID for a family without labels (its one series always exists). */
vmop_rc metrics_remove(struct metrics_family *f, const char *const *values);

/* Reads one series (tests, readiness logic): counter/gauge value, or histogram sample count and
 * sum (ret_sum may be NULL). VMOP_E_NOT_FOUND when the series does not exist yet. */
vmop_rc metrics_get(struct metrics_family *f, const char *const *values, double *ret_value,
                    double *ret_sum, struct vmop_err *err);
/* The overflow counter: updates dropped by the series cap or an over-long label value. */
unsigned long long metrics_overflow(struct metrics *m);

/* A collector: called by metrics_render() before the text is written, outside the registry lock.
 * It updates families of m (usually metrics_set()). */
typedef void (*metrics_collect_fn)(void *ud, struct metrics *m);

/* Adds a collector. key identifies it for metrics_remove_collectors() (often the observed object;
 * NULL: ud). ud_free (may be NULL) is called on ud when the collector is removed or m is freed.
 * Collectors run in the order they were added. */
vmop_rc metrics_add_collector(struct metrics *m, metrics_collect_fn fn, void *ud,
                              void (*ud_free)(void *), const void *key, struct vmop_err *err);
/* Removes every collector added with key; on return none of them is running or will run again,
 * so the observed object may be freed. */
void metrics_remove_collectors(struct metrics *m, const void *key);

/* Runs the collectors, then appends the text exposition of every family to out. Errors: out's
 * own (VMOP_E_TOOBIG / VMOP_E_NOMEM), reported through err. */
vmop_rc metrics_render(struct metrics *m, struct vbuf *out, struct vmop_err *err);

/* A number a module keeps itself (an atomic total, a queue length) as an unlabelled family of
 * the registry: one definition each, read at render time by one collector. */
struct metrics_plain {
    const char *name; /* a counter when it ends in "_total", else a gauge */
    const char *help;
    double (*read)(void *ud);
};
/* Registers the families defs[0..n) (defs must outlive m) and one collector that sets them from
 * read(ud) before each render, with key (NULL: ud) for metrics_remove_collectors(). VMOP_E_EXISTS
 * when a name is taken. */
vmop_rc metrics_add_plain(struct metrics *m, const struct metrics_plain *defs, size_t n, void *ud,
                          const void *key, struct vmop_err *err);

/* Text format helpers (exposed for tests): a value as Prometheus writes it (shortest text that
 * reads back exactly; "+Inf", "-Inf", "NaN"), and a label value escaped (\\, \", \n). */
vmop_rc metrics_add_value(struct vbuf *out, double v);
vmop_rc metrics_add_escaped(struct vbuf *out, const char *s);

/* ---- standard families -------------------------------------------------------------------------
 */

/* Results for vmop_reconcile_total{result}. */
#define METRICS_RESULT_SUCCESS "success"
#define METRICS_RESULT_ERROR   "error"
#define METRICS_RESULT_REQUEUE "requeue"

struct metrics_std {
    struct metrics *m;
    struct metrics_family *reconcile_total;    /* counter {controller,result} */
    struct metrics_family *reconcile_errors;   /* counter {controller} */
    struct metrics_family *reconcile_duration; /* histogram {controller}, seconds */
    struct metrics_family *wq_depth;           /* gauge {name}: keys ready now */
    struct metrics_family *wq_delayed;         /* gauge {name}: keys waiting for a delay */
    struct metrics_family *wq_adds;            /* counter {name} */
    struct metrics_family *wq_queue_duration;  /* histogram {name}: add -> taken by a worker */
    struct metrics_family *vc_calls;           /* counter {endpoint,method} */
    struct metrics_family *vc_call_errors;     /* counter {endpoint,method} */
    struct metrics_family *vc_call_seconds;    /* counter {endpoint,method}: time spent */
    struct metrics_family *vc_rest_calls;      /* counter {endpoint} */
    struct metrics_family *vc_relogins;        /* counter {endpoint} */
    struct metrics_family *vc_feed_updates;    /* counter {endpoint} */
    struct metrics_family *vc_feed_watches;    /* gauge {endpoint}: live WaitForUpdates watches */
    struct metrics_family *watch_restarts;     /* counter {source} */
    struct metrics_family *probe_keys;         /* gauge {}: registered readiness probes */
    struct metrics_family *probe_in_flight;    /* gauge {}: connects in flight */
    struct metrics_family *leader;             /* gauge {}: 1 while this replica leads */
    struct metrics_family *proc_rss;           /* process_resident_memory_bytes */
    struct metrics_family *proc_cpu;           /* process_cpu_seconds_total */
    struct metrics_family *proc_start;         /* process_start_time_seconds */
    struct metrics_family *proc_fds;           /* process_open_fds */
};

/* Registers the standard families in m and the /proc collector for process_*. ret_std keeps
 * pointers into m (valid until metrics_free(m)). */
vmop_rc metrics_std_register(struct metrics *m, struct metrics_std *ret_std, struct vmop_err *err);

/* One finished reconcile: result is METRICS_RESULT_*; an error also counts in reconcile_errors.
 * std may be NULL (no-op). */
void metrics_std_reconcile(struct metrics_std *std, const char *controller, const char *result,
                           double seconds);
/* The work queue hooks the queue itself cannot call (kube_queue has no metrics): a key added, and
 * the time a key waited between its add and a worker taking it. */
void metrics_std_queue_add(struct metrics_std *std, const char *name);
void metrics_std_queue_wait(struct metrics_std *std, const char *name, double seconds);
/* source: "kube:<resource>" or "vcenter:<endpoint>" by convention. */
void metrics_std_watch_restart(struct metrics_std *std, const char *source);
void metrics_std_set_leader(struct metrics_std *std, int leading);

/* Process numbers from /proc/self (exposed for tests). */
struct metrics_proc {
    double rss_bytes, cpu_seconds, start_time_seconds, open_fds;
};
vmop_rc metrics_read_proc(struct metrics_proc *ret_proc, struct vmop_err *err);

/* Collectors over other modules (declared with forward types so this header pulls in nothing).
 * Each is removed by metrics_remove_collectors(std->m, obj) before obj is freed. name/endpoint are
 * copied. */
struct kube_queue;
struct vim_client;
struct vcfeed;
struct prober;
/* vmop_workqueue_depth / _delayed {name} from kube_queue_len / kube_queue_delayed_len. */
vmop_rc metrics_collect_queue(struct metrics_std *std, const char *name, struct kube_queue *q,
                              struct vmop_err *err);
/* vmop_vcenter_calls_total / _errors / _seconds {endpoint,method} from vim_client_method_stats,
 * rest calls and relogins from vim_client_stats. */
vmop_rc metrics_collect_vim(struct metrics_std *std, const char *endpoint, struct vim_client *c,
                            struct vmop_err *err);
/* vmop_vcenter_feed_updates_total, _watches {endpoint}; vcfeed restarts into
 * vmop_watch_restarts_total{source="vcenter:<endpoint>"}. */
vmop_rc metrics_collect_vcfeed(struct metrics_std *std, const char *endpoint, struct vcfeed *f,
                               struct vmop_err *err);
/* vmop_probe_keys, vmop_probe_in_flight. */
vmop_rc metrics_collect_prober(struct metrics_std *std, struct prober *p, struct vmop_err *err);

#endif

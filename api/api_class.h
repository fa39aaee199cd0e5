/* api_class.h: VirtualMachineClass model: parse, validate, and the CPU/memory sizing VM Operator
 * derives from a class (vm-operator.md section 5).
 *
 * Sizing rules: numCPUs = hardware.cpus; memoryMB = ceil(bytes / MiB); a CPU reservation or limit
 * in MHz = ceil(milliCPU * minHostMHz / 1000) (-1 = unlimited when no limit); memory
 * reservation/limit in MB = ceil(bytes / MiB). Best effort = no policies (reservation 0, limit -1).
 * The class's configSpec (VM Operator merges the class ConfigSpec under these): its numCPUs and
 * memoryMB stand in for an absent spec.hardware.cpus / memory, its cpuAllocation /
 * memoryAllocation reservation and limit (MHz, MB) for absent policies; spec wins.
 * The struct owns a private copy of the JSON; string pointers are borrowed from it.
 */
#ifndef VMOP_API_CLASS_H
#define VMOP_API_CLASS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "api_ferr.h"
#include "api_quantity.h"
#include "vmop_err.h"

struct api_class {
    cJSON *obj; /* owned */
    const char *name, *namespace_, *controller_name, *description;
    long long cpus; /* 0 when absent */
    struct api_qty memory;
    int has_memory;
    struct api_qty req_cpu, req_mem, lim_cpu, lim_mem;
    int has_req_cpu, has_req_mem, has_lim_cpu, has_lim_mem;
    const cJSON *config_spec;    /* borrowed, or NULL */
    struct api_ferrs parse_errs; /* wrong types and unparsable quantities */
};

vmop_rc api_class_parse(const cJSON *json, struct api_class **ret_class, struct vmop_err *err);
void api_class_free(struct api_class *c);
/* cpus >= 1, memory > 0 (or configSpec numCPUs / memoryMB), requests <= limits (cpu, memory),
 * quantities not negative. */
void api_class_validate(const struct api_class *c, struct api_ferrs *fe);

struct api_class_sizing {
    int64_t num_cpus, memory_mb;
    int64_t cpu_reservation_mhz, cpu_limit_mhz; /* limit -1 = unlimited */
    int64_t mem_reservation_mb, mem_limit_mb;   /* limit -1 = unlimited */
};
/* min_host_mhz: the slowest host CPU in MHz (> 0). */
vmop_rc api_class_sizing(const struct api_class *c, int64_t min_host_mhz,
                         struct api_class_sizing *ret, struct vmop_err *err);

/* VM Operator's record of which class version sized a VM: annotation API_ANNOT_LAST_RESIZED on
 * the VirtualMachine, value {"name":...,"uid":...,"generation":N} of the class object cls (its
 * JSON, named name), written into val (truncated to size). */
#define API_ANNOT_LAST_RESIZED "vmoperator.vmware.com/last-resized-vm-class"
void api_class_resized_value(const cJSON *cls, const char *name, char *val, size_t size);

#endif

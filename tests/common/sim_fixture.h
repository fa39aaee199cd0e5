/* sim_fixture.h: the one vCenter simulator fixture every simulator test (vimclient, operator)
 * uses.
 *
 * Owns: a simulator's lifetime around a Check TCase (simfx_tcase: started by the TCase's unchecked
 * setup in the runner process, before the tests fork, and stopped by its teardown), a simulator
 * started inside a test (simfx_start), vimclient clients for a simulator with per-test overrides,
 * and the lookups and waits the tests kept writing again: find by inventory path, a seeded library
 * item, a VM's properties, a power operation, a clone next to a generated VM, VMs by instance UUID,
 * a guest IP from the launcher's guest player. Every helper fails the running test (ck_assert) when
 * the simulator does not answer as asked, so the callers only assert what they test.
 *
 * Not here: the launcher process itself (tests/vcsim/vcsim_harness.h), anything an operator module
 * needs (each operator test builds its own desired state), raw SOAP (vimclient core's tests).
 * Only for use in Check tests; the simulator pointers are set before tests run and read-only then.
 * meson: sim_fixture_dep (declared in tests/vcsim/meson.build, after the harness it needs).
 */
#ifndef VMOP_TEST_SIM_FIXTURE_H
#define VMOP_TEST_SIM_FIXTURE_H

#include <check.h>
#include <stddef.h>

#include "vcsim_harness.h"
#include "vimclient.h"

/* Fails the test unless call returns VMOP_OK, naming the call and err.msg (err: a struct vmop_err).
 */
#define CK_OK(call, err) ck_assert_msg((call) == VMOP_OK, "%s: %s", #call, (err).msg)

/* The call timeout simfx clients get unless they ask for another. */
#define SIMFX_TIMEOUT_MS 30000

/* The simulator of the running TCase (the one simfx_tcase() started), NULL outside one. */
extern struct vcsim *simfx_sim;

/* Creates a TCase called name in s with the given timeout (seconds; 0 keeps Check's default) whose
 * unchecked fixture starts a simulator with *opts (NULL: the launcher defaults) into simfx_sim and
 * stops it after the TCase's last test. *opts is copied; the strings and arrays it points to must
 * outlive the run (literals, statics). A simulator that does not start ends the process with a
 * message (vcsim_start_or_exit). At most 8 such TCases per process. */
TCase *simfx_tcase(Suite *s, const char *name, const struct vcsim_opts *opts, int timeout_s);

/* Inside a test: starts a simulator of its own (release with vcsim_stop()); fails the test when it
 * does not start. */
struct vcsim *simfx_start(const struct vcsim_opts *opts);

/* A new client (vim_client_free() it) for sim: cfg (NULL: all defaults) with its url, username and
 * password taken from sim when NULL and timeout_ms SIMFX_TIMEOUT_MS when 0; everything else
 * (thumbprint, insecure, connect_timeout_ms, max_connections, the fault hook) as cfg says. */
struct vim_client *simfx_client_of(const struct vcsim *sim, const struct vim_config *cfg);

/* simfx_client_of(simfx_sim, cfg). */
struct vim_client *simfx_client(const struct vim_config *cfg);

/* vim_find_by_path(path, type) (type NULL: any), which must succeed. */
struct vim_moref simfx_find(struct vim_client *c, const char *path, const char *type);

/* The seeded library item called name (vcsim_find_item), which must exist. Borrowed from sim;
 * *ret_lib (if not NULL) gets its library. */
const struct vcsim_item *simfx_item(const struct vcsim *sim, const char *name,
                                    const struct vcsim_library **ret_lib);

/* vim_vm_get(ref), which must succeed (vim_vm_free() the result). */
struct vim_vm *simfx_vm_get(struct vim_client *c, const struct vim_moref *ref);

/* vim_vm_power(ref, op), which must succeed. */
void simfx_power(struct vim_client *c, const struct vim_moref *ref, enum vim_power_op op);

/* Clones the VM at inventory path src_path with cs, whose source is set here and whose folder, pool
 * and datastore default to sim's; the clone must succeed. Returns the new VM. (The simulator leaves
 * clones powered off whatever cs.power_on says.) */
struct vim_moref simfx_clone(struct vim_client *c, const struct vcsim *sim, const char *src_path,
                             struct vim_clone_spec cs);

/* How many VMs have the instance UUID uuid (any case; the simulator does not keep it unique).
 * Every VM listed must be readable. */
size_t simfx_count_by_uuid(struct vim_client *c, const char *uuid);

/* Polls (bounded by timeout_ms) until the guest player published an IP for ref; fails the test when
 * none came. Returns the VM as read then, guest_ip set (vim_vm_free() it). */
struct vim_vm *simfx_wait_guest_ip(struct vim_client *c, const struct vim_moref *ref,
                                   long timeout_ms);

#endif

/* proc.h: child processes for test harnesses (the simulator launcher, the fault proxy).
 *
 * Owns: fork/exec with a clean signal state and a parent-death signal, the stdout pipe, the bounded
 * wait for a child's first line, bounded reaping, and SIGTERM-then-SIGKILL stops. Not here: what a
 * harness passes as arguments or how it parses the line.
 *
 * Threads: spawn and stop from a thread that outlives the child (PR_SET_PDEATHSIG fires when the
 * forking thread exits). `name` arguments only label error messages.
 */
#ifndef VMOP_TEST_PROC_H
#define VMOP_TEST_PROC_H

#include <sys/types.h>

#include "vbuf.h"
#include "vmop_err.h"

/* Starts path with argv (NULL-terminated, argv[0] included): stdin is /dev/null, stdout a pipe
 * whose read end goes to *ret_stdout_fd (O_CLOEXEC; close() it), stderr is appended to stderr_path
 * (created 0600) or, when NULL, inherited. The child gets SIGTERM when the calling thread dies and
 * starts with default signal handlers and an empty signal mask. *ret_pid: stop it with
 * vmop_proc_stop() or vmop_proc_kill(). On failure no process remains and no fd is left open. */
vmop_rc vmop_proc_spawn(const char *path, char *const argv[], const char *stderr_path,
                        pid_t *ret_pid, int *ret_stdout_fd, struct vmop_err *err);

/* Reads fd into line until a read contains a newline (line may hold more after it), EOF, or
 * timeout_ms. At EOF the child is given 2 s to exit; *reaped becomes 1 when it was waited for
 * (its pid must not be signalled any more) and is left alone otherwise. line's cap bounds the size:
 * over it, line's error (VMOP_E_TOOBIG) is returned. */
vmop_rc vmop_proc_read_line(int fd, pid_t pid, const char *name, unsigned timeout_ms,
                            struct vbuf *line, int *reaped, struct vmop_err *err);

/* Waits up to timeout_ms (0: just checks) for pid to exit. Returns 1 when reaped (or not our child
 * any more: ECHILD), 0 when still running. *ret_status (if not NULL) gets the wait status. */
int vmop_proc_reap(pid_t pid, int timeout_ms, int *ret_status);

/* SIGKILL and reap (blocking). */
void vmop_proc_kill(pid_t pid);

/* SIGTERM, waits up to timeout_ms, then SIGKILL; reaps pid either way. Returns VMOP_E_TIMEOUT when
 * SIGKILL was needed. */
vmop_rc vmop_proc_stop(pid_t pid, const char *name, int timeout_ms, struct vmop_err *err);

#endif

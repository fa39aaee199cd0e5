/* proc.c: spawning, line reading and stopping of harness child processes (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

int vmop_proc_reap(pid_t pid, int timeout_ms, int *ret_status)
{
    long long deadline = vmop_test_now_ms() + timeout_ms;

    for (;;) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (ret_status)
                *ret_status = st;
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return 1; /* not our child any more (ECHILD): nothing left to wait for */
        if (vmop_test_now_ms() >= deadline)
            return 0;
        poll(NULL, 0, 10);
    }
}

void vmop_proc_kill(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

vmop_rc vmop_proc_stop(pid_t pid, const char *name, int timeout_ms, struct vmop_err *err)
{
    kill(pid, SIGTERM);
    if (vmop_proc_reap(pid, timeout_ms, NULL))
        return VMOP_OK;
    vmop_proc_kill(pid);
    return vmop_fail(err, VMOP_E_TIMEOUT, "%s (pid %d) ignored SIGTERM for %d ms; killed", name,
                     (int)pid, timeout_ms);
}

static void describe_status(char *buf, size_t n, int st)
{
    if (WIFEXITED(st))
        snprintf(buf, n, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, n, "signal %d", WTERMSIG(st));
    else
        snprintf(buf, n, "status 0x%x", (unsigned)st);
}

vmop_rc vmop_proc_read_line(int fd, pid_t pid, const char *name, unsigned timeout_ms,
                            struct vbuf *line, int *reaped, struct vmop_err *err)
{
    long long deadline = vmop_test_now_ms() + timeout_ms;
    char buf[4096];

    for (;;) {
        long long left = deadline - vmop_test_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r;
        ssize_t n;

        if (left <= 0)
            return vmop_fail(err, VMOP_E_TIMEOUT, "%s (pid %d) printed no ready line within %u ms",
                             name, (int)pid, timeout_ms);
        r = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "poll on the %s pipe: %s", name,
                             strerror(errno));
        if (r == 0)
            continue;
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return vmop_fail(err, VMOP_E_INTERNAL, "read from the %s pipe: %s", name,
                             strerror(errno));
        if (n == 0) {
            int st = 0;
            char how[64] = "still running";
            if (vmop_proc_reap(pid, 2000, &st)) {
                *reaped = 1;
                describe_status(how, sizeof(how), st);
            }
            return vmop_fail(err, VMOP_E_TRANSPORT,
                             "%s (pid %d) closed stdout before its ready line (%s); see its stderr",
                             name, (int)pid, how);
        }
        vbuf_add(line, buf, (size_t)n);
        if (vbuf_error(line))
            return vmop_fail(err, vbuf_error(line), "%s ready line over %zu bytes", name,
                             line->max);
        if (memchr(buf, '\n', (size_t)n))
            return VMOP_OK;
    }
}

vmop_rc vmop_proc_spawn(const char *path, char *const argv[], const char *stderr_path,
                        pid_t *ret_pid, int *ret_stdout_fd, struct vmop_err *err)
{
    int pfd[2] = {-1, -1}, errfd = -1, nullfd = -1;
    pid_t parent = getpid(), pid;
    vmop_rc rc = VMOP_OK;

    if (pipe2(pfd, O_CLOEXEC) != 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "pipe2: %s", strerror(errno));
        goto out;
    }
    nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nullfd < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "open /dev/null: %s", strerror(errno));
        goto out;
    }
    if (stderr_path) {
        errfd = open(stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (errfd < 0) {
            rc = vmop_fail(err, VMOP_E_INVALID, "open '%s': %s", stderr_path, strerror(errno));
            goto out;
        }
    }
    pid = fork();
    if (pid < 0) {
        rc = vmop_fail(err, VMOP_E_INTERNAL, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) {
        /* Child: async-signal-safe calls only. */
        sigset_t none;
        struct sigaction dfl;

        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGPIPE, &dfl, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
            _exit(126);
        if (dup2(pfd[1], STDOUT_FILENO) < 0 || dup2(nullfd, STDIN_FILENO) < 0)
            _exit(126);
        if (errfd >= 0 && dup2(errfd, STDERR_FILENO) < 0)
            _exit(126);
        execv(path, argv);
        _exit(127);
    }
    *ret_pid = pid;
    *ret_stdout_fd = pfd[0];
    pfd[0] = -1;
out:
    if (pfd[0] >= 0)
        close(pfd[0]);
    if (pfd[1] >= 0)
        close(pfd[1]);
    if (errfd >= 0)
        close(errfd);
    if (nullfd >= 0)
        close(nullfd);
    return rc;
}

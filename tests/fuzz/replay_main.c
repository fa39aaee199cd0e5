/* replay_main.c: runs a fuzz target over files or directories of inputs (a plain main() for
 * builds without libFuzzer). Used as a unit test over each target's corpus; exits non-zero when an
 * input cannot be read or the corpus is empty (a crash in the target ends the process anyway).
 * Each input (and each prefix of it) is passed in a heap buffer of exactly its size, as libFuzzer
 * does, so that under ASan a read past the end of the input is caught. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT ((size_t)4 << 20)

/* Runs the target on a copy of data[0..n) in an allocation of exactly n bytes. */
static void run_exact(const uint8_t *data, size_t n)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy)
        abort();
    memcpy(copy, data, n);
    LLVMFuzzerTestOneInput(copy, n);
    free(copy);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t n;
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    buf = malloc(REPLAY_MAX_INPUT);
    if (!buf) {
        fclose(f);
        return -1;
    }
    n = fread(buf, 1, REPLAY_MAX_INPUT, f);
    fclose(f);
    run_exact(buf, n);
    /* Every prefix of the input too: truncated replies are the common real-world corruption. */
    for (size_t cut = 1; cut < n; cut += 1 + n / 64)
        run_exact(buf, cut);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "no such input: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *de;
        if (!d)
            return 1;
        while ((de = readdir(d))) {
            char path[4096];
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            if (run_file(path) != 0) {
                closedir(d);
                return 1;
            }
            runs++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", runs);
    return runs > 0 ? 0 : 1;
}

/* Output files written safely (arsim/out.h). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "arsim/out.h"

static int fail(ar_out_t *o, ar_error_t *err, const char *what, int e) {
    return AR_ERR(err, AR_EIO, "%s: %s: %s", o->label, what, strerror(e));
}

/* The file a path names for writing: itself, or a symlink's target (the link stays). */
static void resolve(const char *path, char *out, size_t len) {
    struct stat st;
    snprintf(out, len, "%s", path);
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return;
    char buf[PATH_MAX];
    if (realpath(path, buf)) { /* the target exists */
        snprintf(out, len, "%s", buf);
        return;
    }
    /* a dangling link: its target, relative to the link's directory */
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) return;
    target[n] = 0;
    if (target[0] == '/') {
        snprintf(out, len, "%s", target);
    } else {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        snprintf(out, len, "%.2047s/%.2047s", dirname(dir), target);
    }
}

int ar_out_open(ar_out_t *o, const char *label, const char *path, ar_error_t *err) {
    memset(o, 0, sizeof *o);
    snprintf(o->label, sizeof o->label, "%s", label);
    if (!strcmp(path, "-")) {
        o->f = stdout;
        snprintf(o->path, sizeof o->path, "-");
        return AR_OK;
    }
    resolve(path, o->path, sizeof o->path);
    struct stat st;
    const int exists = stat(o->path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) return AR_ERR(err, AR_EIO, "%s: a directory, not a file", o->label);
    if (exists && !S_ISREG(st.st_mode)) { /* a device, FIFO or socket: in place, never replaced */
        if (!(o->f = fopen(o->path, "w"))) return fail(o, err, "cannot write", errno);
        return AR_OK;
    }
    char dir[PATH_MAX], base[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", o->path);
    snprintf(base, sizeof base, "%s", o->path);
    snprintf(o->tmp, sizeof o->tmp, "%s/.%s.arsim-XXXXXX", dirname(dir), basename(base));
    const int fd = mkstemp(o->tmp);
    if (fd < 0) {
        o->tmp[0] = 0;
        return fail(o, err, "cannot write in its directory", errno);
    }
    mode_t mode;
    if (exists) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        const int e = errno;
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = 0;
        return fail(o, err, "cannot write", e);
    }
    return AR_OK;
}

int ar_out_flush(ar_out_t *o, ar_error_t *err) {
    if (o->failed) return fail(o, err, "write failed", o->failed);
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) {
        o->failed = errno ? errno : EIO;
        return fail(o, err, "write failed", o->failed);
    }
    o->whole = ftell(o->f);
    return AR_OK;
}

int ar_out_close(ar_out_t *o, ar_error_t *err) {
    if (!o->f) return AR_OK;
    if (o->failed) { /* keep the rows that were whole */
        if (o->tmp[0] && o->whole >= 0) {
            /* closing the stream writes what its buffer holds: cut the file after it */
            const int fd = dup(fileno(o->f));
            fclose(o->f);
            o->f = NULL;
            if (fd >= 0 && ftruncate(fd, o->whole) == 0 && rename(o->tmp, o->path) == 0) o->tmp[0] = 0;
            if (fd >= 0) close(fd);
        }
        const int e = o->failed;
        ar_out_abort(o);
        return fail(o, err, "write failed", e);
    }
    int rc = ar_out_flush(o, err);
    if (o->f == stdout) {
        o->f = NULL;
        return rc;
    }
    if (rc == AR_OK && o->tmp[0] && fsync(fileno(o->f)) != 0 && errno != EINVAL)
        rc = fail(o, err, "write failed", errno);
    errno = 0;
    if (fclose(o->f) != 0 && rc == AR_OK) rc = fail(o, err, "write failed", errno ? errno : EIO);
    o->f = NULL;
    if (o->tmp[0]) {
        if (rc == AR_OK && rename(o->tmp, o->path) != 0) rc = fail(o, err, "cannot put in place", errno);
        if (rc != AR_OK) unlink(o->tmp);
        o->tmp[0] = 0;
    }
    return rc;
}

void ar_out_abort(ar_out_t *o) {
    if (o->f && o->f != stdout) fclose(o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
    o->tmp[0] = 0;
}

/* A path's canonical form: its own when it exists, else its directory's and its name. */
static int canonical(const char *path, char *out, size_t len) {
    char buf[PATH_MAX], dir[PATH_MAX], base[PATH_MAX];
    resolve(path, buf, sizeof buf);
    if (realpath(buf, out)) return 0;
    snprintf(dir, sizeof dir, "%s", buf);
    snprintf(base, sizeof base, "%s", buf);
    char d[PATH_MAX];
    if (!realpath(dirname(dir), d)) return -1;
    snprintf(out, len, "%.2047s/%.2047s", d, basename(base));
    return 0;
}

int ar_out_same(const char *a, const char *b) {
    if (!strcmp(a, "-") || !strcmp(b, "-")) return !strcmp(a, b);
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[PATH_MAX], cb[PATH_MAX];
    if (canonical(a, ca, sizeof ca) || canonical(b, cb, sizeof cb)) return !strcmp(a, b);
    return !strcmp(ca, cb);
}

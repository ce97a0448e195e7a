/*
 * race_shm.c: POSIX shared memory without files, for grading's race
 * pass (tools/grade/build.sh links it into the ThreadSanitizer program,
 * which runs in kit_jail: tools/harness/jail.c).
 *
 * LLVM's OpenMP runtime (libomp, which the race pass uses for Archer)
 * registers itself, in every process that starts it, in a shared memory
 * object made by shm_open(): a file created in /dev/shm. The jail lets no
 * process create a file, and libomp stops with "Can't open SHM2". These
 * two functions, defined in the program, take the place of the C
 * library's for libomp: each object is an anonymous file
 * (memfd_create()) that lives as long as the process, found by its name
 * in a small table. libomp only ever opens its own object, in its own
 * process, so nothing is lost by its not being shared.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SHM_OBJECTS 16
#define SHM_NAME    128

static struct {
    char name[SHM_NAME];
    int fd;
} objects[SHM_OBJECTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int shm_open(const char *name, int oflag, mode_t mode);
int shm_unlink(const char *name);

int shm_open(const char *name, int oflag, mode_t mode)
{
    (void)mode;
    if (!name || strlen(name) >= SHM_NAME) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = -1, free_slot = -1;
    pthread_mutex_lock(&lock);
    for (int k = 0; k < SHM_OBJECTS; k++) {
        if (objects[k].name[0] && strcmp(objects[k].name, name) == 0) {
            if ((oflag & O_CREAT) && (oflag & O_EXCL))
                errno = EEXIST;
            else
                fd = fcntl(objects[k].fd, F_DUPFD_CLOEXEC, 0);
            pthread_mutex_unlock(&lock);
            return fd;
        }
        if (!objects[k].name[0] && free_slot < 0)
            free_slot = k;
    }
    if (!(oflag & O_CREAT)) {
        errno = ENOENT;
    } else if (free_slot < 0) {
        errno = ENFILE;
    } else {
        int obj = memfd_create(name[0] == '/' ? name + 1 : name, MFD_CLOEXEC);
        if (obj >= 0) {
            fd = fcntl(obj, F_DUPFD_CLOEXEC, 0);
            if (fd >= 0) {
                snprintf(objects[free_slot].name, SHM_NAME, "%s", name);
                objects[free_slot].fd = obj;
            } else
                close(obj);
        }
    }
    pthread_mutex_unlock(&lock);
    return fd;
}

int shm_unlink(const char *name)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < SHM_OBJECTS; k++)
        if (name && objects[k].name[0] && strcmp(objects[k].name, name) == 0) {
            close(objects[k].fd);
            objects[k].name[0] = '\0';
            pthread_mutex_unlock(&lock);
            return 0;
        }
    pthread_mutex_unlock(&lock);
    errno = ENOENT;
    return -1;
}

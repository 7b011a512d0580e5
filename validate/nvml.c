/* validate: what the NVIDIA driver says of the machine, through NVML opened at run time
 * (libnvidia-ml.so.1 ships with the driver, not with the toolkit, and has no header
 * here): the driver's version and how many NVLink links of a GPU are up. Rows and
 * calibrated models record both, so a measurement is never compared against links it
 * did not have. Without the library every answer is "unknown". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "validate/calib.h"

/* NVML's C ABI, as its documentation gives it: every call returns 0 on success, a
 * device handle is an opaque pointer, a link's state is 0 (down) or 1 (up). */
typedef int (*nvml_void_fn)(void);
typedef int (*nvml_version_fn)(char *version, unsigned int length);
typedef int (*nvml_by_pci_fn)(const char *pci_bus_id, void **device);
typedef int (*nvml_link_state_fn)(void *device, unsigned int link, int *active);

#define NVML_MAX_LINKS 32 /* more than any GPU has (H100: 18); a missing link answers an error */

typedef struct nvml_s {
    void *lib;
    nvml_void_fn init, shutdown;
    nvml_version_fn driver_version;
    nvml_by_pci_fn by_pci;
    nvml_link_state_fn link_state;
} nvml_t;

static int nvml_open(nvml_t *n) {
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) return -1;
    n->init = (nvml_void_fn)dlsym(n->lib, "nvmlInit_v2");
    n->shutdown = (nvml_void_fn)dlsym(n->lib, "nvmlShutdown");
    n->driver_version = (nvml_version_fn)dlsym(n->lib, "nvmlSystemGetDriverVersion");
    n->by_pci = (nvml_by_pci_fn)dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->link_state = (nvml_link_state_fn)dlsym(n->lib, "nvmlDeviceGetNvLinkState");
    if (!n->init || !n->shutdown || n->init() != 0) {
        dlclose(n->lib);
        n->lib = NULL;
        return -1;
    }
    return 0;
}

static void nvml_close(nvml_t *n) {
    if (!n->lib) return;
    n->shutdown();
    dlclose(n->lib);
    n->lib = NULL;
}

int ar_nvml_driver_version(char *buf, unsigned long len) {
    nvml_t n;
    if (len) buf[0] = 0;
    if (nvml_open(&n)) return -1;
    char v[96] = "";
    const int ok = n.driver_version && n.driver_version(v, sizeof v) == 0;
    nvml_close(&n);
    if (!ok) return -1;
    snprintf(buf, len, "%s", v);
    return 0;
}

int ar_nvml_nvlinks_up(const char *const *pci_bus_ids, int ngpus) {
    nvml_t n;
    if (nvml_open(&n)) return -1;
    int least = -1;
    for (int g = 0; g < ngpus; g++) {
        void *dev = NULL;
        if (!n.by_pci || !n.link_state || n.by_pci(pci_bus_ids[g], &dev) != 0) {
            least = -1;
            break;
        }
        int up = 0;
        for (unsigned l = 0; l < NVML_MAX_LINKS; l++) {
            int active = 0;
            if (n.link_state(dev, l, &active) != 0) continue; /* no such link */
            up += active == 1;
        }
        if (least < 0 || up < least) least = up;
    }
    nvml_close(&n);
    return least;
}

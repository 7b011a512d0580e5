#include "topologies/internal.h"
int ar_topo_load(const char *path, const char *model_override, ar_topo_t **out, ar_error_t *err) {
    (void)model_override; *out = NULL;
    return ar_error_set(err, AR_ENOTSUP, path, 0, 0, "YAML topologies: not yet");
}
int ar_topo_load_string(const char *yaml, const char *label, const char *model_override,
                        ar_topo_t **out, ar_error_t *err) {
    (void)yaml; (void)model_override; *out = NULL;
    return ar_error_set(err, AR_ENOTSUP, label, 0, 0, "YAML topologies: not yet");
}

/* topologies: shared between the builders and the YAML loader, not public. */
#ifndef ARSIM_TOPOLOGIES_INTERNAL_H
#define ARSIM_TOPOLOGIES_INTERNAL_H
#include "arsim/arsim.h"
#include "common/yamlutil.h"

#define AR__TOPO_MAX_NODES 65536  /* the builders' kinds route without tables; any other
                                     shape keeps nnodes^2 of them, and the route-step limit
                                     (topo.c) refuses a large one far below this */
#define AR__TOPO_MAX_RANKS 65536

const char *ar__topo_default_model(ar_topo_kind_t k);
int ar__topo_new(int ndevices, int nswitches, ar_topo_t **out, ar_error_t *err);
/* merge: add count to an existing bundle of the same kind between the same pair. */
int ar__topo_add_link(ar_topo_t *t, int a, int b, int kind, int count, int merge);
/* Routing tables and default placement; *bad_node names an unreachable node. */
int ar__topo_finish(ar_topo_t *t, int *bad_node, ar_error_t *err);
int ar__topo_parse_spec(const char *spec, ar_topo_kind_t *kind, int *w, int *h, ar_error_t *err);
int ar__topo_is_spec(const char *s);
/* Build a kind; w = N for ring_1d/full/switch (h ignored). Takes ownership of model. */
int ar__topo_build_kind(ar_topo_kind_t kind, int w, int h, ar_model_t *model, int link_kind,
                        int count, ar_topo_t **out, ar_error_t *err);
#endif

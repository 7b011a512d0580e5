/* topologies: builders, routing, rank queries, the YAML loader and its errors. */
#include <stdlib.h>
#include <string.h>
#include "arsim/arsim.h"
#include "tests/suites.h"
#include "topologies/internal.h"

static ar_topo_t *spec(const char *s) { return tu_topo_open(s, NULL); }

/* Index of the bundle between nodes a and b, or -1. */
static int link_between(const ar_topo_t *t, int a, int b) {
    for (int i = 0; i < t->nlinks; i++)
        if ((t->links[i].a == a && t->links[i].b == b) || (t->links[i].a == b && t->links[i].b == a))
            return i;
    return -1;
}

static int dev_hops(const ar_topo_t *t, int a, int b) { return ar_topo_hops(t, a, b); }

START_TEST(test_build_ring) {
    ar_topo_t *t = spec("ring_1d:6");
    ck_assert_int_eq(t->kind, AR_TOPO_RING_1D);
    ck_assert_int_eq(t->nnodes, 6);
    ck_assert_int_eq(t->ndevices, 6);
    ck_assert_int_eq(t->nlinks, 6);
    ck_assert_int_eq(t->nranks, 6);
    ck_assert_str_eq(t->model->name, "accel_tcm");
    ck_assert_int_ge(link_between(t, 5, 0), 0);
    ck_assert_int_eq(dev_hops(t, 0, 3), 3);
    ck_assert_int_eq(dev_hops(t, 0, 5), 1);
    ck_assert_int_eq(dev_hops(t, 1, 4), 3);
    for (int l = 0; l < t->nlinks; l++) {
        ck_assert_int_eq(t->links[l].count, 1);
        ck_assert_str_eq(t->model->links[t->links[l].kind].name, "mesh_link");
    }
    ar_topo_free(t);
    /* a ring of 2: wrap and direct link join the same pair */
    t = spec("ring_1d:2");
    ck_assert_int_eq(t->nlinks, 1);
    ck_assert_int_eq(t->links[0].count, 2);
    ar_topo_free(t);
    t = spec("ring_1d:1");
    ck_assert_int_eq(t->nlinks, 0);
    ck_assert_int_eq(dev_hops(t, 0, 0), 0);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_build_torus) {
    ar_topo_t *t = spec("torus_2d:4x4");
    ck_assert_int_eq(t->kind, AR_TOPO_TORUS_2D);
    ck_assert_int_eq(t->nnodes, 16);
    ck_assert_int_eq(t->nlinks, 32);
    ck_assert_int_eq(t->grid_w, 4);
    ck_assert_int_eq(t->grid_h, 4);
    ck_assert_int_eq(dev_hops(t, 0, 10), 4);  /* (0,0) -> (2,2) */
    ck_assert_int_eq(dev_hops(t, 0, 15), 2);  /* (0,0) -> (3,3) wraps both ways */
    ck_assert_int_eq(dev_hops(t, 5, 6), 1);
    for (int a = 0; a < 16; a++) {
        int deg = 0;
        for (int l = 0; l < t->nlinks; l++) deg += t->links[l].a == a || t->links[l].b == a;
        ck_assert_int_eq(deg, 4);
    }
    ar_topo_free(t);
}
END_TEST

START_TEST(test_build_2x3_not_3x2) {
    ar_topo_t *a = spec("torus_2d:2x3"), *b = spec("torus_2d:3x2");
    ck_assert_int_eq(a->grid_w, 2);
    ck_assert_int_eq(a->grid_h, 3);
    ck_assert_int_eq(b->grid_w, 3);
    ck_assert_int_eq(b->grid_h, 2);
    /* 2x3: device (1,0) is node 1, (0,1) is node 2; the x side of 2 is a count-2 bundle */
    int l01 = link_between(a, 0, 1);
    ck_assert_int_ge(l01, 0);
    ck_assert_int_eq(a->links[l01].count, 2);
    ck_assert_int_eq(a->links[link_between(a, 0, 2)].count, 1);
    ck_assert_int_eq(dev_hops(a, 0, 3), 2);
    ck_assert_int_eq(a->nlinks, 9);
    /* 3x2: node 3 is (0,1), and the y side of 2 is the count-2 bundle */
    ck_assert_int_eq(b->links[link_between(b, 0, 1)].count, 1);
    ck_assert_int_eq(b->links[link_between(b, 0, 3)].count, 2);
    ck_assert_int_eq(dev_hops(b, 0, 3), 1);
    ck_assert_int_eq(dev_hops(b, 0, 2), 1); /* x wrap */
    ck_assert_int_eq(b->nlinks, 9);
    ck_assert_int_eq(link_between(a, 0, 3), -1);
    ck_assert_int_ge(link_between(b, 0, 3), 0);
    ar_topo_free(a);
    ar_topo_free(b);
}
END_TEST

START_TEST(test_build_mesh) {
    ar_topo_t *t = spec("mesh_2d:2x3");
    ck_assert_int_eq(t->kind, AR_TOPO_MESH_2D);
    ck_assert_int_eq(t->nnodes, 6);
    ck_assert_int_eq(t->nlinks, 7); /* 3 rows x 1 + 2 columns x 2 */
    ck_assert_int_eq(dev_hops(t, 0, 5), 3); /* corner to corner */
    ck_assert_int_eq(dev_hops(t, 1, 4), 3);
    ck_assert_int_eq(link_between(t, 0, 4), -1); /* no wrap-around */
    ck_assert_int_eq(dev_hops(t, 0, 4), 2);
    ar_topo_free(t);
    t = spec("mesh_2d:5x3");
    ck_assert_int_eq(t->nlinks, 3 * 4 + 5 * 2);
    ck_assert_int_eq(dev_hops(t, 0, 14), 6);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_build_full_switch) {
    ar_topo_t *t = spec("full:4");
    ck_assert_int_eq(t->kind, AR_TOPO_FULL);
    ck_assert_int_eq(t->nlinks, 6);
    ck_assert_str_eq(t->model->name, "h200_sxm");
    /* the model's 18 NVLink lanes a GPU, split among its three peers */
    for (int i = 0; i < t->nlinks; i++) ck_assert_int_eq(t->links[i].count, 6);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            ck_assert_int_eq(ar_topo_rank_hops(t, a, b), a != b);
            ck_assert(ar_topo_rank_adjacent(t, a, b));
        }
    ar_topo_free(t);
    t = spec("switch:4");
    ck_assert_int_eq(t->kind, AR_TOPO_SWITCH);
    ck_assert_int_eq(t->nnodes, 5);
    ck_assert_int_eq(t->ndevices, 4);
    ck_assert_int_eq(t->nlinks, 4);
    ck_assert(t->nodes[4].is_switch);
    ck_assert(!t->nodes[3].is_switch);
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 3), 2);
    ck_assert(ar_topo_rank_adjacent(t, 0, 3));
    ck_assert_int_eq(ar_topo_rank_hops(t, 2, 2), 0);
    for (int i = 0; i < t->nlinks; i++) ck_assert_int_eq(t->links[i].count, 18); /* all into the switch */
    ar_topo_free(t);
    /* a pair has every lane; more peers than lanes still one each */
    t = spec("full:2");
    ck_assert_int_eq(t->links[0].count, 18);
    ck_assert_double_eq_tol(ar_topo_link_gbps(t, 0), 18 * t->model->links[0].bw_gbps, 1e-9);
    ar_topo_free(t);
    t = spec("full:24");
    for (int i = 0; i < t->nlinks; i++) ck_assert_int_eq(t->links[i].count, 1);
    ar_topo_free(t);
    /* a ring is not all-adjacent, and its neighbours have one bundle each (no lanes in accel_tcm) */
    t = spec("ring_1d:6");
    ck_assert_int_eq(t->links[0].count, 1);
    ck_assert(ar_topo_rank_adjacent(t, 0, 1));
    ck_assert(!ar_topo_rank_adjacent(t, 0, 2));
    ar_topo_free(t);
}
END_TEST

START_TEST(test_build_errors) {
    static const char *const bad[] = {"torus_2d:0x3", "mesh_2d:3x0", "ring_1d:0", "full:-1",
                                      "switch:abc",   "torus_2d:4",  "torus_2d:4x4x", "ring_1d:",
                                      NULL};
    for (int i = 0; bad[i]; i++) {
        ar_topo_t *t = (ar_topo_t *)1;
        ar_error_t e;
        ck_assert_int_eq(ar_topo_open(bad[i], NULL, &t, &e), AR_ETOPO);
        ck_assert_ptr_null(t);
        ck_assert_msg(strstr(e.message, bad[i]) != NULL, "%s", e.message);
    }
    ar_topo_t *t;
    ar_error_t e;
    ck_assert_int_eq(ar_topo_open("torus_2d:0x3", NULL, &t, &e), AR_ETOPO);
    ck_assert_ptr_nonnull(strstr(e.message, "grid side"));
    ck_assert_int_eq(ar_topo_open("ring_1d:70000", NULL, &t, &e), AR_ELIMIT);
    ck_assert_int_eq(ar_topo_open("hypercube:4", NULL, &t, &e), AR_ETOPO);
    ck_assert_ptr_nonnull(strstr(e.message, "hypercube:4"));
    ck_assert_int_eq(ar_topo_open("torus_2d:2x2", "no_such_model", &t, &e), AR_EMODEL);
    ck_assert_ptr_nonnull(strstr(e.message, "no_such_model"));
}
END_TEST

/* The nodes a route passes, from its start: n + 1 of them. */
static void route_nodes(const ar_topo_t *t, int from, const int *links, const int *dirs, int n, int *nodes) {
    nodes[0] = from;
    for (int h = 0; h < n; h++) {
        const ar_link_t *l = &t->links[links[h]];
        ck_assert_int_eq(dirs[h] > 0 ? l->a : l->b, nodes[h]);
        nodes[h + 1] = dirs[h] > 0 ? l->b : l->a;
    }
}

/* The builders' kinds route by their geometry; the same topology routed by BFS tables
 * (as any other shape is) gives every pair the same hop count, and on mesh, full and switch
 * the same links. Rings and tori route X first, then Y, forwards on ties: every route is
 * shortest, and the translate of the route from device 0 to the same offset. */
START_TEST(test_route_geometry_is_bfs) {
    const char *specs[] = {"ring_1d:1", "ring_1d:2", "ring_1d:5", "ring_1d:8", "torus_2d:1x4", "torus_2d:2x2",
                           "torus_2d:2x3", "torus_2d:3x2", "torus_2d:4x4", "torus_2d:5x3", "mesh_2d:1x4",
                           "mesh_2d:3x3", "mesh_2d:4x2", "full:2", "full:5", "switch:1", "switch:5"};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        ar_topo_t *g = spec(specs[k]), *b = spec(specs[k]);
        ar_error_t e;
        ck_assert_ptr_null(g->hops);
        b->kind = AR_TOPO_CUSTOM; /* route it as any other shape: BFS tables */
        ck_assert_msg(ar__topo_finish(b, NULL, &e) == AR_OK, "%s: %s", specs[k], e.message);
        ck_assert_ptr_nonnull(b->hops);
        ck_assert_int_eq(ar_topo_diameter(g), ar_topo_diameter(b));
        for (int i = 0; i < g->nnodes; i++)
            for (int j = 0; j < g->nnodes; j++) {
                int gl[64], gd[64], bl[64], bd[64];
                ck_assert_int_eq(ar_topo_hops(g, i, j), ar_topo_hops(b, i, j));
                const int n = ar_topo_route(g, i, j, gl, gd, 64);
                ck_assert_int_eq(n, ar_topo_route(b, i, j, bl, bd, 64));
                if (g->kind == AR_TOPO_RING_1D || g->kind == AR_TOPO_TORUS_2D) {
                    int nodes[65], base[65], zl[64], zd[64];
                    route_nodes(g, i, gl, gd, n, nodes);
                    ck_assert_int_eq(nodes[n], j);
                    const int off = ar_topo_translate(g, 0, i, j);
                    ck_assert_int_eq(ar_topo_route(g, 0, off, zl, zd, 64), n);
                    route_nodes(g, 0, zl, zd, n, base);
                    for (int h = 0; h <= n; h++)
                        ck_assert_msg(ar_topo_translate(g, 0, i, nodes[h]) == base[h], "%s: %d -> %d hop %d: node %d",
                                      specs[k], i, j, h, nodes[h]);
                    continue;
                }
                for (int h = 0; h < n; h++) {
                    ck_assert_msg(gl[h] == bl[h] && gd[h] == bd[h], "%s: %d -> %d hop %d: link %d%+d, BFS %d%+d",
                                  specs[k], i, j, h, gl[h], gd[h], bl[h], bd[h]);
                }
            }
        ar_topo_free(g);
        ar_topo_free(b);
    }
}
END_TEST

START_TEST(test_route) {
    ar_topo_t *t = spec("torus_2d:4x4");
    int links[16], dirs[16];
    int n = ar_topo_route(t, 0, 10, links, dirs, 16);
    ck_assert_int_eq(n, 4);
    /* walk the route: each hop leaves the node the previous one reached */
    int cur = 0;
    for (int h = 0; h < n; h++) {
        const ar_link_t *l = &t->links[links[h]];
        ck_assert_int_eq(dirs[h] > 0 ? l->a : l->b, cur);
        cur = dirs[h] > 0 ? l->b : l->a;
    }
    ck_assert_int_eq(cur, 10);
    /* X first, forwards on a tie: from 0 towards (2,2), (1,0), (2,0), (2,1) */
    int nodes[5];
    route_nodes(t, 0, links, dirs, n, nodes);
    ck_assert_int_eq(nodes[1], 1);
    ck_assert_int_eq(nodes[2], 2);
    ck_assert_int_eq(nodes[3], 6);
    /* and the shorter way round: from 0 to (3,3), (3,0) then (3,3) */
    ck_assert_int_eq(ar_topo_route(t, 0, 15, links, dirs, 16), 2);
    route_nodes(t, 0, links, dirs, 2, nodes);
    ck_assert_int_eq(nodes[1], 3);
    ck_assert_int_eq(ar_topo_route(t, 3, 3, links, dirs, 16), 0);
    ck_assert_int_eq(ar_topo_route(t, 0, 10, links, dirs, 3), -1); /* does not fit */
    ck_assert_int_eq(ar_topo_route(t, 0, 99, links, dirs, 16), -1);
    /* the reverse route uses the same links */
    int back[16], bdirs[16];
    ck_assert_int_eq(ar_topo_route(t, 10, 0, back, bdirs, 16), 4);
    ar_topo_free(t);
    /* through a switch: device, switch, device */
    t = spec("switch:3");
    ck_assert_int_eq(ar_topo_route(t, 0, 2, links, dirs, 16), 2);
    ck_assert_int_eq(links[0], 0);
    ck_assert_int_eq(dirs[0], +1);
    ck_assert_int_eq(links[1], 2);
    ck_assert_int_eq(dirs[1], -1);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_place_blocks) {
    ar_topo_t *t = spec("switch:4");
    ar_error_t e;
    ck_assert_int_eq(ar_topo_place_blocks(t, 8, &e), AR_OK);
    ck_assert_int_eq(t->nranks, 8);
    int want[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    for (int r = 0; r < 8; r++) ck_assert_int_eq(ar_topo_rank_device(t, r), want[r]);
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 1), 0);
    ck_assert(ar_topo_rank_adjacent(t, 0, 1));
    ck_assert_int_eq(ar_topo_rank_hops(t, 1, 2), 2);
    ck_assert_int_eq(ar_topo_rank_device(t, 8), -1);
    ck_assert_int_eq(ar_topo_place_blocks(t, 6, &e), AR_ETOPO);
    ck_assert_ptr_nonnull(strstr(e.message, "ranks"));
    ck_assert_int_eq(ar_topo_place_blocks(t, 0, &e), AR_ETOPO);
    ck_assert_int_eq(t->nranks, 8); /* unchanged by the failures */
    ar_topo_free(t);
}
END_TEST

START_TEST(test_shipped) {
    const char *const *names = ar_topo_shipped();
    int n = 0;
    for (; names[n]; n++) {
        ar_topo_t *t = spec(names[n]);
        ck_assert_str_eq(t->name, names[n]);
        ck_assert_int_ge(t->ndevices, 2);
        ck_assert_int_eq(t->nranks, t->ndevices);
        ck_assert_ptr_nonnull(strstr(t->path, "topologies/"));
        ar_topo_free(t);
        /* by path too */
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.yaml", ar_topo_dir(), names[n]);
        ar_error_t e;
        ck_assert_int_eq(ar_topo_open(path, NULL, &t, &e), AR_OK);
        ar_topo_free(t);
    }
    ck_assert_int_eq(n, 8);

    ar_topo_t *t = spec("torus_2d_3x2");
    ck_assert_int_eq(t->kind, AR_TOPO_TORUS_2D);
    ck_assert_int_eq(t->grid_w, 3);
    ck_assert_int_eq(t->grid_h, 2);
    ar_topo_free(t);
    t = spec("torus_2d_2x3");
    ck_assert_int_eq(t->grid_w, 2);
    ck_assert_int_eq(t->grid_h, 3);
    ar_topo_free(t);
    t = spec("torus_2d_4x4");
    ck_assert_int_eq(dev_hops(t, 0, 10), 4);
    ar_topo_free(t);
    t = spec("mesh_2d_2x3");
    ck_assert_int_eq(t->kind, AR_TOPO_MESH_2D);
    ck_assert_int_eq(dev_hops(t, 0, 5), 3);
    ar_topo_free(t);
    t = spec("ring_1d_8");
    ck_assert_int_eq(t->nlinks, 8);
    ar_topo_free(t);

    t = spec("hgx_h100_8");
    ck_assert_int_eq(t->kind, AR_TOPO_SWITCH);
    ck_assert_int_eq(t->ndevices, 8);
    ck_assert_int_eq(t->nnodes, 9);
    ck_assert_str_eq(t->model->name, "h100_sxm");
    ck_assert_str_eq(t->nodes[8].name, "nvswitch");
    for (int l = 0; l < t->nlinks; l++) {
        ck_assert_int_eq(t->links[l].count, 18);
        ck_assert_str_eq(t->model->links[t->links[l].kind].name, "nvlink4");
    }
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 7), 2);
    ck_assert(ar_topo_rank_adjacent(t, 0, 7));
    ar_topo_free(t);

    t = spec("h200_pair");
    ck_assert_int_eq(t->kind, AR_TOPO_FULL);
    ck_assert_int_eq(t->nlinks, 1);
    ck_assert_int_eq(t->links[0].count, 18);
    ck_assert_str_eq(t->model->name, "h200_sxm");
    ck_assert_double_eq_tol(ar_topo_link_gbps(t, 0), 18 * t->model->links[t->links[0].kind].bw_gbps, 1e-9);
    ar_topo_free(t);
}
END_TEST

START_TEST(test_open) {
    ar_topo_t *t;
    ar_error_t e;
    /* model override on a SPEC and on a file */
    ck_assert_int_eq(ar_topo_open("torus_2d:4x4", "h100_sxm", &t, &e), AR_OK);
    ck_assert_str_eq(t->model->name, "h100_sxm");
    ck_assert_str_eq(t->model->links[t->links[0].kind].name, "nvlink4");
    ar_topo_free(t);
    ck_assert_int_eq(ar_topo_open("torus_2d_4x4", "h200_sxm", &t, &e), AR_OK);
    ck_assert_str_eq(t->model->name, "h200_sxm");
    ck_assert_int_eq(t->nlinks, 32);
    ar_topo_free(t);
    ck_assert_int_eq(ar_topo_open("h200_pair", test_path("tests/data/model_small.yaml"), &t, &e),
                     AR_ETOPO); /* the file names nvlink4, which that model lacks */
    ck_assert_ptr_nonnull(strstr(e.message, "links[0].kind"));
    ck_assert_ptr_nonnull(strstr(e.message, "nvlink4"));
    ck_assert_int_eq(e.line, 8);
    ck_assert_int_eq(ar_topo_open("no_such_topology", NULL, &t, &e), AR_ETOPO);
    ck_assert_ptr_nonnull(strstr(e.message, "no_such_topology"));
    /* unreadable file */
    ck_assert_int_eq(ar_topo_open("/nonexistent/dir/t.yaml", NULL, &t, &e), AR_EIO);
    ck_assert_str_eq(e.file, "/nonexistent/dir/t.yaml");
    ck_assert_int_eq(ar_topo_open(test_path("tests/data"), NULL, &t, &e), AR_EIO);
    /* search directory follows ARSIM_DATADIR */
    char *old = getenv("ARSIM_DATADIR") ? strdup(getenv("ARSIM_DATADIR")) : NULL;
    setenv("ARSIM_DATADIR", "/elsewhere", 1);
    ck_assert_str_eq(ar_topo_dir(), "/elsewhere/topologies");
    ck_assert_int_eq(ar_topo_open("ring_1d_6", NULL, &t, &e), AR_ETOPO);
    if (old) setenv("ARSIM_DATADIR", old, 1);
    else unsetenv("ARSIM_DATADIR");
    free(old);
    ck_assert_int_eq(ar_topo_open("ring_1d_6", NULL, &t, &e), AR_OK);
    ar_topo_free(t);
    ck_assert_str_eq(ar_topo_kind_name(AR_TOPO_MESH_2D), "mesh_2d");
}
END_TEST

START_TEST(test_load_placement) {
    ar_topo_t *t;
    ar_error_t e;
    ar_error_clear(&e);
    ck_assert_msg(ar_topo_load(test_path("tests/data/topo_placement.yaml"), NULL, &t, &e) == AR_OK,
                  "%s", e.message);
    ck_assert_str_eq(t->name, "placed");
    ck_assert_str_eq(t->model->name, "small"); /* found relative to the file */
    ck_assert_int_eq(t->kind, AR_TOPO_CUSTOM);
    ck_assert_int_eq(t->ndevices, 3);
    ck_assert_int_eq(t->nnodes, 5);
    ck_assert_int_eq(t->nranks, 5);
    int want[5] = {0, 0, 1, 2, 2};
    for (int r = 0; r < 5; r++) ck_assert_int_eq(t->placement[r], want[r]);
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 1), 0);
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 2), 2);
    ck_assert_int_eq(ar_topo_rank_hops(t, 0, 4), 4);
    ck_assert(ar_topo_rank_adjacent(t, 0, 2));  /* a - s1 - b: switches only */
    ck_assert(!ar_topo_rank_adjacent(t, 0, 3)); /* crosses device b */
    ck_assert_int_eq(t->links[1].count, 2);
    ck_assert_str_eq(t->model->links[t->links[1].kind].name, "fat");
    ck_assert_str_eq(t->model->links[t->links[0].kind].name, "wire"); /* default: first kind */
    ar_topo_free(t);

    /* ranks without placement: blocks */
    ck_assert_int_eq(ar_topo_load_string("devices: 2\nlinks: [{a: d0, b: d1}]\nranks: 6\n", "s.yaml",
                                         NULL, &t, &e), AR_OK);
    ck_assert_int_eq(t->nranks, 6);
    ck_assert_int_eq(t->placement[2], 0);
    ck_assert_int_eq(t->placement[3], 1);
    ck_assert_int_eq(t->kind, AR_TOPO_FULL);
    ck_assert_str_eq(t->name, "s");
    ar_topo_free(t);
    /* a builder with link kind and count */
    ck_assert_int_eq(ar_topo_load_string("model: h200_sxm\nbuilder:\n  ring_1d: {n: 3, link: pcie5, "
                                         "count: 2}\nplacement: [d2, d1, d0, d0]\n", "b.yaml",
                                         NULL, &t, &e), AR_OK);
    ck_assert_int_eq(t->kind, AR_TOPO_RING_1D);
    ck_assert_str_eq(t->model->links[t->links[0].kind].name, "pcie5");
    ck_assert_int_eq(t->links[0].count, 2);
    ck_assert_int_eq(t->nranks, 4);
    ck_assert_int_eq(t->placement[0], 2);
    ar_topo_free(t);
    /* aliases are read */
    ck_assert_int_eq(ar_topo_load_string("devices: 3\nlinks:\n  - &l {a: d0, b: d1}\n"
                                         "  - {a: d1, b: d2}\n  - *l\n", "a.yaml", NULL, &t, &e), AR_OK);
    ck_assert_int_eq(t->nlinks, 3);
    ck_assert_int_eq(t->links[2].b, 1);
    ar_topo_free(t);
}
END_TEST

/* Load yaml, expect code, the line, and the message to start with field. */
static void expect_err(const char *yaml, int code, int line, const char *field, const char *why) {
    ar_topo_t *t = (ar_topo_t *)1;
    ar_error_t e;
    ar_error_clear(&e);
    int rc = ar_topo_load_string(yaml, "bad.yaml", NULL, &t, &e);
    char buf[512];
    ar_error_format(&e, buf, sizeof buf);
    ck_assert_msg(rc == code, "want %s got %s: %s", ar_strerror(code), ar_strerror(rc), buf);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(e.file, "bad.yaml");
    ck_assert_msg(e.line == line, "want line %d: %s", line, buf);
    ck_assert_int_ge(e.column, 1);
    ck_assert_msg(strncmp(e.message, field, strlen(field)) == 0 && e.message[strlen(field)] == ':',
                  "want field %s: %s", field, buf);
    if (why) ck_assert_msg(strstr(e.message, why) != NULL, "want '%s': %s", why, buf);
}

#define GPUS "model: h200_sxm\ndevices: [g0, g1]\n"

START_TEST(test_load_errors) {
    /* unknown key */
    expect_err(GPUS "linkz: []\n", AR_EPARSE, 3, "linkz", "unknown key");
    expect_err(GPUS "links:\n  - {a: g0, b: g1, knd: nvlink4}\n", AR_EPARSE, 4, "links[0].knd",
               "unknown key");
    expect_err("builder:\n  torus_2d: {w: 2, h: 2, depth: 2}\n", AR_EPARSE, 2,
               "builder.torus_2d.depth", "unknown key");
    expect_err("builder:\n  hypercube: {n: 4}\n", AR_EPARSE, 2, "builder.hypercube", "unknown key");
    /* wrong type */
    expect_err("devices: {g0: 1}\n", AR_EPARSE, 1, "devices", "mapping");
    expect_err(GPUS "links: {a: g0}\n", AR_EPARSE, 3, "links", "expected a sequence");
    expect_err(GPUS "links:\n  - {a: g0, b: g1, count: two}\n", AR_EPARSE, 4, "links[0].count",
               "integer");
    expect_err(GPUS "links: [{a: g0, b: g1}]\nranks: 2.5\n", AR_EPARSE, 4, "ranks", "integer");
    expect_err("builder:\n  ring_1d: {n: \"4\"}\n", AR_EPARSE, 2, "builder.ring_1d.n", "integer");
    expect_err(GPUS "name: [x]\n", AR_EPARSE, 3, "name", "scalar");
    /* unknown link kind */
    expect_err(GPUS "links:\n  - {a: g0, b: g1, kind: nvlink9}\n", AR_ETOPO, 4, "links[0].kind",
               "unknown link kind 'nvlink9'");
    expect_err("builder:\n  full: {n: 3, link: infiniband}\n", AR_ETOPO, 2, "builder.full.link",
               "infiniband");
    /* disconnected: names the unreachable device at its line */
    expect_err("model: h200_sxm\ndevices:\n  - g0\n  - g1\n  - g2\nlinks:\n  - {a: g0, b: g1}\n",
               AR_ETOPO, 5, "devices", "'g2'");
    expect_err("devices: 2\n", AR_ETOPO, 1, "devices", "disconnected");
    /* duplicate device (also against a switch name) */
    expect_err("devices: [g0, g1, g0]\n", AR_ETOPO, 1, "devices[2]", "duplicate device name 'g0'");
    expect_err("devices: [g0, g1]\nswitches: [g1]\n", AR_ETOPO, 2, "switches[0]", "duplicate");
    /* placement onto a missing device or a switch */
    expect_err(GPUS "links: [{a: g0, b: g1}]\nplacement: [g0, g7]\n", AR_ETOPO, 4, "placement[1]",
               "unknown device 'g7'");
    expect_err("devices: [g0, g1]\nswitches: [s]\nlinks: [{a: g0, b: s}, {a: g1, b: s}]\n"
               "placement: [g0, s]\n", AR_ETOPO, 4, "placement[1]", "switch");
    /* grid side 0 */
    expect_err("builder:\n  torus_2d: {w: 0, h: 3}\n", AR_ETOPO, 2, "builder.torus_2d.w",
               "grid side");
    expect_err("builder:\n  mesh_2d: {w: 2, h: 0}\n", AR_ETOPO, 2, "builder.mesh_2d.h", "grid side");
    expect_err("builder:\n  mesh_2d: {w: 2}\n", AR_EPARSE, 2, "builder.mesh_2d.h", "missing");
    expect_err("builder:\n  ring_1d: {n: 0}\n", AR_ETOPO, 2, "builder.ring_1d.n", NULL);
    /* unknown model */
    expect_err("model: h999_sxm\ndevices: 1\n", AR_EMODEL, 1, "model", "unknown model 'h999_sxm'");
    expect_err("model: ./no/such/model.yaml\ndevices: 1\n", AR_EIO, 1, "model", "cannot read");
    /* a link to an unknown device, or to itself */
    expect_err(GPUS "links:\n  - {a: g0, b: g1}\n  - {a: g1, b: g9}\n", AR_ETOPO, 5, "links[1].b",
               "unknown device 'g9'");
    expect_err(GPUS "links:\n  - {a: g0, b: g0}\n", AR_ETOPO, 4, "links[0].b", "itself");
    expect_err(GPUS "links:\n  - {a: g0}\n", AR_EPARSE, 4, "links[0].b", "missing");
    /* ranks vs placement */
    expect_err(GPUS "links: [{a: g0, b: g1}]\nranks: 3\nplacement: [g0, g1]\n", AR_ETOPO, 4, "ranks",
               "3 ranks but placement lists 2");
    expect_err(GPUS "links: [{a: g0, b: g1}]\nranks: 3\n", AR_ETOPO, 4, "ranks", "divide");
    expect_err(GPUS "links: [{a: g0, b: g1}]\nranks: 0\n", AR_ETOPO, 4, "ranks", NULL);
    /* count out of range */
    expect_err(GPUS "links:\n  - {a: g0, b: g1, count: 0}\n", AR_ETOPO, 4, "links[0].count", NULL);
    /* builder and a list together; neither */
    expect_err("builder:\n  full: {n: 2}\ndevices: 2\n", AR_EPARSE, 3, "devices", "either");
    expect_err("name: x\n", AR_EPARSE, 1, "devices", "missing");
    /* YAML itself */
    expect_err("devices: [g0, g1\n", AR_EPARSE, 2, "yaml", NULL);
    expect_err("", AR_EPARSE, 1, "topology", "empty");
    expect_err("devices: 2\ndevices: 3\n", AR_EPARSE, 2, "devices", "duplicate key");
    expect_err("---\ndevices: 2\n---\ndevices: 3\n", AR_EPARSE, 3, "yaml", "one document");
    expect_err("devices: *nope\n", AR_EPARSE, 1, "yaml", NULL);
}
END_TEST

START_TEST(test_load_error_files) {
    ar_topo_t *t;
    ar_error_t e;
    char buf[600];
    /* an error inside the model a topology names is reported in the model's file */
    ck_assert_int_eq(ar_topo_load(test_path("tests/data/topo_bad_model.yaml"), NULL, &t, &e),
                     AR_EMODEL);
    ar_error_format(&e, buf, sizeof buf);
    ck_assert_msg(strstr(e.file, "tests/data/model_bad_bw.yaml") != NULL, "%s", buf);
    ck_assert_int_eq(e.line, 8);
    ck_assert_msg(strncmp(e.message, "links[0].bw_gbps: ", 18) == 0, "%s", buf);
    /* disconnected, from a file */
    ck_assert_int_eq(ar_topo_open(test_path("tests/data/topo_disconnected.yaml"), NULL, &t, &e),
                     AR_ETOPO);
    ar_error_format(&e, buf, sizeof buf);
    ck_assert_int_eq(e.line, 5);
    ck_assert_int_eq(e.column, 5);
    ck_assert_msg(strstr(buf, "topo_disconnected.yaml:5:5: devices: topology is disconnected: "
                              "device 'gpu2'") != NULL, "%s", buf);
}
END_TEST

START_TEST(test_load_limits) {
    ar_topo_t *t;
    ar_error_t e;
    /* a billion-laughs document is refused, not expanded */
    const char *bomb =
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    ck_assert_int_eq(ar_topo_load_string(bomb, "bomb.yaml", NULL, &t, &e), AR_ELIMIT);
    ck_assert_int_eq(e.line, 6);
    /* deep nesting */
    char deep[400];
    memset(deep, '[', 200);
    deep[200] = '\0';
    ck_assert_int_eq(ar_topo_load_string(deep, "deep.yaml", NULL, &t, &e), AR_ELIMIT);
    /* big builders still route quickly */
    ck_assert_int_eq(ar_topo_open("torus_2d:32x32", NULL, &t, &e), AR_OK);
    ck_assert_int_eq(ar_topo_hops(t, 0, 16 * 32 + 16), 32);
    ck_assert_ptr_null(t->hops); /* a builder's grid routes by its geometry: no n^2 tables */
    ar_topo_free(t);
}
END_TEST

Suite *suite_topo(void) {
    Suite *s = suite_create("topo");
    TCase *tc;
#define TC(name, fn) tc = tcase_create(name); tcase_add_test(tc, fn); suite_add_tcase(s, tc)
    TC("ar_topo_build_ring", test_build_ring);
    TC("ar_topo_build_torus", test_build_torus);
    TC("ar_topo_build_2x3_not_3x2", test_build_2x3_not_3x2);
    TC("ar_topo_build_mesh", test_build_mesh);
    TC("ar_topo_build_full_switch", test_build_full_switch);
    TC("ar_topo_build_errors", test_build_errors);
    TC("ar_topo_route", test_route);
    TC("route_geometry", test_route_geometry_is_bfs);
    TC("ar_topo_place_blocks", test_place_blocks);
    TC("ar_topo_shipped", test_shipped);
    TC("ar_topo_open", test_open);
    TC("ar_topo_load", test_load_placement);
    TC("ar_topo_load_errors", test_load_errors);
    TC("ar_topo_load_error_files", test_load_error_files);
    TC("ar_topo_load_limits", test_load_limits);
#undef TC
    return s;
}

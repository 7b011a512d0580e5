/* arsim: the public surface. */
#ifndef ARSIM_ARSIM_H
#define ARSIM_ARSIM_H
#include "arsim/error.h"
#include "arsim/types.h"
#include "arsim/model.h"
#include "arsim/topo.h"
#include "arsim/plan.h"
#include "arsim/algo.h"
#include "arsim/backend.h"
#include "arsim/bound.h"
#include "arsim/cost.h"
#include "arsim/util.h"
#include "arsim/case.h"
#endif

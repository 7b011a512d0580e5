/* common: shared between core files, not part of the public surface. */
#ifndef ARSIM_COMMON_INTERNAL_H
#define ARSIM_COMMON_INTERNAL_H
#include "arsim/arsim.h"
#include "common/yamlutil.h"
#endif

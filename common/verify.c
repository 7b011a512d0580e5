/* verifier: see arsim/plan.h */
#include "arsim/plan.h"
int ar_plan_verify(const ar_plan_t *p, ar_error_t *err) { (void)p; return AR_ERR(err, AR_ENOTSUP, "verifier not built yet"); }

libarsim_la_SOURCES += common/error.c common/types.c common/plan.c common/verify.c common/util.c common/check.c common/csv.c common/out.c \
	common/yamlutil.c common/yamlutil.h common/internal.h

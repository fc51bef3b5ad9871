#include "sideband/perf/perf_attr.h"

#include <catch2/catch.hpp>

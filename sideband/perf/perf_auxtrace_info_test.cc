#include "sideband/perf/perf_auxtrace_info.h"

#include <catch2/catch.hpp>

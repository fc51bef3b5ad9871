#include "sideband/perf/perf_abi.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_data.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_sample.h"

#include <catch2/catch.hpp>

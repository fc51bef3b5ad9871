#include "sideband/perf/perf_features.h"

#include <catch2/catch.hpp>

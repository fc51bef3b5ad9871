#include "sideband/perf/perf_record.h"

#include <catch2/catch.hpp>

#include "sideband/perf/perf_data_tokenizer.h"

#include <catch2/catch.hpp>

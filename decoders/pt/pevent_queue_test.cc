#include "decoders/pt/pevent_queue.h"

#include <catch2/catch.hpp>

#include "decoders/pt/pevent_test_records.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

TEST_CASE("records come out in time order across files; the first file leads on equal times") {
  std::vector<PeventSource> sources;
  sources.push_back(SourceOf(Concat({Lost(1, 1, {std::nullopt, 2}), Lost(1, 2, {std::nullopt, 5})}),
                             perf::kSampleTime, "a"));
  sources.push_back(SourceOf(Concat({Lost(2, 1, {std::nullopt, 2}), Lost(2, 2, {std::nullopt, 3})}),
                             perf::kSampleTime, "b"));
  PeventQueue queue(std::move(sources));
  CHECK(queue.PopDue(1) == nullptr);
  std::vector<std::string> order;
  while (PeventSource* source = queue.PopDue(4)) {
    const auto& lost = std::get<perf::LostRecord>(source->current().record.body);
    order.push_back(source->filename() + std::to_string(lost.lost));
    source->Advance();
    queue.Requeue(source);
  }
  CHECK(order == std::vector<std::string>{"a1", "b1", "b2"});
  REQUIRE(queue.pending().size() == 1);
  CHECK(queue.pending()[0]->filename() == "a");
  REQUIRE(queue.finished().size() == 1);
  CHECK(queue.finished()[0]->filename() == "b");
  queue.Retire(queue.finished()[0]);
  CHECK(queue.finished().empty());
}

#pragma once
// Result<T>: the return type of every fallible call. An Error is one line a user can act on: it names
// the file and the offset or field that is wrong.
#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace ptprof {

struct Error {
  std::string message;
};

template <class T>
using Result = tl::expected<T, Error>;

// Status is Result<void>: success or an Error.
using Status = Result<void>;

inline tl::unexpected<Error> Fail(std::string message) {
  return tl::unexpected<Error>(Error{std::move(message)});
}

}  // namespace ptprof

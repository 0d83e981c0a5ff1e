// The sam3::Error code a call throws (a test failure, and kRuntime, when it throws none).
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "sam3/error.h"

namespace sam3::test {

inline ErrorCode code_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no sam3::Error thrown";
  return ErrorCode::kRuntime;
}

}  // namespace sam3::test

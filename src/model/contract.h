// The pure core's contract checks (pure/contract.h) on a native session.
#pragma once

#include <vector>

#include "pure/contract.h"
#include "runtime/session.h"

namespace sam3::detail {

using pure::Expected;
using pure::kBool;
using pure::kFloat;
using pure::kFloatOrHalf;
using pure::kIntTypes;
using pure::kUint8;
using pure::square_side;

// A session's inputs and outputs as the pure core sees them (the file's path names it).
pure::PartSpec part_spec(const runtime::Session& s);

// Throws kModelMismatch naming the file, the tensor, what was expected and what was found.
void require_inputs(const runtime::Session& s, const std::vector<Expected>& expected);
void require_outputs(const runtime::Session& s, const std::vector<Expected>& expected);

}  // namespace sam3::detail

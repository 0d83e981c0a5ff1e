#include "number_options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "sam3/error.h"

namespace sam3::cli {
namespace {

// A bound as a user writes it: whole numbers in full (1000000, not 1e+06).
std::string text_of(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  std::ostringstream s;
  s << v;
  return s.str();
}

// "" when `text` is a finite number within [lo, hi] (or (lo, hi] when open_low), else why not.
std::string check(const std::string& text, double lo, double hi, bool open_low, double* out) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (text.empty() || end != begin + text.size()) return "'" + text + "' is not a number";
  if (!std::isfinite(v) || errno == ERANGE) return "'" + text + "' is not a finite number in range";
  const bool above_low = open_low ? v > lo : v >= lo;
  if (!above_low || v > hi) {
    const bool bounded_high = hi < std::numeric_limits<double>::max();
    const bool bounded_low = lo > std::numeric_limits<double>::lowest();
    std::string want = bounded_low && bounded_high ? "from " + text_of(lo) + " to " + text_of(hi)
                       : bounded_low               ? std::string(open_low ? "above " : "at least ") + text_of(lo)
                                                   : "at most " + text_of(hi);
    return "'" + text + "' must be " + want;
  }
  if (out) *out = v;
  return "";
}

}  // namespace

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator([lo, hi](std::string& text) { return check(text, lo, hi, false, nullptr); },
                        "NUMBER in [" + text_of(lo) + ", " + (hi < std::numeric_limits<double>::max() ? text_of(hi) : "...") + "]");
}

CLI::Validator number_above(double lo) {
  return CLI::Validator([lo](std::string& text) { return check(text, lo, std::numeric_limits<double>::max(), true, nullptr); },
                        "NUMBER > " + text_of(lo));
}

double parse_number(const std::string& text, const std::string& option, double lo, double hi) {
  double v = 0;
  const std::string why = check(text, lo, hi, false, &v);
  if (!why.empty()) throw Error(ErrorCode::kInvalidArgument, option + ": " + why);
  return v;
}

int parse_int(const std::string& text, const std::string& option, int lo, int hi) {
  const double v = parse_number(text, option, lo, hi);
  if (v != std::floor(v)) throw Error(ErrorCode::kInvalidArgument, option + ": '" + text + "' is not a whole number");
  return static_cast<int>(v);
}

std::vector<std::string> option_list(const std::string& text) {
  std::vector<std::string> items;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

}  // namespace sam3::cli

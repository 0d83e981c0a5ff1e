// Numbers on the command line, checked once for every option of every command: finite and in
// range, or an error naming the option and what was given. (NaN passes every comparison-based
// range check, and an out-of-range float-to-int cast is undefined, so neither is left to them.)
#pragma once

#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <vector>

namespace sam3::cli {

// For CLI11 options (a usage error, exit 2): a finite number from lo to hi.
CLI::Validator number_in(double lo, double hi = std::numeric_limits<double>::max());
// For CLI11 options: a finite number above lo (excluded).
CLI::Validator number_above(double lo);

// A number inside an option's text (--bands 4,3,2, --scale 0,4000, --box x0,y0,x1,y1): the whole
// text a finite number from lo to hi, else kInvalidArgument "<option>: '<text>' is not ...".
double parse_number(const std::string& text, const std::string& option, double lo = std::numeric_limits<double>::lowest(),
                    double hi = std::numeric_limits<double>::max());
// The same for a whole number from lo to hi (no cast of 1e300 or 2.5 to int).
int parse_int(const std::string& text, const std::string& option, int lo, int hi = std::numeric_limits<int>::max());
// The items of a comma-separated option (--bands 4,3,2), empty ones dropped, none trimmed.
std::vector<std::string> option_list(const std::string& text);

}  // namespace sam3::cli

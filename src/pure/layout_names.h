// Which text-prompted layout a set of file names holds and which file plays each part: the
// names each exporter writes. Pure (names only), so the native loader (model/layout.cpp, which
// lists the folder) and the browser (a File list, or the names a server answered for) share it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pure/generation.h"

namespace sam3::pure {

struct PartNames {
  const char* part;                // "image", "text", "decoder", "geometry"
  std::vector<const char*> stems;  // file names without ".onnx" and the precision suffix
  bool required;
};

struct LayoutNames {
  Family family;
  std::vector<PartNames> parts;
};

// usls, then samexporter.
const std::vector<LayoutNames>& text_layouts();
// Preference when several precisions of a part sit side by side: the plain name, then int8
// (fastest on CPUs), fp32, fp16, q4f16.
const std::vector<const char*>& precision_suffixes();
// Every file name a layout may use, in preference order (what a browser probes for).
std::vector<std::string> candidate_names();
// The vocabulary files a model folder may hold, in preference order.
const std::vector<const char*>& vocabulary_names();

struct ChosenFiles {
  Family family;
  std::map<std::string, std::string> parts;  // part -> file name
};
// The first layout all of whose required parts are among `names`; nullopt when no layout has
// any; kModelNotFound naming what is missing when one is incomplete (`where` opens the message).
std::optional<ChosenFiles> choose_files(const std::string& where, const std::set<std::string>& names);
std::string required_names(const LayoutNames& layout);  // "vision-encoder.onnx, ..."

}  // namespace sam3::pure

// Which text-prompted family a set of file names holds and which file plays each part, from
// the family registry's names (pure/families.h). Pure (names only), so the native loader
// (model/layout.cpp, which lists the folder) and the browser (a File list, or the names a
// server answered for) share it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pure/families.h"

namespace sam3::pure {

// Preference when several precisions of a part sit side by side: the plain name, then int8
// (fastest on CPUs), fp32, fp16, q4f16.
const std::vector<const char*>& precision_suffixes();
// Every file name a family may use, in preference order (what a browser probes for).
std::vector<std::string> candidate_names();
// What a part's weights may be stored beside it as (ONNX external data, "<file>.data": osam's
// release): the suffixes added to the part's file name.
const std::vector<const char*>& external_data_suffixes();
// The vocabulary files a model folder may hold, in preference order.
const std::vector<const char*>& vocabulary_names();

struct ChosenFiles {
  // The first family all of whose required parts are there, then any later one whose names
  // pick the very same files (the files' I/O decides between them: build_generation).
  std::vector<const FamilyRow*> families;
  std::map<std::string, std::string> parts;  // part -> file name
};
// nullopt when no family has any of its files; kModelNotFound naming what is missing when one
// is incomplete (`where` opens the message).
std::optional<ChosenFiles> choose_files(const std::string& where, const std::set<std::string>& names);
std::string required_names(const FamilyRow& family);  // "vision-encoder.onnx, ..."
// "a.onnx, b.onnx (usls), ..., or ..." for every family: what a model folder should hold.
std::string every_family_names();

}  // namespace sam3::pure

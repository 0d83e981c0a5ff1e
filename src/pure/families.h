// The family registry: one row per SAM3 export family sam3 loads for text prompts, in the
// order they are tried. A row gives the family's stable id (Layout::id(), label records, the
// browser module's `layout`), its display name, the file names each of its parts may have,
// and the function that builds its Generation from the files' checked specs. The native
// loader (model/layout.cpp, model/text_backend.cpp), the browser module (web/sam3_wasm.cpp),
// `sam3 models inspect` and the tests (tests/pure/family_table_test.cpp: unique ids, a
// generated test model per row, the browser's type union) all read this table.
//
// Adding a family: its rules in one new file under pure/families/ (a FamilyRules subclass and
// a builder), its row in pure/families/table.cpp, its generated test model (tools/
// make_test_models.py --layout ID). Pure: standard library only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pure/generation.h"

namespace sam3::pure {

struct PartNames {
  const char* part;                // "image", "text", "decoder", "geometry"
  std::vector<const char*> stems;  // file names without ".onnx" and the precision suffix
  bool required;
};

struct FamilyRow {
  const char* id;       // stable, lowercase: what sam3 calls the family in files and APIs
  const char* display;  // what messages and `models inspect` call it
  std::vector<PartNames> parts;
  // Throws kModelMismatch naming the file, tensor, expected and found when the files do not fit.
  Generation (*build)(const PartSpecs& parts);
  bool browser;  // the browser module runs it
};

const std::vector<FamilyRow>& families();
const FamilyRow* find_family(std::string_view id);  // null when none has that id

// The first of `candidates` (rows whose names all fit the same files) whose build accepts the
// specs; when none does, the error of the last one tried (the most general: a family that
// specialises another's files comes before it in the table).
Generation build_generation(const std::vector<const FamilyRow*>& candidates, const PartSpecs& parts);

}  // namespace sam3::pure

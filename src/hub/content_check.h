// Whether a downloaded file holds what its name says: a hub or proxy that answers 200 with
// an HTML page (a login wall, an error page) must not leave that page as the model.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace sam3::hub {

// What is wrong with `file` as the kind of file `name` is (.onnx, .json, .zip, .gz, or any
// other that must at least not be a web page), or nullopt.
std::optional<std::string> content_problem(const std::string& name, const std::filesystem::path& file);

}  // namespace sam3::hub

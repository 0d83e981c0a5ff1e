// sam3 tokenize: token ids and attention mask exactly as SAM3's text encoder receives them.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "sam3/tokenizer.h"

namespace sam3::cli {
namespace {

struct TokenizeArgs {
  std::vector<std::string> texts;
  std::string jsonl;
  std::string vocab;
};

nlohmann::ordered_json tokenized_json(const ClipTokenizer& tok, const std::string& text) {
  const auto t = tok.encode(text);
  return {{"text", text}, {"ids", t.ids}, {"mask", t.mask}};
}

int run_tokenize(const TokenizeArgs& args) {
  if (args.texts.empty() && args.jsonl.empty()) {
    print_error("give one or more texts, or --jsonl FILE (or - for standard input)");
    return kUsage;
  }
  std::error_code ec;
  if (!args.jsonl.empty() && args.jsonl != "-" && std::filesystem::is_directory(args.jsonl, ec)) {
    throw Error(ErrorCode::kInvalidArgument, args.jsonl + ": is a folder; give a JSON-lines file (or - for standard input)");
  }
  const auto vocab = args.vocab.empty() ? bundled_vocabulary() : std::filesystem::path(args.vocab);
  const auto tok = ClipTokenizer::from_file(vocab);
  for (const auto& text : args.texts) std::cout << tokenized_json(tok, text).dump() << "\n";
  if (args.jsonl.empty()) return kOk;

  std::ifstream file;
  if (args.jsonl != "-") {
    file.open(args.jsonl);
    if (!file) throw Error(ErrorCode::kInvalidArgument, args.jsonl + ": cannot open the JSON-lines file");
  }
  std::istream& in = args.jsonl == "-" ? std::cin : file;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto where = (args.jsonl == "-" ? std::string("stdin") : args.jsonl) + ":" + std::to_string(number);
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string()) {
      throw Error(ErrorCode::kInvalidArgument, where + ": expected a JSON object with a \"text\" string");
    }
    try {
      std::cout << tokenized_json(tok, j["text"].get<std::string>()).dump() << "\n";
    } catch (const Error& e) {
      throw Error(e.code(), where + ": " + e.what());
    }
  }
  return kOk;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Runner& run) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "Print SAM3's CLIP token ids and mask for texts, one JSON object per line");
  cmd->add_option("texts", args->texts, "Texts to tokenize");
  cmd->add_option("--jsonl", args->jsonl, "Read JSON lines with a \"text\" field from FILE, or - for stdin");
  cmd->add_option("--vocab", args->vocab, "Vocabulary: bpe_simple_vocab_16e6.txt.gz, tokenizer.json or clip_tokenizer.json")
      ->check(CLI::ExistingFile);
  cmd->callback([args, &run] { run = [args] { return run_tokenize(*args); }; });
}

}  // namespace sam3::cli

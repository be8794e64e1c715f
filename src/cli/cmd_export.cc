#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "hetplan/deploy/generation.h"

namespace hetplan::cli {

void RegisterExport(CLI::App& app) {
  auto* sub = app.add_subcommand("export", "Hand a plan to the runtime that will run it, in that runtime's own format");
  struct Opts {
    std::string source, format, out;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("source", o->source,
                  "A generation file (partition --llm) or the folder hetplan split wrote from one")
      ->required();
  sub->add_option("--format", o->format, "ort-genai: ONNX Runtime GenAI's decoder-pipeline (genai_config.json)")
      ->required();
  sub->add_option("--out", o->out, "Folder for the runtime's files")->required();
  Register(sub, [o]() -> int {
    if (o->format != "ort-genai") {
      return ReportError(Status(ErrorCode::kInvalidArgument,
                                "export: --format '" + o->format + "' is not one hetplan writes; give ort-genai"));
    }
    auto r = ExportOrtGenai(o->source, o->out);
    if (!r.ok()) return ReportError(r.status());
    std::printf("export     ONNX Runtime GenAI decoder-pipeline: %d stages (prefill on the prompt, decode on token "
                "generation)\n", r->stages);
    for (const auto& n : r->notes) std::printf("note       %s\n", n.c_str());
    std::printf("wrote      %s/genai_config.json (max_length %lld)\n", r->out_dir.c_str(),
                static_cast<long long>(r->config["search"]["max_length"].get<int64_t>()));
    return 0;
  });
}

}  // namespace hetplan::cli

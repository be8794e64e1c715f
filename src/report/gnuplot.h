// The gnuplot plumbing every figure of the report shares (plots.cc draws the
// sweep's figures, frontier_plots.cc the frontier's). Internal to the library.
#pragma once

#include <string>

#include "hetplan/report/plots.h"
#include "hetplan/util/status.h"

namespace hetplan::report_internal {

// Colour-blind-safe (Okabe–Ito) series colours, then two greys-browns for
// long solver lists.
inline constexpr const char* kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                          "#56B4E9", "#F0E442", "#000000", "#8C564B", "#999999"};
inline constexpr int kNumColors = sizeof(kColors) / sizeof(kColors[0]);

// The i-th series colour (cycling).
std::string Color(int i);
// A gnuplot string literal (single quotes, '' for a quote).
std::string Quote(const std::string& s);
// Enhanced-text escaping for titles: _ ^ { } @ & are markup.
std::string Plain(const std::string& s);
// The whole script: `body` once per terminal (PNG, then SVG).
std::string Script(const std::string& stem, int width, int height, const std::string& body);
// Writes <stem>.dat and <stem>.gp into `dir`, runs gnuplot, checks that both
// images exist.
Result<Figure> Draw(const std::string& dir, const std::string& stem, const std::string& title,
                    const std::string& caption, const std::string& data, const std::string& script);
// A number for a data file or a table: 6 significant digits, "?" when not finite.
std::string Num(double v);

}  // namespace hetplan::report_internal

#pragma once
// The fixed parts of the sunburst page (sunburst_html.h): its style sheet, its body markup and
// its script, which reads the JSON in <script id="stacks-data"> and draws the chart in plain SVG.
namespace ptprof {

extern const char* const kSunburstCss;
extern const char* const kSunburstBody;
extern const char* const kSunburstScript;

}  // namespace ptprof

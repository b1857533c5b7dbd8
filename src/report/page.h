// The shell every report page shares (tune's, probe's and the sweep's report.html): one self-contained HTML file
// with its style inline and nothing fetched from outside, so it opens offline and from a mail attachment.
//
// The look: one column at most 1150 px wide that narrows with the window; charts (report/svg_chart.h) scale down
// to the column; wide pieces (a long timeline, a wide table) scroll sideways inside their own box, so the page
// itself never gets wider than the window. For paper: no buttons, no scroll boxes, charts kept whole on a page.
//
// Scripts: a page has none unless it holds a sortable or a paged table (report/table.h) or a copy button
// (CopyBlock); then one small inline script is added, and the page still reads without it (a paged table shows
// its first page then). Pure functions.
#pragma once

#include <string>

namespace sat::report {

// `s` with &, <, >, " escaped for HTML and XML text and attributes.
std::string XmlEscape(const std::string& s);

struct PageOptions {
  std::string title;    // the <title> (text)
  std::string heading;  // the <h1> (text)
  std::string sub_html; // under the heading, small (HTML, already escaped)
  // Reload the page every this many seconds (a report a running sweep keeps rewriting); 0: never.
  int refresh_s = 0;
  std::string footer_html;  // last, small (HTML)
};

// The whole page around `body_html`. The inline script is included when the body uses it (a table with class
// "sortable", a paged table's rows, or a button with class "copy").
std::string Page(const PageOptions& options, const std::string& body_html);

// "<h2>title</h2>": a section heading, with an id for links ("#timeline").
std::string Section(const std::string& title, const std::string& id = "");

// A figure: `content_html` (an <svg>, usually) and its caption (text).
std::string Figure(const std::string& content_html, const std::string& caption);

// A box for the verdict or recommendation at the top: `inner_html` inside; `bad` colours it as a failure.
std::string Box(const std::string& inner_html, bool bad = false);

// `content_html` in a box that scrolls sideways when wider than the window (a timeline, a wide table).
std::string Wide(const std::string& content_html);

// A command to run next, in a block a person can copy: selecting it selects the whole command, and a "copy"
// button puts it on the clipboard where the browser allows it.
std::string CopyBlock(const std::string& text);

}  // namespace sat::report

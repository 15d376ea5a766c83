/* ds-report-html.h: the profile report as one self-contained HTML page.
 *
 * The page reads the JSON report (docs/profile-report.md, version 1) and shows it for a
 * browser: the run's summary, bindings, machine, build and inputs; the top nodes, ops, regions
 * and loop bodies by time; every node coloured by time; live memory over time; and how buffers
 * reuse each other's memory. Charts are inline SVG, styles inline CSS, and a few lines of
 * inline JavaScript sort the tables; the page loads nothing from anywhere and reads the same
 * without scripts. It follows the browser's light or dark preference.
 *
 * Memory policy: nothing is kept; the caller owns `report` and `graph_svg`.
 */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

/* Writes the page for `report` (a parsed report object) to `path`, atomically: a failure
 * leaves no file and an existing one intact. `graph_svg`, if not NULL, is an `<svg>` element
 * (the model's graph with nodes coloured by time) embedded as it is; anything before its first
 * `<svg` (an XML prolog, a DOCTYPE) is dropped. Without it, the nodes coloured by time are a
 * table.
 *
 * Every string from the report is escaped: node names are untrusted. A field the page needs
 * that is missing or of the wrong type is a DS_ERROR_PARSE error "report: field 'X' is missing
 * or not a Y" (X a path such as "events[3].end_ns"), and so is another schema or version; a
 * failed write is DS_ERROR_IO naming `path`. */
gboolean ds_report_write_html(const cJSON *report, const char *graph_svg, const char *path,
                              GError **error);

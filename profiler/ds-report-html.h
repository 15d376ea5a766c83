/* ds-report-html.h: the profile report as one self-contained HTML page.
 *
 * The page shows a profile report (docs/profile-report.md, read by ds-report.h) for a browser:
 * the run's summary, bindings, machine, build and inputs; the top nodes, ops, regions and loop
 * bodies by time; every node coloured by time; live memory over time; and how buffers reuse
 * each other's memory. Charts are inline SVG, styles inline CSS, and a few lines of inline
 * JavaScript sort the tables; the page loads nothing from anywhere and reads the same without
 * scripts. It follows the browser's light or dark preference.
 *
 * Memory policy: nothing is kept; the caller owns `report` and `graph_svg`.
 */
#pragma once

#include <glib.h>

#include "ds-report.h"

/* Writes the page for `report` to `path`, atomically: a failure leaves no file and an existing
 * one intact. `graph_svg`, if not NULL, is an `<svg>` element (the model's graph with nodes
 * coloured by time) embedded as it is; anything before its first `<svg` (an XML prolog, a
 * DOCTYPE) is dropped. Without it, the nodes coloured by time are a table.
 *
 * Every string from the report is escaped: node names are untrusted. The report was checked
 * when it was read, so the only error is a failed write: DS_ERROR_IO naming `path`. */
gboolean ds_report_write_html(const DsReport *report, const char *graph_svg, const char *path,
                              GError **error);

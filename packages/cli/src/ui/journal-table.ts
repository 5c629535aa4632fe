import type { ExportedRecord } from "@fusee/runtime";
import { clip, instant } from "../data-dir.js";
import { recordFields } from "../record-text.js";
import { html, type Html } from "./html.js";
import { showRecordPayload } from "./value-view.js";

/** The full journal: every record with its position, time, kind, fields and payload as the user's types. */
export function journalTable(records: readonly ExportedRecord[]): Html {
  const counts = new Map<string, number>();
  for (const r of records) counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
  const byKind = html`<p>${[...counts].map(([kind, n], i) => html`${i > 0 ? ", " : ""}<code>${kind}</code> ${n}`)}</p>`;
  const rows = records.map(
    (r, position) =>
      html`<tr class="record" data-kind="${r.kind}"><td>${position}</td><td>${instant(r.at)}</td><td><code>${r.kind}</code></td><td class="mono">${recordFields(r)}</td><td><pre>${clip(showRecordPayload(r), 2000)}</pre></td></tr>`,
  );
  return html`${byKind}<table class="journal"><thead><tr><th>#</th><th>At</th><th>Kind</th><th>Fields</th><th>Payload</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

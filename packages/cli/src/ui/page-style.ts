/** The pages' one style sheet, sent in a `<style>` element that carries the response's nonce. */
export const PAGE_STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
nav a{margin-right:1rem}
h2{margin:1.4rem 0 .4rem}
table{border-collapse:collapse;margin-top:.75rem}
th,td{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}
code,pre,td.mono{font-family:ui-monospace,monospace;font-size:13px}
pre{margin:0;white-space:pre-wrap;word-break:break-all;max-width:60rem}
pre.stack{background:#fff5f5;border-left:3px solid #c92a2a;padding:.4rem .6rem;margin:.3rem 0}
.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:12px;line-height:1.5}
.tone-good{background:#d3f9d8;color:#17702a}.tone-live{background:#fff3bf;color:#7a5200}
.tone-quiet{background:#e9ecef;color:#495057}.tone-bad{background:#ffe3e3;color:#b3261e}
.muted{color:#777}.error{color:#b3261e}.done{color:#17702a}
.live{float:right;font-size:12px;padding:1px 6px;border-radius:8px}.live.on{background:#d3f9d8;color:#17702a}.live.off{background:#eee;color:#777}
form.filters label{margin-right:.6rem}form.filters input{width:9rem}form.filters input.narrow{width:3rem}
aside.actions{border:1px solid #e4e4e4;padding:.4rem .6rem;margin:.5rem 0;background:#fcfcfc}
aside.actions form{display:inline-block;margin:.2rem 1rem .2rem 0}aside.actions output{margin-left:.4rem}
aside.actions.unavailable{border-color:#f0c36d;background:#fffbea}
.pager a{margin-right:1rem}
ul.pending{padding-left:1.2rem}ul.pending li{margin:.3rem 0}
ul.family,ul.family ul{list-style:none;padding-left:1.2rem;margin:.2rem 0}ul.family li{margin:.15rem 0}
ul.family li.current>a{font-weight:600}
details.failure summary{cursor:pointer}
section.error-box{border:1px solid #f5c2c0;background:#fffafa;padding:.5rem .8rem;margin:.6rem 0;max-width:62rem}
table.events td.took{white-space:nowrap}
tr.open td{background:#fffbea}
svg.timeline{background:#fafafa;border:1px solid #e4e4e4;margin:.5rem 0}
svg.timeline .lane-label{font:12px ui-monospace,monospace;fill:#333}
svg.timeline .tick{stroke:#e0e0e0}svg.timeline .tick-label{font:11px system-ui;fill:#777}
svg.timeline .mark-step{fill:#3b7dd8}svg.timeline .mark-attempt{fill:#e8a33d}
svg.timeline .mark-timer{fill:#9c8ade}svg.timeline .mark-update{fill:#2f9e8f}
svg.timeline .mark-child{fill:#6c757d}svg.timeline .mark-signal{fill:#d9480f}
svg.timeline .mark-run{fill:#222}svg.timeline .failed{fill:#c92a2a}svg.timeline .open{fill-opacity:.45}
`;

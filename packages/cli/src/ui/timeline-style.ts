/** The timeline's colours, added to the page's style. */
export const TIMELINE_STYLE = `
svg.timeline{background:#fafafa;border:1px solid #e4e4e4;margin:.5rem 0}
svg.timeline .lane-label{font:12px ui-monospace,monospace;fill:#333}
svg.timeline .tick{stroke:#e0e0e0}svg.timeline .tick-label{font:11px system-ui;fill:#777}
svg.timeline .mark-step{fill:#3b7dd8}svg.timeline .mark-attempt{fill:#e8a33d}
svg.timeline .mark-timer{fill:#9c8ade}svg.timeline .mark-update{fill:#2f9e8f}
svg.timeline .mark-child{fill:#6c757d}svg.timeline .mark-signal{fill:#d9480f}
svg.timeline .mark-run{fill:#222}svg.timeline .failed{fill:#c92a2a}
`;

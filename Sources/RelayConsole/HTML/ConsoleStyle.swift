/// The console's one stylesheet, served at `/console/console.css` (the Content-Security-Policy
/// allows styles from the relay itself only, no inline ones). Readable on a phone: one column,
/// charts as wide as the screen.
enum ConsoleStyle {
    static let css = """
        :root { color-scheme: light dark; --ink: #1d2330; --muted: #5b6473; --line: #d8dce3; --bg: #ffffff; }
        @media (prefers-color-scheme: dark) { :root { --ink: #e6e9ef; --muted: #a3abb8; --line: #3a4150; --bg: #161a22; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
        header { padding: 0.75rem 1rem; border-bottom: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; }
        header p { margin: 0; }
        .brand { font-weight: 600; }
        .who { color: var(--muted); }
        nav a { margin-right: 0.75rem; }
        nav a[aria-current] { font-weight: 600; text-decoration: none; }
        .signout { margin-left: auto; }
        main { padding: 1rem; max-width: 60rem; margin: 0 auto; }
        h1 { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
        h2 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }
        .small { color: var(--muted); font-size: 0.9rem; }
        .refusal { padding: 0.75rem 1rem; border-left: 4px solid #c0392b; }
        button { font: inherit; padding: 0.4rem 0.9rem; }
        form { margin: 0.5rem 0; }
        label { display: block; margin-top: 0.4rem; }
        input[type=text], input[type=search], textarea, select { font: inherit; padding: 0.3rem; width: 100%; max-width: 40rem; display: block; margin: 0.2rem 0 0.4rem; }
        select { width: auto; }
        form.delete, form.signout { display: inline-block; margin: 0; }
        .notice { padding: 0.75rem 1rem; border-left: 4px solid #2e9d6a; }
        .entry { border-top: 1px solid var(--line); padding: 0.5rem 0; }
        .votes { margin: 0.2rem 0; }
        code { font-size: 0.95em; }
        svg.calibration { width: 100%; max-width: 22rem; height: auto; display: block; }
        svg .frame { fill: none; stroke: var(--line); } svg .diagonal { stroke: var(--muted); stroke-dasharray: 4 3; }
        svg .line { fill: none; stroke-width: 2; }
        .line.s0 { stroke: #3b6fd8; } .line.s1 { stroke: #e08a1e; } .line.s2 { stroke: #2e9d6a; } .line.s3 { stroke: #c2417a; }
        .line.s4 { stroke: #7d5bd0; } .line.s5 { stroke: #1e9bb3; } .line.s6 { stroke: #9a7b27; } .line.s7 { stroke: #7a8291; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); }
        svg.chart, svg.gauge { width: 100%; height: auto; display: block; }
        svg .axis { stroke: var(--line); }
        svg .tick { fill: var(--muted); font-size: 12px; }
        .legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.9rem; }
        .swatch { display: inline-block; width: 0.8rem; height: 0.8rem; margin-right: 0.3rem; vertical-align: -0.1rem; }
        .s0 { fill: #3b6fd8; background: #3b6fd8; } .s1 { fill: #e08a1e; background: #e08a1e; }
        .s2 { fill: #2e9d6a; background: #2e9d6a; } .s3 { fill: #c2417a; background: #c2417a; }
        .s4 { fill: #7d5bd0; background: #7d5bd0; } .s5 { fill: #1e9bb3; background: #1e9bb3; }
        .s6 { fill: #9a7b27; background: #9a7b27; } .s7 { fill: #7a8291; background: #7a8291; }
        .gauge .track { fill: var(--line); } .gauge .spent { fill: #2e9d6a; } .gauge .held { fill: #a6d8bf; }
        .gauge.near .spent { fill: #e08a1e; } .gauge.over .spent { fill: #c0392b; } .gauge .mark { stroke: var(--ink); stroke-dasharray: 3 2; }
        """
}
